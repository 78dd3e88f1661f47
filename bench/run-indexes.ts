import { randomUUID } from 'node:crypto';
import type { Connection } from 'mysql2/promise';
import { openDatabase, prepareDatabase } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrator';
import { createAccount } from '../src/services/accounts';
import { createSequence } from '../src/services/sequences/sequence-admin';
import { ensureNumbers, idOf, seedContacts, seedRuns, type SeededContacts } from './engine/seed';
import { openBenchDatabase } from './lib/database';
import { table } from './lib/report';
import { numberFrom } from './lib/settings';

// `npm run bench:run-indexes`: every statement the service sends to sequence_runs and
// run_step_executions, EXPLAINed on MariaDB over a seeded account (BENCH_INDEX_RUNS runs, 300,000
// by default: ended, waiting, due, paused and set aside, with two executions each for a third of
// them), and the secondary indexes each one reads. The list in docs/architecture.md ("The
// indexes of sequence_runs") comes from its output; an index no statement reads is dropped
// (db/migrations/20261211000400-drop-unused-run-indexes.js).
//
// The statements are written out here as the code sends them (the file named beside each):
// a change there should be made here too.

const RUNS = numberFrom('BENCH_INDEX_RUNS', 300_000);

const out = (text = '') => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`bench: ${text}\n`);

interface Statement {
  source: string;
  sql: string;
  values: unknown[];
}

async function main() {
  const database = await openBenchDatabase();
  const db = openDatabase(database.url);
  await prepareDatabase(db);
  await migrateToLatest(db);
  await ensureNumbers(database.admin);
  const admin = database.admin;
  const account = await createAccount(db, { name: `bench indexes ${randomUUID()}`, maxActiveRuns: null });
  const steps = [{ id: 'w', type: 'wait' as const, duration: 'P3D' }, { id: 'mark', type: 'tag' as const, add: ['x'] }];
  const big = (await createSequence(db, { accountId: account.id, name: 'big', status: 'active', steps })).id;
  const other = (await createSequence(db, { accountId: account.id, name: 'other', status: 'active', steps })).id;
  progress(`seeding ${RUNS} runs`);
  const contacts = await seedContacts(admin, account.id, RUNS);
  const now = new Date();
  const prefix = await seedRuns(admin, { accountId: account.id, sequenceId: big, contacts, count: RUNS, stepId: 'w', state: 'waiting', dueAt: new Date(now.getTime() + 3 * 86_400_000), stepMicros: 1 });
  await seedRuns(admin, { accountId: account.id, sequenceId: other, contacts, count: Math.floor(RUNS / 10), stepId: 'mark', state: 'due', dueAt: now });
  // Of the big sequence's runs: half ended long ago, a tenth due now, a tenth paused, a tenth set aside.
  const part = (from: number, to: number) => `id >= '${idOf(prefix, Math.floor(RUNS * from))}' AND id < '${idOf(prefix, Math.floor(RUNS * to))}'`;
  await admin.query(`UPDATE sequence_runs SET status = 'completed', current_step_id = NULL, due_at = NULL, step_started_at = NULL, completed_at = DATE_SUB(?, INTERVAL 100 DAY) WHERE ${part(0, 0.5)}`, [now]);
  await admin.query(`UPDATE sequence_runs SET status = 'pending', current_step_id = 'mark', step_started_at = NULL, due_at = ? WHERE ${part(0.5, 0.6)}`, [now]);
  await admin.query(`UPDATE sequence_runs SET status = 'paused', paused_due_at = due_at, due_at = NULL WHERE ${part(0.6, 0.7)}`);
  await admin.query(`UPDATE sequence_runs SET due_at = NULL, current_step_id = 'mark', step_started_at = NULL WHERE ${part(0.7, 0.8)}`);
  await admin.query(
    `INSERT INTO run_step_executions (id, account_id, run_id, visit, attempt, step_id, type, status, started_at, finished_at)
     SELECT CONCAT('e', k.n, SUBSTRING(id, 3)), account_id, id, k.n, 1, 'w', 'wait', 'succeeded', ?, ?
     FROM sequence_runs, (SELECT 1 AS n UNION ALL SELECT 2) k WHERE sequence_id = ? AND ${part(0.3, 0.63)}`,
    [now, now, big],
  );
  await admin.query('ANALYZE TABLE sequence_runs, run_step_executions');
  const [[sample]] = (await admin.query(`SELECT id, contact_id FROM sequence_runs WHERE ${part(0.55, 0.56)} LIMIT 1`)) as unknown as [[{ id: string; contact_id: string }]];
  const runIds = ((await admin.query(`SELECT id FROM sequence_runs WHERE ${part(0.5, 0.6)} LIMIT 500`)) as unknown as [[{ id: string }]])[0].map((row) => row.id);
  const contactIds = runIds.slice(0, 100).map((_, i) => idOf(contacts.prefix, Math.floor(RUNS * 0.5) + i));
  const statements = statementsOf({ accountId: account.id, big, other, sample, runIds, contactIds, now, contacts });

  out('# EXPLAIN of every statement on sequence_runs and run_step_executions (MariaDB)');
  out();
  out(`${RUNS} runs in one sequence (half ended, a tenth each due, paused, set aside, the rest waiting), ${Math.floor(RUNS / 10)} due in another; ${Math.round(RUNS * 0.66)} executions.`);
  out();
  const used = new Map<string, string[]>();
  const rows: string[][] = [];
  for (const statement of statements) {
    const [plan] = (await admin.query(`EXPLAIN ${statement.sql}`, statement.values)) as unknown as [Array<Record<string, unknown>>];
    // MIN(due_at) is answered from the index's first entry: "Select tables optimized away".
    const reads = plan
      .map((row) => (row.table === null && /optimized away/.test(String(row.Extra)) ? { ...row, table: 'sequence_runs', type: 'MIN from the index', key: 'sequence_runs_due', rows: 1 } : row))
      .filter((row) => row.table === 'sequence_runs' || row.table === 'r' || row.table === 'run_step_executions' || row.table === 'e');
    for (const row of reads) {
      const key = String(row.key ?? 'none');
      used.set(key, [...(used.get(key) ?? []), statement.source]);
    }
    rows.push([statement.source, reads.map((row) => `${row.table}: ${row.type} on ${row.key ?? '-'} (${row.rows} rows${row.Extra ? `; ${row.Extra}` : ''})`).join(' / ')]);
  }
  out(table(['statement', 'plan'], rows));
  out();
  const [indexes] = (await admin.query(
    `SELECT TABLE_NAME AS t, INDEX_NAME AS i, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS cols FROM information_schema.STATISTICS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('sequence_runs', 'run_step_executions') AND INDEX_NAME <> 'PRIMARY'
     GROUP BY TABLE_NAME, INDEX_NAME ORDER BY TABLE_NAME, INDEX_NAME`,
  )) as unknown as [Array<{ t: string; i: string; cols: string }>];
  out(table(['table', 'index', 'columns', 'read by'], indexes.map((index) => [index.t, index.i, index.cols, [...new Set(used.get(index.i) ?? [])].join(', ') || 'NONE'])));
  await db.close();
  await database.close();
}

