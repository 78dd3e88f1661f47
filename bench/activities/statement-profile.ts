import type { Connection } from 'mysql2/promise';
import { DEFAULT_DATABASE_TIMEOUTS } from '../../src/config';
import { openDatabase } from '../../src/db/database';
import type { ActivityInput } from '../../src/schemas/activity';
import { DEFAULT_ACTIVITY_SETTINGS } from '../../src/services/activities/activity-settings';
import { recordActivities } from '../../src/services/activities/record-activities';
import { StatementCounter } from '../engine/context';

// Where a batch's time goes: one batch recorded in this process by the intake's own function
// (recordActivities, what POST /activities/batch calls), on a Database whose every statement is
// timed and counted by shape, as bench:engine counts the engine's. Beside it, InnoDB's row lock
// waits over the same call (global counters: the shared server's other users count too).

export interface BatchProfile {
  ms: number;
  statements: number;
  shapes: Array<[string, { count: number; ms: number }]>;
  lockWaits: number;
  lockWaitMs: number;
}

export async function profileBatch(url: string, admin: Connection, accountId: string, activities: ActivityInput[]): Promise<BatchProfile> {
  const counter = new StatementCounter();
  const db = openDatabase(url, { timeouts: DEFAULT_DATABASE_TIMEOUTS });
  const query = db.sequelize.query.bind(db.sequelize) as (sql: unknown, options?: unknown) => Promise<unknown>;
  db.sequelize.query = (async (sql: unknown, options?: unknown) => {
    const started = performance.now();
    try {
      return await query(sql, options);
    } finally {
      counter.add(typeof sql === 'string' ? sql : String((sql as { query?: unknown })?.query ?? sql), performance.now() - started);
    }
  }) as typeof db.sequelize.query;
  try {
    // A first call for the pool's connection and the statements' preparation, not counted.
    await db.sequelize.query('SELECT 1');
    counter.reset();
    const before = await lockStatus(admin);
    const started = performance.now();
    await recordActivities(db, { accountId, activities, batch: true }, DEFAULT_ACTIVITY_SETTINGS);
    const ms = performance.now() - started;
    const after = await lockStatus(admin);
    return {
      ms,
      statements: counter.total,
      shapes: [...counter.shapes].sort((a, b) => b[1].ms - a[1].ms),
      lockWaits: after.waits - before.waits,
      lockWaitMs: after.ms - before.ms,
    };
  } finally {
    await db.close();
  }
}

export async function lockStatus(admin: Connection): Promise<{ waits: number; ms: number; deadlocks: number }> {
  const [rows] = await admin.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time', 'Innodb_deadlocks')");
  const status = Object.fromEntries((rows as Array<{ Variable_name: string; Value: string }>).map((row) => [row.Variable_name, Number(row.Value)]));
  return { waits: status.Innodb_row_lock_waits ?? 0, ms: status.Innodb_row_lock_time ?? 0, deadlocks: status.Innodb_deadlocks ?? 0 };
}
