import { randomBytes, randomUUID } from 'node:crypto';
import mysql, { type Pool, type PoolConnection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { newRowId } from '../../src/services/ids';
import { cpuSpan, type CpuSpan } from './cpu';
import { readSchema, WriteTally } from './index-entries';
import { idSql } from './seed';

// The floor (issue 35): a one-step tag run's logical work done by a bare mysql2 loop, with a
// lease, on the engine's database, in tables of its own (floor_*) shaped like the engine's. What
// the engine does above this is what `bench:engine` measures as engine ÷ floor.
//
// A pass: (1) claim up to 500 due runs, `SELECT ... FOR UPDATE SKIP LOCKED` on the due index,
// and lease them (due_at moved a minute on, a claim token), one transaction; (2) record them in
// one transaction: complete the runs where the claim token is still ours (the lease checked on
// the write: a run whose lease was lost is not recorded, the batch is rolled back), lock and read
// the contacts, add the tag, one execution row per run, the account's event counter bumped
// (LAST_INSERT_ID, last: its lock orders events by commit) and one event per run. Statements
// are prepared (`execute`) as the engine's data layer sends them, except the locking reads,
// sent as text as the engine sends them (src/db/direct-statements.ts).

export const FLOOR_TABLES = ['floor_runs', 'floor_contacts', 'floor_executions', 'floor_events', 'floor_event_sequences'];
const BATCH = 500;
const LEASE_MS = 60_000;
const TAG = 'bench';

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS floor_contacts (
     id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
     account_id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
     email VARCHAR(254) NOT NULL,
     first_name VARCHAR(255) NULL,
     tags TEXT NOT NULL,
     custom_fields TEXT NOT NULL,
     created_at DATETIME(3) NOT NULL,
     updated_at DATETIME(3) NOT NULL,
     UNIQUE KEY floor_contacts_account_email (account_id, email),
     KEY floor_contacts_account_updated (account_id, updated_at, id)
   ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
  // The narrow hot row: the claim's index (due_at) and nothing the lease changes besides.
  `CREATE TABLE IF NOT EXISTS floor_runs (
     id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
     account_id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
     sequence_id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
     contact_id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
     status VARCHAR(16) NOT NULL,
     current_step_id VARCHAR(64) NULL,
     visit INT NOT NULL,
     due_at DATETIME(3) NULL,
     claim_token CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
     created_at DATETIME(3) NOT NULL,
     updated_at DATETIME(3) NOT NULL,
     completed_at DATETIME(3) NULL,
     KEY floor_runs_due (due_at)
   ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
  `CREATE TABLE IF NOT EXISTS floor_executions (
     id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
     account_id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
     run_id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
     visit INT NOT NULL,
     attempt INT NOT NULL,
     step_id VARCHAR(64) NOT NULL,
     type VARCHAR(16) NOT NULL,
     status VARCHAR(16) NOT NULL,
     started_at DATETIME(3) NOT NULL,
     finished_at DATETIME(3) NULL,
     UNIQUE KEY floor_executions_unique (run_id, visit, attempt)
   ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
  `CREATE TABLE IF NOT EXISTS floor_event_sequences (
     account_id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
     last_seq BIGINT NOT NULL
   ) ENGINE=InnoDB`,
  `CREATE TABLE IF NOT EXISTS floor_events (
     id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
     account_id CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
     seq BIGINT NOT NULL,
     type VARCHAR(64) NOT NULL,
     data LONGTEXT NOT NULL,
     created_at DATETIME(3) NOT NULL,
     UNIQUE KEY floor_events_account_seq (account_id, seq)
   ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
];

export interface Floor {
  // Seeds `runs` due runs (each with a contact of its own) and does them until none is due.
  // CPU counted from the first pass to the last (the seed left out); dbPid: the database server's.
  run(runs: number, dbPid?: number): Promise<FloorResult>;
  close(): Promise<void>;
}

export interface FloorResult {
  runs: number;
  seconds: number;
  perSecond: number;
  passes: number;
  statements: number;
  tally: WriteTally;
  cpu: CpuSpan;
  // Runs whose lease was lost before their record (none expected: one loop).
  lostLeases: number;
}

export async function openFloor(url: string, admin: import('mysql2/promise').Connection): Promise<Floor> {
  for (const statement of SCHEMA) await admin.query(statement);
  const tally = new WriteTally(await readSchema(admin, FLOOR_TABLES));
  const pool: Pool = mysql.createPool({ uri: url, connectionLimit: 4, charset: 'utf8mb4', timezone: 'Z', dateStrings: false });
  const accountId = randomUUID();
  const sequenceId = randomUUID();
  let statements = 0;
  const send = async <T>(connection: PoolConnection, sql: string, values: unknown[] = [], asText = false): Promise<T> => {
    statements += 1;
    const [result] = asText ? await connection.query(sql, values) : await connection.execute(sql, values as never[]);
    tally.record(sql, result);
    return result as T;
  };
  const inList = (n: number) => new Array(n).fill('?').join(', ');

  // One pass: answers the runs recorded (0: nothing was due).
  async function pass(connection: PoolConnection): Promise<{ done: number; lost: number }> {
    const token = randomUUID();
    const now = new Date();
    await send(connection, 'START TRANSACTION', [], true);
    const claimed = await send<RowDataPacket[]>(
      connection,
      `SELECT id, account_id, contact_id, visit, current_step_id FROM floor_runs WHERE due_at <= ? ORDER BY due_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
      [now],
      true,
    );
    if (claimed.length === 0) {
      await send(connection, 'COMMIT', [], true);
      return { done: 0, lost: 0 };
    }
    const ids = claimed.map((row) => row.id as string);
    await send(connection, `UPDATE floor_runs SET due_at = ?, claim_token = ? WHERE id IN (${inList(ids.length)})`, [new Date(now.getTime() + LEASE_MS), token, ...ids]);
    await send(connection, 'COMMIT', [], true);

    // The record, checking the lease on the write.
    const finished = new Date();
    await send(connection, 'START TRANSACTION', [], true);
    const completed = await send<ResultSetHeader>(
      connection,
      `UPDATE floor_runs SET status = 'completed', current_step_id = NULL, due_at = NULL, claim_token = NULL, completed_at = ?, updated_at = ? WHERE id IN (${inList(ids.length)}) AND claim_token = ?`,
      [finished, finished, ...ids, token],
    );
    if (completed.affectedRows !== ids.length) {
      // Some lease ran out and another worker has those runs now: record none of this batch
      // here (a real engine records the rest; the floor never gets here with one loop).
      await send(connection, 'ROLLBACK', [], true);
      return { done: 0, lost: ids.length };
    }
    const contactIds = claimed.map((row) => row.contact_id as string);
    const contacts = await send<RowDataPacket[]>(
      connection,
      `SELECT id, account_id, email, tags, custom_fields, created_at FROM floor_contacts WHERE id IN (${inList(contactIds.length)}) FOR UPDATE`,
      contactIds,
      true,
    );
    // The tag added where it is missing; the rows written back in one upsert by primary key.
    const tagged: unknown[] = [];
    for (const contact of contacts) {
      const tags = JSON.parse(contact.tags as string) as string[];
      if (tags.includes(TAG)) continue;
      tagged.push(contact.id, contact.account_id, contact.email, JSON.stringify([...tags, TAG]), contact.custom_fields, contact.created_at, finished);
    }
    if (tagged.length > 0) {
      await send(
        connection,
        `INSERT INTO floor_contacts (id, account_id, email, tags, custom_fields, created_at, updated_at) VALUES ${inList(tagged.length / 7).replace(/\?/g, '(?, ?, ?, ?, ?, ?, ?)')}` +
          ' ON DUPLICATE KEY UPDATE tags = VALUES(tags), updated_at = VALUES(updated_at)',
        tagged,
      );
    }
    const executions = claimed.flatMap((run) => [newRowId(), run.account_id, run.id, run.visit, 1, run.current_step_id, 'tag', 'succeeded', now, finished]);
    await send(connection, `INSERT INTO floor_executions (id, account_id, run_id, visit, attempt, step_id, type, status, started_at, finished_at) VALUES ${inList(claimed.length).replace(/\?/g, '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')}`, executions);
    // Last, as the engine's events: the counter row's lock makes seq the commit order.
    const bumped = await send<ResultSetHeader>(
      connection,
      'INSERT INTO floor_event_sequences (account_id, last_seq) VALUES (?, ?) ON DUPLICATE KEY UPDATE last_seq = LAST_INSERT_ID(last_seq + VALUES(last_seq))',
      [accountId, claimed.length],
    );
    const last = bumped.affectedRows === 1 ? claimed.length : Number(bumped.insertId);
    const events = claimed.flatMap((run, i) => [
      newRowId(),
      accountId,
      last - claimed.length + 1 + i,
      'run.step_completed',
      JSON.stringify({ runId: run.id, sequenceId, contactId: run.contact_id, stepId: run.current_step_id, type: 'tag', visit: run.visit, status: 'succeeded', runStatus: 'completed', at: finished.toISOString() }),
      finished,
    ]);
    await send(connection, `INSERT INTO floor_events (id, account_id, seq, type, data, created_at) VALUES ${inList(claimed.length).replace(/\?/g, '(?, ?, ?, ?, ?, ?)')}`, events);
    await send(connection, 'COMMIT', [], true);
    return { done: claimed.length, lost: 0 };
  }

  return {
    async run(runs, dbPid) {
      // Contacts and their runs, set-based (bench/engine/seed.ts's numbers table), due now.
      const prefix = randomBytes(4).toString('hex');
      const contactPrefix = `${prefix}-0c0c`;
      const runPrefix = `${prefix}-0a0a`;
      const seededAt = new Date();
      for (let from = 0; from < runs; from += 50_000) {
        const to = Math.min(runs, from + 50_000) - 1;
        await admin.query(
          `INSERT INTO floor_contacts (id, account_id, email, first_name, tags, custom_fields, created_at, updated_at)
           SELECT ${idSql(contactPrefix)}, ?, CONCAT('f', n, '-', ?, '@bench.test'), 'Floor', '["customer"]', '{}', ?, ? FROM bench_numbers WHERE n BETWEEN ? AND ?`,
          [accountId, prefix, seededAt, seededAt, from, to],
        );
        await admin.query(
          `INSERT INTO floor_runs (id, account_id, sequence_id, contact_id, status, current_step_id, visit, due_at, created_at, updated_at)
           SELECT ${idSql(runPrefix)}, ?, ?, ${idSql(contactPrefix)}, 'pending', 'mark', 1, ?, ?, ? FROM bench_numbers WHERE n BETWEEN ? AND ?`,
          [accountId, sequenceId, new Date(seededAt.getTime() - 1000), seededAt, seededAt, from, to],
        );
      }
      statements = 0;
      tally.reset();
      const connection = await pool.getConnection();
      // As the engine's connections: READ COMMITTED (src/db/database.ts).
      await connection.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
      try {
        let done = 0;
        let lost = 0;
        let passes = 0;
        const cpu = cpuSpan(dbPid);
        const started = performance.now();
        for (;;) {
          const result = await pass(connection);
          passes += 1;
          done += result.done;
          lost += result.lost;
          if (result.done === 0 && result.lost === 0) break;
        }
        const seconds = (performance.now() - started) / 1000;
        const used = cpu.end();
        if (done !== runs) throw new Error(`floor: ${done} of ${runs} runs recorded (${lost} leases lost)`);
        return { runs, seconds, perSecond: runs / seconds, passes, statements, tally, cpu: used, lostLeases: lost };
      } finally {
        connection.release();
      }
    },
    close: () => pool.end(),
  };
}
