import { randomUUID } from 'node:crypto';
import type { Connection } from 'mysql2/promise';
import { DEFAULT_DATABASE_TIMEOUTS } from '../../src/config';
import { openDatabase, type Database } from '../../src/db/database';
import { sqlTemplate } from '../../src/db/sql-template';
import { createLogger } from '../../src/logging/logger';
import type { StepInput } from '../../src/schemas/sequence-definition';
import { createAccount } from '../../src/services/accounts';
import { DEFAULT_PROJECTION, projectionTask } from '../../src/services/events/projection/projection-task';
import { SequenceEngine, type EngineMetrics, type EngineOptions } from '../../src/services/engine/engine';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { createWebhook } from '../../src/services/webhooks/endpoints';
import type { WriteTally } from './index-entries';

// What the engine benchmark's phases share: the database (a connection for seeding and
// reading, a Database for the services), one account, and engines as the product builds them,
// with counters in place of the service's metrics.

export interface EngineBench {
  url: string;
  admin: Connection;
  db: Database;
  accountId: string;
  newSequence(steps: StepInput[]): Promise<string>;
  newEndpoint(url: string): Promise<string>;
}

export async function benchAccount(url: string, admin: Connection): Promise<EngineBench> {
  const db = openDatabase(url, { timeouts: DEFAULT_DATABASE_TIMEOUTS });
  const account = await createAccount(db, { name: `bench engine ${randomUUID()}`, maxActiveRuns: null });
  return {
    url,
    admin,
    db,
    accountId: account.id,
    async newSequence(steps) {
      return (await createSequence(db, { accountId: account.id, name: `bench ${randomUUID()}`, status: 'active', steps })).id;
    },
    async newEndpoint(receiverUrl) {
      // Subscribed to webhook.test only: the dispatcher then has nothing to deliver to it, and
      // the receiver sees the webhook steps alone.
      const { webhook } = await createWebhook(
        db,
        { accountId: account.id, url: receiverUrl, events: ['webhook.test'] },
        { allowInsecure: true, now: () => new Date() },
      );
      return webhook.id;
    },
  };
}

// Statements by shape (values taken out), with their time from the call to the last row, for
// "where the time goes".
export class StatementCounter {
  readonly shapes = new Map<string, { count: number; ms: number }>();
  total = 0;
  // When set, every write's rows and index entries are counted too (index-entries.ts).
  tally?: WriteTally;
  reset(): void {
    this.shapes.clear();
    this.total = 0;
    this.tally?.reset();
  }
  add(sql: string, ms: number): void {
    this.total += 1;
    // IN lists and VALUES rows of any length are one shape.
    const shape = sqlTemplate(sql, 'mysql')
      .replace(/^Executing \([^)]*\): /, '')
      .replace(/\s+/g, ' ')
      .replace(/\(\?(, \?)*\)(, \(\?(, \?)*\))+/g, '(?…), …')
      .replace(/\(\?(, \?)*\)/g, '(?…)');
    const key = shape.length > 150 ? `${shape.slice(0, 147)}...` : shape;
    const entry = this.shapes.get(key) ?? { count: 0, ms: 0 };
    entry.count += 1;
    entry.ms += ms;
    this.shapes.set(key, entry);
  }
}

export interface EngineCounts {
  succeeded: Map<string, number>;
  failed: Map<string, number>;
  lagsMs: number[];
}

// An engine as the service starts it (start-engine.ts: real timers, default batch, lease and
// in-flight limits), on a Database of its own whose statements are counted.
export function productEngine(url: string, statements: StatementCounter, extra: Partial<EngineOptions> = {}): { engine: SequenceEngine; counts: EngineCounts; db: Database } {
  const counts: EngineCounts = { succeeded: new Map(), failed: new Map(), lagsMs: [] };
  const metrics: EngineMetrics = {
    steps: {
      inc({ type, outcome }, value) {
        const into = outcome === 'succeeded' ? counts.succeeded : outcome === 'failed' ? counts.failed : undefined;
        into?.set(type, (into.get(type) ?? 0) + value);
      },
    },
    lagSeconds: { observe: (seconds) => void counts.lagsMs.push(seconds * 1000) },
  };
  const db = openDatabase(url, { timeouts: DEFAULT_DATABASE_TIMEOUTS });
  // Every statement, the data layer's direct ones included (src/db/direct-statements.ts), goes
  // through this instance's query(): timed around it (for a statement outside a transaction
  // that includes taking a pooled connection).
  const query = db.sequelize.query.bind(db.sequelize) as (sql: unknown, options?: unknown) => Promise<unknown>;
  db.sequelize.query = (async (sql: unknown, options?: unknown) => {
    const started = performance.now();
    const text = () => (typeof sql === 'string' ? sql : String((sql as { query?: unknown })?.query ?? sql));
    try {
      const result = await query(sql, options);
      statements.tally?.record(text(), result);
      return result;
    } finally {
      statements.add(text(), performance.now() - started);
    }
  }) as typeof db.sequelize.query;
  const engine = new SequenceEngine(db, {
    logger: createLogger('warn'),
    metrics,
    webhook: { timeoutMs: 10_000, allowInsecure: true },
    ...extra,
  });
  // The run log's projection, as the worker runs it beside the engine (start-maintenance.ts):
  // its work is part of the write path, and its lag is measured (projectionLagsMs).
  const projection = projectionTask(db, DEFAULT_PROJECTION, {
    logger: createLogger('warn'),
    metrics: { lagSeconds: { observe: (seconds) => void projectionLagsMs.push(seconds * 1000) } },
  });
  const start = engine.start.bind(engine);
  const stop = engine.stop.bind(engine);
  engine.start = () => {
    projection.start();
    start();
  };
  engine.stop = async (boundMs: number) => {
    await stop(boundMs);
    await projection.stop();
  };
  return { engine, counts, db };
}

// Every projected run log row's lag (ms), of every product engine this process started.
export const projectionLagsMs: number[] = [];

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function passFail(ok: boolean): string {
  return ok ? 'PASS' : 'FAIL';
}
