import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { ACTIVE_RUN_STATUSES, type RunStatus } from '../../schemas/statuses';
import type { ListedRunDto } from '../../schemas/sequence';
import { findContactRow } from '../contacts/find-contact';
import type { CursorScope } from '../lists/cursor';
import { afterPosition, orderBy, readThrough, startPosition, toPage, type Page, type PageRequest } from '../lists/keyset';
import { requireSequence } from './find-sequence';
import { activeRun, runFromRow, type RunRow } from '../runs/runs';
import { runsWaiting, WAITING_COLUMNS, type WaitingRow } from './run-waiting';

// GET /sequences/{id}/runs and GET /contacts/{id}/runs: newest first by (created_at, id).
// The owner is checked first (404 as on every route of it); its runs are then read through
// (sequence_id | contact_id, created_at, id), with status or active as an equality in front of
// the order for a sequence (db/migrations/20261202000000-create-list-indexes.js).

export interface RunFilters {
  status?: RunStatus;
  active?: boolean;
}

interface ListedRunRow extends RunRow, WaitingRow {
  sequence_id: string;
}

const ACTIVE_STATUSES_SQL = `(${ACTIVE_RUN_STATUSES.map((s) => `'${s}'`).join(', ')})`;

// `now` decides whether a step not yet begun is due now or held for the sending window.
export async function listSequenceRuns(
  db: Database,
  input: { accountId: string; sequenceId: string } & RunFilters & PageRequest,
  now: Date = new Date(),
): Promise<Page<ListedRunDto>> {
  const sequenceId = await requireSequence(db, { accountId: input.accountId, sequenceId: input.sequenceId, mustBeActive: false });
  return listRuns(db, { ...input, owner: 'sequence_id', ownerId: sequenceId, list: 'sequences.runs' }, now);
}

export async function listContactRuns(
  db: Database,
  input: { accountId: string; contactId: string } & RunFilters & PageRequest,
  now: Date = new Date(),
): Promise<Page<ListedRunDto>> {
  const contact = await findContactRow(db, { accountId: input.accountId, id: input.contactId });
  return listRuns(db, { ...input, owner: 'contact_id', ownerId: contact.id, list: 'contacts.runs' }, now);
}

async function listRuns(
  db: Database,
  input: { accountId: string; owner: 'sequence_id' | 'contact_id'; ownerId: string; list: string } & RunFilters & PageRequest,
  now: Date,
): Promise<Page<ListedRunDto>> {
  const scope: CursorScope = {
    list: input.list,
    accountId: input.accountId,
    filters: { owner: input.ownerId, status: input.status, active: input.active },
  };
  const after = afterPosition('created_at', 'id', 'DESC', startPosition(scope, input));
  const conditions = [`${input.owner} = ?`, 'account_id = ?'];
  const values: unknown[] = [input.ownerId, input.accountId];
  if (input.status) {
    conditions.push('status = ?');
    values.push(input.status);
  }
  if (input.active === true) conditions.push(activeRun(db));
  if (input.active === false) conditions.push(`status NOT IN ${ACTIVE_STATUSES_SQL}`);
  const rows = await select<ListedRunRow>(
    db,
    `SELECT id, sequence_id, contact_id, status, started_at, completed_at, created_at, version, current_step_id, reason, ${WAITING_COLUMNS}` +
      ` FROM ${readThrough(db, 'sequence_runs', 'r', runsIndex(input))} WHERE ${conditions.join(' AND ')}${after.sql}${orderBy('created_at', 'id', 'DESC')} LIMIT ?`,
    [...values, ...after.values, input.limit + 1],
  );
  const waiting = await runsWaiting(db, rows.slice(0, input.limit), now);
  return toPage(scope, input, rows, {
    position: (row) => ({ at: row.created_at, id: row.id }),
    item: (row) => ({ ...runFromRow(row), sequenceId: row.sequence_id, contactId: row.contact_id, ...waiting.get(row.id)! }),
  });
}

// A contact's runs are few: its walk checks the filters. A sequence's may be many: a status, or
// being active, is an equality in front of the order.
function runsIndex(input: { owner: 'sequence_id' | 'contact_id' } & RunFilters): string {
  if (input.owner === 'contact_id') return 'sequence_runs_contact_created';
  if (input.status) return 'sequence_runs_sequence_status_created';
  if (input.active === true) return 'sequence_runs_sequence_active_created';
  return 'sequence_runs_sequence_created';
}