function statementsOf(s: {
  accountId: string;
  big: string;
  other: string;
  sample: { id: string; contact_id: string };
  runIds: string[];
  contactIds: string[];
  now: Date;
  contacts: SeededContacts;
}): Statement[] {
  const { accountId, big, sample, runIds, contactIds, now } = s;
  const active = 'active_flag = 1';
  const old = new Date(now.getTime() - 90 * 86_400_000);
  return [
    { source: 'claimDueRuns (run-queue.ts)', sql: 'SELECT id, due_at FROM sequence_runs WHERE due_at <= ? ORDER BY due_at LIMIT 500 FOR UPDATE SKIP LOCKED', values: [now] },
    { source: 'nextDueAt (run-queue.ts)', sql: 'SELECT MIN(due_at) AS due_at FROM sequence_runs', values: [] },
    { source: 'loadClaimedRuns (run-queue.ts)', sql: 'SELECT r.id FROM sequence_runs r JOIN sequences s ON s.id = r.sequence_id JOIN contacts c ON c.id = r.contact_id WHERE r.id IN (?) AND r.claim_token = ? AND r.current_step_id IS NOT NULL', values: [runIds, 'x'] },
    { source: 'lockClaimedRuns (run-queue.ts), and the claim/record/release UPDATEs by id', sql: 'SELECT id, status FROM sequence_runs WHERE id IN (?) AND claim_token = ? FOR UPDATE', values: [runIds, 'x'] },
    { source: 'startRuns read-back (runs.ts)', sql: 'SELECT id, contact_id FROM sequence_runs WHERE id IN (?)', values: [runIds] },
    { source: 'contactsWithActiveRun (runs.ts)', sql: `SELECT contact_id FROM sequence_runs WHERE sequence_id = ? AND contact_id IN (?) AND ${active}`, values: [big, contactIds] },
    { source: 'remainingRunCapacity (runs.ts), account usage', sql: `SELECT COUNT(*) AS active FROM sequence_runs WHERE account_id = ? AND ${active}`, values: [accountId] },
    { source: 'enrollmentStatus (enrollment-status.ts)', sql: 'SELECT id, status FROM sequence_runs WHERE sequence_id = ? AND contact_id = ? ORDER BY created_at DESC, id DESC LIMIT 1', values: [big, sample.contact_id] },
    { source: 'unenroll (unenroll.ts)', sql: `SELECT id FROM sequence_runs FORCE INDEX (sequence_runs_one_active) WHERE sequence_id = ? AND account_id = ? AND contact_id IN (?) AND ${active} FOR UPDATE`, values: [big, accountId, contactIds] },
    { source: 'cancelRunsOnExit lock (cancel-on-exit.ts)', sql: "SELECT id FROM sequence_runs WHERE contact_id IN (?) AND status IN ('pending', 'running', 'paused') FOR UPDATE", values: [contactIds] },
    { source: 'cancelRunsOnExit read (cancel-on-exit.ts)', sql: "SELECT r.id FROM sequence_runs r JOIN sequences s ON s.id = r.sequence_id WHERE r.contact_id IN (?) AND r.status IN ('pending', 'running', 'paused') AND s.exit_when IS NOT NULL", values: [contactIds] },
    { source: 'countRunsDeletedWithContact (run-status-counts.ts), delete cascade', sql: 'SELECT status FROM sequence_runs WHERE contact_id = ? FOR UPDATE', values: [sample.contact_id] },
    { source: 'changeRunStatus (run-transitions.ts)', sql: 'SELECT contact_id, sequence_id FROM sequence_runs WHERE id = ? AND account_id = ? AND sequence_id = ?', values: [sample.id, accountId, big] },
    { source: 'getRunDetail (run-detail.ts)', sql: 'SELECT id FROM sequence_runs WHERE id = ? AND sequence_id = ? AND account_id = ?', values: [sample.id, big, accountId] },
    { source: 'moveRunsToVersion positions (move-runs.ts)', sql: `SELECT DISTINCT version, current_step_id FROM sequence_runs WHERE sequence_id = ? AND version IS NOT NULL AND version <> ? AND current_step_id IS NOT NULL AND ${active}`, values: [big, 2] },
    { source: 'moveRunsToVersion move (move-runs.ts)', sql: `UPDATE sequence_runs SET visit = visit + 1 WHERE sequence_id = ? AND version = ? AND current_step_id = ? AND ${active}`, values: [big, 1, 'w'] },
    { source: 'moveRunsToVersion skip (move-runs.ts)', sql: `UPDATE run_step_executions SET status = 'skipped' WHERE status = 'running' AND run_id IN (SELECT id FROM sequence_runs WHERE sequence_id = ? AND version = ? AND current_step_id = ? AND ${active})`, values: [big, 1, 'w'] },
    { source: 'countRunPositions (run-positions.ts)', sql: `SELECT version, current_step_id, COUNT(*) AS runs FROM sequence_runs r FORCE INDEX (sequence_runs_sequence_active_created) WHERE sequence_id = ? AND account_id = ? AND ${active} GROUP BY version, current_step_id`, values: [big, accountId] },
    { source: 'list runs (list-runs.ts)', sql: 'SELECT id FROM sequence_runs r FORCE INDEX (sequence_runs_sequence_created) WHERE sequence_id = ? AND account_id = ? ORDER BY created_at DESC, id DESC LIMIT 51', values: [big, accountId] },
    { source: 'list runs ?status (list-runs.ts)', sql: "SELECT id FROM sequence_runs r FORCE INDEX (sequence_runs_sequence_status_created) WHERE sequence_id = ? AND account_id = ? AND status = 'completed' ORDER BY created_at DESC, id DESC LIMIT 51", values: [big, accountId] },
    { source: 'list runs ?active=true (list-runs.ts)', sql: `SELECT id FROM sequence_runs r FORCE INDEX (sequence_runs_sequence_active_created) WHERE sequence_id = ? AND account_id = ? AND ${active} ORDER BY created_at DESC, id DESC LIMIT 51`, values: [big, accountId] },
    { source: 'list a contact\'s runs (list-runs.ts)', sql: 'SELECT id FROM sequence_runs r FORCE INDEX (sequence_runs_contact_created) WHERE contact_id = ? AND account_id = ? ORDER BY created_at DESC, id DESC LIMIT 51', values: [sample.contact_id, accountId] },
    { source: 'releaseRunsChunk walk (release-runs.ts)', sql: "SELECT id, created_at FROM sequence_runs r FORCE INDEX (sequence_runs_sequence_status_created) WHERE sequence_id = ? AND status = 'running' AND created_at >= ? AND (created_at > ? OR (created_at = ? AND id > ?)) ORDER BY created_at, id LIMIT 2000", values: [big, now, now, now, sample.id] },
    { source: 'releaseRunsChunk update (release-runs.ts)', sql: "UPDATE sequence_runs SET due_at = ? WHERE id IN (?) AND status = 'running' AND current_step_id IS NOT NULL AND due_at IS NULL", values: [now, runIds] },
    { source: 'pruneRunHistory walk (prune-run-history.ts)', sql: "SELECT id, completed_at FROM sequence_runs r FORCE INDEX (sequence_runs_completed) WHERE completed_at < ? AND completed_at >= ? AND (completed_at > ? OR (completed_at = ? AND id > ?)) AND status IN ('completed', 'cancelled', 'failed') ORDER BY completed_at, id LIMIT 500", values: [old, new Date(0), new Date(0), new Date(0), ''] },
    { source: 'pruneRunHistory delete (prune-run-history.ts)', sql: 'DELETE FROM run_step_executions WHERE run_id IN (?) LIMIT 5000', values: [runIds] },
    { source: 'executions of runs: finish, skip, begin (record-batch.ts, end-runs.ts, webhook-step.ts)', sql: "UPDATE run_step_executions SET status = 'skipped' WHERE run_id IN (?) AND status = 'running'", values: [runIds] },
    { source: 'a run\'s timeline (run-detail.ts)', sql: 'SELECT id FROM run_step_executions WHERE run_id = ? ORDER BY visit, attempt', values: [sample.id] },
  ];
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
