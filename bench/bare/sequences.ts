import { v7 as uuidv7 } from 'uuid';
import { toIso, toIsoOrNull } from '../../src/db/sql/rows';
import type { ContactFields } from '../../src/schemas/contact';
import { findContactRow, lockContactsById, normalizeId, upsertContacts } from './contacts';
import { runCreatedEvent, runStatusChangedEvent } from '../../src/services/events/run-events';
import type { RunStatus } from '../../src/schemas/statuses';
import { recordEvents } from './events';
import { HttpError } from './http-error';
import { marks, sqlTimestamp, type Sql, type Tx } from './sql';

// The sequence operations of src/services/sequences, statement for statement, on bare mysql2.

const ACTIVE_STATUSES = ['pending', 'running', 'paused'];
const RUN_SELECT = 'SELECT id, contact_id, status, started_at, completed_at, created_at FROM sequence_runs';
const RUN_COLUMNS = 'id, account_id, sequence_id, contact_id, status, started_at, completed_at, created_at, updated_at';
const INSERT_ENROLLMENT =
  'INSERT INTO enrollments (id, account_id, sequence_id, status, total_contacts, successful_enrollments, ' +
  `failed_enrollments, skipped_duplicates, created_at, updated_at) VALUES (${marks(10)})`;

interface RunRow {
  id: string;
  contact_id: string;
  status: string;
  started_at: unknown;
  completed_at: unknown;
  created_at: unknown;
}

function runFromRow(row: RunRow) {
  return {
    id: row.id,
    status: row.status,
    startedAt: toIso(row.started_at),
    completedAt: toIsoOrNull(row.completed_at),
    createdAt: toIso(row.created_at),
  };
}

async function requireSequence(sql: Sql, accountId: string, sequenceId: string, mustBeActive: boolean, tx?: Tx) {
  const id = normalizeId(sequenceId);
  const lock = mustBeActive && tx ? ' LOCK IN SHARE MODE' : '';
  const [sequence] = id
    ? await sql.rows<{ id: string; status: string }>(
        `SELECT id, status FROM sequences WHERE id = ? AND account_id = ?${lock}`,
        [id, accountId],
        tx,
      )
    : [];
  if (!sequence) throw new HttpError(404, 'Sequence not found');
  if (mustBeActive && sequence.status !== 'active') throw new HttpError(409, 'Sequence is not active', undefined, 'sequence_not_active');
  return sequence.id;
}

async function remainingRunCapacity(sql: Sql, accountId: string, tx: Tx) {
  const readLimit = async () => {
    const [account] = await sql.rows<{ max_active_runs: number | null }>(
      'SELECT max_active_runs FROM accounts WHERE id = ?',
      [accountId],
      tx,
    );
    return account?.max_active_runs ?? null;
  };
  let limit = await readLimit();
  if (limit === null) return null;
  await sql.run('INSERT INTO run_limit_locks (id) VALUES (?) ON DUPLICATE KEY UPDATE id = id', [accountId], tx);
  limit = await readLimit();
  if (limit === null) return null;
  const [{ active }] = await sql.rows<{ active: number | string }>(
    'SELECT COUNT(*) AS active FROM sequence_runs WHERE account_id = ? AND active_flag = 1',
    [accountId],
    tx,
  );
  return { remaining: Math.max(0, Number(limit) - Number(active)), limit: Number(limit) };
}

async function contactsWithActiveRun(sql: Sql, sequenceId: string, contactIds: readonly string[], tx: Tx) {
  if (contactIds.length === 0) return new Set<string>();
  const rows = await sql.rows<{ contact_id: string }>(
    `SELECT contact_id FROM sequence_runs WHERE sequence_id = ? AND contact_id IN (${marks(contactIds.length)}) AND active_flag = 1`,
    [sequenceId, ...contactIds],
    tx,
  );
  return new Set(rows.map((row) => row.contact_id));
}

async function startRuns(sql: Sql, accountId: string, sequenceId: string, contactIds: readonly string[], tx: Tx) {
  if (contactIds.length === 0) return new Map<string, ReturnType<typeof runFromRow>>();
  const startedAt = new Date();
  const now = sqlTimestamp(startedAt);
  const proposed = [...contactIds].sort().map((contactId) => ({ contactId, runId: uuidv7() }));
  await sql.run(
    `INSERT INTO sequence_runs (${RUN_COLUMNS}) VALUES ${proposed.map(() => `(${marks(9)})`).join(', ')} ON DUPLICATE KEY UPDATE id = id`,
    proposed.flatMap(({ contactId, runId }) => [runId, accountId, sequenceId, contactId, 'pending', now, null, now, now]),
    tx,
  );
  const inserted = await sql.rows<{ id: string; contact_id: string }>(
    `SELECT id, contact_id FROM sequence_runs WHERE id IN (${marks(proposed.length)})`,
    proposed.map((p) => p.runId),
    tx,
  );
  return new Map(
    inserted.map((row) => [
      row.contact_id,
      runFromRow({ id: row.id, contact_id: row.contact_id, status: 'pending', started_at: startedAt, completed_at: null, created_at: startedAt }),
    ]),
  );
}

// run.created for each run started, in contact id order (src/services/runs/runs.ts).
function runsCreatedEvents(sequenceId: string, started: Map<string, ReturnType<typeof runFromRow>>) {
  return [...started.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([contactId, run]) => runCreatedEvent(run as Parameters<typeof runCreatedEvent>[0], sequenceId, contactId));
}

