import type { Transaction } from 'sequelize';
import type { Database } from '../../../db/database';
import { addToCounters } from '../../../db/sql/counter-rows';
import { toDate } from '../../../db/sql/rows';
import { execute, forUpdate, select } from '../../../db/sql/statements';
import { withTransaction } from '../../../db/sql/transaction';
import { insertEvents } from '../record-events';
import { parseRunLogBody, type RunLogBody } from './run-log';

// The projector: applies run log rows (run-log.ts) to what is projected from them (the
// analytics counters, the runs-by-status and active-runs gauges, the run events of the events
// feed) and deletes them, all in one transaction. So each row counts exactly once: a projector
// that dies rolls back and its rows are there for the next one.
//
// One projector at a time, in any number of processes: each holds the `projections` row's lock
// for its transaction (the projection's lease; the database ends it with the transaction or the
// connection, never a timer). Rows are applied in seq order. A run's rows are in its order: its
// next change is made by a writer that locked the run (or its contact) after the previous one
// committed, so its row has a higher seq and cannot be visible before the earlier one is.
// Changes that do not conflict may be applied in another order than they committed; the
// counters are sums, and their events are of other runs.

// Rows per projection transaction: a full engine pass is one row (up to its batch of 500 runs).
export const PROJECTION_BATCH = 20;
// Events per INSERT (the bound values' limit of SQLite and of MySQL's prepared statements).
const EVENTS_PER_INSERT = 2_000;

export interface Projected {
  // Rows applied.
  rows: number;
  // Each applied row's writer time (ms since the epoch, the writer's clock): the lag is from it.
  writtenAt: number[];
  // Rows are left to apply: the caller looks again at once.
  more: boolean;
}

export async function projectRunLog(db: Database, limit = PROJECTION_BATCH): Promise<Projected> {
  return withTransaction(db, async (transaction) => {
    await lockProjection(db, transaction);
    const rows = await select<{ seq: number | string; created_at: unknown; body: string }>(
      db,
      `SELECT seq, created_at, body FROM run_log ORDER BY seq LIMIT ${limit + 1}`,
      [],
      transaction,
    );
    const taken = rows.slice(0, limit);
    if (taken.length === 0) return { rows: 0, writtenAt: [], more: false };
    const bodies = taken.map((row) => ({ ...parseRunLogBody(row.body), at: toDate(row.created_at).getTime() }));
    await applyCounters(db, transaction, bodies);
    await applyEvents(db, transaction, bodies);
    const seqs = taken.map((row) => Number(row.seq));
    await execute(db, 'DELETE FROM run_log WHERE seq IN (?)', [seqs], transaction);
    await execute(db, "UPDATE projections SET projected_seq = ?, projected_at = ? WHERE name = 'runs'", [seqs.at(-1), new Date()], transaction);
    return { rows: taken.length, writtenAt: bodies.map((body) => body.at), more: rows.length > limit };
  });
}

// The projection's lease: its row, locked until this transaction ends (made again if it went).
async function lockProjection(db: Database, transaction: Transaction): Promise<void> {
  const lock = () => select(db, `SELECT projected_seq FROM projections WHERE name = 'runs'${forUpdate(db)}`, [], transaction);
  if ((await lock()).length > 0) return;
  const onConflict = db.dialect === 'sqlite' ? 'ON CONFLICT (name) DO NOTHING' : 'ON DUPLICATE KEY UPDATE name = name';
  await execute(db, `INSERT INTO projections (name, projected_seq) VALUES ('runs', 0) ${onConflict}`, [], transaction);
  await lock();
}

// The deltas of every row summed, one upsert per table (tables in one order, rows in key order:
// counter-rows.ts).
async function applyCounters(db: Database, transaction: Transaction, bodies: readonly RunLogBody[]): Promise<void> {
  const sum = (pick: (body: RunLogBody) => ReadonlyArray<ReadonlyArray<string | number>> | undefined) => {
    const totals = new Map<string, { key: Array<string | number>; delta: number }>();
    for (const body of bodies) {
      for (const row of pick(body) ?? []) {
        const key = row.slice(0, -1) as Array<string | number>;
        const id = key.join('\n');
        const found = totals.get(id);
        if (found) found.delta += Number(row.at(-1));
        else totals.set(id, { key, delta: Number(row.at(-1)) });
      }
    }
    return [...totals.values()];
  };
  const shard0 = (rows: Array<{ key: Array<string | number>; delta: number }>) => rows.map(({ key, delta }) => ({ key: [...key, 0], delta }));
  await addToCounters(db, transaction, 'sequence_step_days', ['sequence_id', 'day', 'step_id', 'outcome', 'reason'], 'runs', sum((body) => body.steps));
  await addToCounters(db, transaction, 'sequence_days', ['sequence_id', 'day', 'metric', 'reason'], 'n', sum((body) => body.days));
  await addToCounters(db, transaction, 'sequence_step_waiting', ['sequence_id', 'step_id', 'shard'], 'runs', shard0(sum((body) => body.waiting)));
  await addToCounters(db, transaction, 'run_status_counts', ['status', 'shard'], 'runs', shard0(sum((body) => body.statuses)));
  await addToCounters(db, transaction, 'sequence_active_runs', ['sequence_id', 'shard'], 'runs', shard0(sum((body) => body.active)));
}

// Each account's run events in the rows' order, numbered now; accounts in one order (the
// counter rows' locks, as every writer takes them).
async function applyEvents(db: Database, transaction: Transaction, bodies: readonly RunLogBody[]): Promise<void> {
  const byAccount = new Map<string, Array<{ type: string; data: null; json: string; createdAt: Date }>>();
  for (const body of bodies) {
    const createdAt = new Date(body.at);
    for (const { accountId, type, json } of body.events) {
      let list = byAccount.get(accountId);
      if (!list) byAccount.set(accountId, (list = []));
      list.push({ type, data: null, json, createdAt });
    }
  }
  for (const accountId of [...byAccount.keys()].sort()) {
    const events = byAccount.get(accountId)!;
    for (let start = 0; start < events.length; start += EVENTS_PER_INSERT) {
      await insertEvents(db, accountId, events.slice(start, start + EVENTS_PER_INSERT), transaction);
    }
  }
}
