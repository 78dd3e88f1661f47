import type { Database } from '../../db/database';
import { parseJson, toIso } from '../../db/sql/rows';
import type { Entry, ExitRule, Goal, SendingWindow, Step } from '../../schemas/sequence-definition';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
import type { SequenceStatus } from '../../schemas/statuses';
import type { SequenceDto } from '../../schemas/sequence';
import { normalizeId } from '../ids';
import type { CursorScope } from '../lists/cursor';
import { afterPosition, orderBy, readThrough, startPosition, toPage, type Page, type PageRequest } from '../lists/keyset';
import { activeRunsBySequence } from '../run-status/run-status-counts';
import { readVersions, versionKey } from '../runs/sequence-versions';

// GET /sequences and GET /sequences/{id}: newest first by (created_at, id). Without a status
// the list leaves archived sequences out (docs/decisions.md "Deleting and archiving
// sequences"), through an index of the others; with one, through (account_id, status,
// created_at, id) (db/migrations/20261209000000-create-sequences-listed-index.js). activeRuns
// is read for the page's sequences in one statement, from the sequences' active-run counters.

interface SequenceRow {
  id: string;
  name: string;
  status: string;
  version: number | string | null;
  exit_when: string | null;
  sending_window: string | null;
  entry: string | null;
  goal: string | null;
  created_at: unknown;
  updated_at: unknown;
}

const COLUMNS = 'SELECT id, name, status, version, exit_when, sending_window, entry, goal, created_at, updated_at';
const SELECT = `${COLUMNS} FROM sequences`;

export async function listSequences(
  db: Database,
  input: { accountId: string; status?: SequenceStatus } & PageRequest,
): Promise<Page<SequenceDto>> {
  const scope: CursorScope = { list: 'sequences', accountId: input.accountId, filters: { status: input.status } };
  const after = afterPosition('created_at', 'id', 'DESC', startPosition(scope, input));
  const filter = input.status
    ? { sql: ' AND status = ?', values: [input.status], index: 'sequences_account_status_created' }
    : { sql: ` AND ${notArchived(db)}`, values: [], index: 'sequences_account_listed_created' };
  const rows = await select<SequenceRow>(
    db,
    `${COLUMNS} FROM ${readThrough(db, 'sequences', 's', filter.index)}` +
      ` WHERE account_id = ?${filter.sql}${after.sql}${orderBy('created_at', 'id', 'DESC')} LIMIT ?`,
    [input.accountId, ...filter.values, ...after.values, input.limit + 1],
  );
  const page = toPage(scope, input, rows, { position: (row) => ({ at: row.created_at, id: row.id }), item: (row) => row });
  const counts = await activeRunCounts(db, page.items.map((row) => row.id));
  const steps = await stepsOf(db, page.items);
  return { items: page.items.map((row) => toSequenceDto(row, counts.get(row.id) ?? 0, steps)), nextCursor: page.nextCursor };
}

export async function getSequence(db: Database, input: { accountId: string; id: string }): Promise<SequenceDto> {
  const id = normalizeId(input.id);
  const [row] = id ? await select<SequenceRow>(db, `${SELECT} WHERE id = ? AND account_id = ?`, [id, input.accountId]) : [];
  if (!row) throw new NotFoundError('Sequence');
  const counts = await activeRunCounts(db, [row.id]);
  return toSequenceDto(row, counts.get(row.id) ?? 0, await stepsOf(db, [row]));
}

// "Not archived", in the form each database's index serves: the generated listed_flag on
// MySQL, the partial index's own predicate on SQLite.
function notArchived(db: Database): string {
  return db.dialect === 'sqlite' ? "status <> 'archived'" : 'listed_flag = 1';
}

// From the counters every move of a run keeps (src/services/run-status/run-status-counts.ts):
// a sequence of a million active runs costs its 16 counter rows, not a count of a million.
function activeRunCounts(db: Database, sequenceIds: readonly string[]): Promise<Map<string, number>> {
  return activeRunsBySequence(db, sequenceIds);
}

// The current version's steps of each sequence, in one statement for those not read before.
async function stepsOf(db: Database, rows: readonly SequenceRow[]): Promise<Map<string, Step[]>> {
  const wanted = rows.filter((row) => row.version !== null).map((row) => ({ sequenceId: row.id, version: Number(row.version) }));
  return wanted.length === 0 ? new Map() : readVersions(db, wanted);
}

export function readRules(row: { exit_when: unknown; sending_window: unknown }): { exitWhen: ExitRule[]; sendingWindow: SendingWindow | null } {
  return {
    exitWhen: row.exit_when ? parseJson<ExitRule[]>(row.exit_when) : [],
    sendingWindow: row.sending_window ? parseJson<SendingWindow>(row.sending_window) : null,
  };
}

function toSequenceDto(row: SequenceRow, activeRuns: number, steps: Map<string, Step[]>): SequenceDto {
  const version = row.version === null ? null : Number(row.version);
  return {
    id: row.id,
    name: row.name,
    status: row.status as SequenceStatus,
    activeRuns,
    version,
    steps: version === null ? [] : (steps.get(versionKey(row.id, version)) ?? []),
    ...readRules(row),
    entry: row.entry ? parseJson<Entry>(row.entry) : null,
    goal: row.goal ? parseJson<Goal>(row.goal) : null,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}