export function trigger(sql: Sql, accountId: string, sequenceId: string, contact: ContactFields) {
  return sql.transaction(async (tx) => {
    const id = await requireSequence(sql, accountId, sequenceId, true, tx);
    const capacity = await remainingRunCapacity(sql, accountId, tx);
    const upserted = await upsertContacts(sql, accountId, [contact], tx);
    const contactId = upserted.results[0].contact.id;
    const { outcome, events } = await startRun(sql, accountId, id, contactId, capacity, tx);
    await recordEvents(sql, tx, accountId, [...upserted.events, ...events]);
    return outcome;
  });
}

async function startRun(
  sql: Sql,
  accountId: string,
  id: string,
  contactId: string,
  capacity: { remaining: number; limit: number } | null,
  tx: Tx,
) {
  const none = { events: [] as ReturnType<typeof runsCreatedEvents> };
  const active = await contactsWithActiveRun(sql, id, [contactId], tx);
  if (active.has(contactId)) return { outcome: { enrolled: false, reason: 'active_run_exists', contactId }, ...none };
  if (capacity && capacity.remaining === 0) {
    return {
      outcome: {
        enrolled: false,
        reason: 'sequence_limit_reached',
        message: `The account has reached its limit of active runs (${capacity.limit})`,
        contactId,
      },
      ...none,
    };
  }
  const started = await startRuns(sql, accountId, id, [contactId], tx);
  const run = started.get(contactId);
  if (!run) return { outcome: { enrolled: false, reason: 'active_run_exists', contactId }, ...none };
  return { outcome: { enrolled: true, contactId, runId: run.id }, events: runsCreatedEvents(id, started) };
}

export function enrollByIds(sql: Sql, accountId: string, sequenceId: string, contactIds: readonly string[]) {
  const ids = [...new Set(contactIds.map((id) => id.toLowerCase()))];
  return sql.transaction(async (tx) => {
    const id = await requireSequence(sql, accountId, sequenceId, true, tx);
    const capacity = await remainingRunCapacity(sql, accountId, tx);
    const existing = await lockContactsById(sql, accountId, ids, tx);
    const active = await contactsWithActiveRun(sql, id, [...existing], tx);
    const candidates = ids.filter((contactId) => existing.has(contactId) && !active.has(contactId));
    const allowed = capacity ? candidates.slice(0, capacity.remaining) : candidates;
    const started = await startRuns(sql, accountId, id, allowed, tx);
    const successful = started.size;
    const failed = ids.length - existing.size + (candidates.length - allowed.length);
    const skipped = ids.length - successful - failed;
    const enrollment = {
      id: uuidv7(),
      sequenceId: id,
      status: 'completed',
      totalContacts: ids.length,
      successfulEnrollments: successful,
      failedEnrollments: failed,
      skippedDuplicates: skipped,
    };
    const now = sqlTimestamp(new Date());
    await sql.run(
      INSERT_ENROLLMENT,
      [enrollment.id, accountId, id, 'completed', ids.length, successful, failed, skipped, now, now],
      tx,
    );
    await recordEvents(sql, tx, accountId, runsCreatedEvents(id, started));
    return { enrollment, summary: { processed: ids.length, successful, failed, skipped } };
  });
}

export function unenroll(sql: Sql, accountId: string, sequenceId: string, contactIds: readonly string[]) {
  const ids = [...new Set(contactIds.map((id) => id.toLowerCase()))];
  return sql.transaction(async (tx) => {
    const id = await requireSequence(sql, accountId, sequenceId, false, tx);
    const contacts = await lockContactsById(sql, accountId, ids, tx);
    if (contacts.size === 0) return { cancelled: 0, contactIds: [] };
    const runs = await sql.rows<RunRow>(
      `${RUN_SELECT} FORCE INDEX (sequence_runs_one_active)
        WHERE sequence_id = ? AND account_id = ? AND contact_id IN (${marks(contacts.size)}) AND active_flag = 1 FOR UPDATE`,
      [id, accountId, ...contacts],
      tx,
    );
    if (runs.length > 0) {
      const cancelledAt = new Date();
      const now = sqlTimestamp(cancelledAt);
      await sql.run(
        `UPDATE sequence_runs SET status = 'cancelled', completed_at = ?, updated_at = ? WHERE id IN (${marks(runs.length)})`,
        [now, now, ...runs.map((run) => run.id)],
        tx,
      );
      const events = [...runs]
        .sort((a, b) => (a.contact_id < b.contact_id ? -1 : 1))
        .map((run) =>
          runStatusChangedEvent(
            runFromRow({ ...run, status: 'cancelled', completed_at: cancelledAt }) as Parameters<typeof runStatusChangedEvent>[0],
            id,
            run.contact_id,
            run.status as RunStatus,
          ),
        );
      await recordEvents(sql, tx, accountId, events);
    }
    const cancelled = new Set(runs.map((run) => run.contact_id));
    const listed = ids.filter((contactId) => cancelled.has(contactId));
    return { cancelled: listed.length, contactIds: listed };
  });
}

export async function enrollmentStatus(sql: Sql, accountId: string, sequenceId: string, contactId: string) {
  const id = await requireSequence(sql, accountId, sequenceId, false);
  const contact = await findContactRow(sql, accountId, contactId);
  const [latest] = await sql.rows<RunRow>(
    `${RUN_SELECT} WHERE sequence_id = ? AND contact_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
    [id, contact.id],
  );
  if (!latest) return { enrolled: false, run: null };
  return { enrolled: ACTIVE_STATUSES.includes(latest.status), run: runFromRow(latest) };
}
