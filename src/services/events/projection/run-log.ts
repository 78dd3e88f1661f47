import type { Transaction } from 'sequelize';
import type { Database } from '../../../db/database';
import { execute } from '../../../db/sql/statements';
import { onBeforeCommit } from '../../../db/sql/transaction';
import type { RunStatus } from '../../../schemas/statuses';
import { notifyLogged } from './logged';

// The run log (db/migrations/20261225000000-create-run-log.js): what a transaction that moves
// runs did, for the projector (projector.ts) to apply to the counters and the events feed.
// Every writer that moves runs keeps reporting its moves as it did (countRunMoves,
// countRunProgress, countMessageDays, the run events it records); they are summed here, per
// transaction, and appended as ONE row just before the transaction commits: one INSERT on one
// narrow table, instead of five counter upserts and the run events with their indexes.
//
// Exact: the row commits with the change or not at all, and the projector deletes it in the
// transaction that applies it. What a guard reads (the one-active-run index, the account's
// run-limit row) is never here: those stay in the writer's own transaction.

// A counter row's key and what the transaction adds to it.
export type Delta<K extends readonly string[]> = { key: K; delta: number };

export interface RunLogEntry {
  // sequence_step_days: (sequence, day, step, outcome, reason) -> runs.
  steps: Map<string, Delta<[string, string, string, string, string]>>;
  // sequence_days: (sequence, day, metric, reason) -> n.
  days: Map<string, Delta<[string, string, string, string]>>;
  // sequence_step_waiting: (sequence, step) -> runs.
  waiting: Map<string, Delta<[string, string]>>;
  // run_status_counts: status -> runs.
  statuses: Map<string, Delta<[RunStatus]>>;
  // sequence_active_runs: sequence -> active runs.
  active: Map<string, Delta<[string]>>;
  // The run events, in the order the transaction made them, each with its account.
  events: Array<{ accountId: string; type: string; data: unknown }>;
}

// As stored: a first line of JSON (the writer's time in ms, the deltas as arrays of
// [...key, delta]), then one line per run event, `account id TAB type TAB data as JSON` (JSON
// has no raw line breaks): the projector passes each event's data on as it is, never parsing it.
export interface RunLogCounters {
  at: number;
  steps?: Array<[string, string, string, string, string, number]>;
  days?: Array<[string, string, string, string, number]>;
  waiting?: Array<[string, string, number]>;
  statuses?: Array<[RunStatus, number]>;
  active?: Array<[string, number]>;
}

export interface RunLogBody extends RunLogCounters {
  events: Array<{ accountId: string; type: string; json: string }>;
}

export function parseRunLogBody(text: string): RunLogBody {
  const lines = text.split('\n');
  const counters = JSON.parse(lines[0]!) as RunLogCounters;
  const events = lines.slice(1).map((line) => {
    const first = line.indexOf('\t');
    const second = line.indexOf('\t', first + 1);
    return { accountId: line.slice(0, first), type: line.slice(first + 1, second), json: line.slice(second + 1) };
  });
  return { ...counters, events };
}

const entries = new WeakMap<Transaction, RunLogEntry>();

// The transaction's entry, begun on first use: its row is written just before the COMMIT.
export function runLogOf(db: Database, transaction: Transaction): RunLogEntry {
  let entry = entries.get(transaction);
  if (entry) return entry;
  entry = { steps: new Map(), days: new Map(), waiting: new Map(), statuses: new Map(), active: new Map(), events: [] };
  entries.set(transaction, entry);
  const written = entry;
  // Put off once more when its turn comes, so that what other end-of-transaction work reports
  // (whichever registered first) is in the row.
  onBeforeCommit(transaction, async () => onBeforeCommit(transaction, () => appendRow(db, transaction, written)));
  return entry;
}

export function addDelta<K extends readonly string[]>(map: Map<string, Delta<K>>, key: K, delta: number): void {
  if (delta === 0) return;
  const id = key.join('\n');
  const found = map.get(id);
  if (found) found.delta += delta;
  else map.set(id, { key, delta });
}

async function appendRow(db: Database, transaction: Transaction, entry: RunLogEntry): Promise<void> {
  const at = Date.now();
  const body = bodyOf(entry, at);
  if (!body) return;
  await execute(db, 'INSERT INTO run_log (created_at, body) VALUES (?, ?)', [new Date(at), body], transaction);
  transaction.afterCommit(() => notifyLogged());
}

// Null when the transaction changed nothing the projection counts (deltas that summed to 0).
function bodyOf(entry: RunLogEntry, at: number): string | null {
  const rows = <K extends readonly string[]>(map: Map<string, Delta<K>>) =>
    [...map.values()].filter(({ delta }) => delta !== 0).map(({ key, delta }) => [...key, delta] as unknown as [...K, number]);
  const counters: RunLogCounters = { at };
  const steps = rows(entry.steps);
  const days = rows(entry.days);
  const waiting = rows(entry.waiting);
  const statuses = rows(entry.statuses);
  const active = rows(entry.active);
  if (steps.length > 0) counters.steps = steps;
  if (days.length > 0) counters.days = days;
  if (waiting.length > 0) counters.waiting = waiting;
  if (statuses.length > 0) counters.statuses = statuses;
  if (active.length > 0) counters.active = active;
  if (Object.keys(counters).length === 1 && entry.events.length === 0) return null;
  return [JSON.stringify(counters), ...entry.events.map(({ accountId, type, data }) => `${accountId}\t${type}\t${JSON.stringify(data)}`)].join('\n');
}
