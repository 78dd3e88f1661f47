import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/database';
import { transactionCounts } from '../db/sql/transaction';
import { MESSAGE_CHANNELS } from '../schemas/message';
import { RUN_STATUSES } from '../schemas/statuses';
import { runStatusCounts } from '../services/run-status/run-status-counts';
import { WHATSAPP_INBOUND_OUTCOMES, WHATSAPP_OPT_OUT_SOURCES, type WhatsAppInboundMetrics } from '../services/messages/whatsapp-inbound-metrics';
import { SUPPRESSION_REASONS } from '../schemas/suppression';
import { suppressionTally } from '../services/suppressions/suppression-tally';

// What GET /metrics reports (docs/operations.md "Metrics"). One registry per app, never prom-client's
// global one: tests build many apps in one process, and each must count only its own requests.
export interface Metrics {
  registry: Registry;
  requestDuration: Histogram<'method' | 'route' | 'status'>;
  rateLimited: Counter<'limiter'>;
  unavailable: Counter<'cause'>;
  // The sequence engine's (src/services/engine/engine.ts): steps by type and outcome, the lag
  // from a run's due time to its claim, runs failed alone because their stored data could not be
  // planned or recorded, and runs set aside (dead letters).
  engine: { steps: Counter<'type' | 'outcome'>; lagSeconds: Histogram; unprocessable: Counter<'stage'>; deadLettered: Counter };
  projection: { lagSeconds: Histogram };
  // Messages (src/services/messages/message-metrics.ts): each status a message reaches, counted
  // when it commits (the store, the status webhook); the provider's latency (the sender).
  messages: { total: Counter<'channel' | 'outcome'>; providerLatency: Histogram<'channel' | 'outcome'>; channelPauses: Counter<'channel' | 'code'> };
  // WhatsApp's inbound messages and opt-outs (src/services/messages/whatsapp-inbound-metrics.ts).
  whatsapp: WhatsAppInboundMetrics;
  // Late bounces, complaints and deliveries (src/services/bounces/feedback-metrics.ts).
  bounces: { feedback: Counter<'source' | 'kind' | 'outcome'> };
}

// The label values known in advance start at 0, so that a rate() over them exists before the
// first event.
const LIMITERS = ['api-key', 'failed-auth'];
const UNAVAILABLE_CAUSES = ['database', 'database_busy', 'redis', 'shutdown'];
const MESSAGE_OUTCOMES = ['sent', 'captured', 'delivered', 'read', 'failed', 'skipped', 'cancelled'];

// Runs by status, from the counters every status change keeps in its own transaction
// (src/services/run-status/run-status-counts.ts): a read of at most 16 rows per status at each
// scrape, whatever the number of runs. Never a count over sequence_runs.
function runsByStatus(db: Database, registers: Registry[]): void {
  let last: Record<string, number> | undefined;
  new Gauge({
    name: 'sequence_runs',
    help: 'Runs by status (kept by counters, exact)',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      try {
        last = await runStatusCounts(db);
      } catch {
        // The database is down: the scrape still answers, with the last read (or none).
      }
      this.reset();
      if (!last) return;
      for (const status of RUN_STATUSES) this.set({ status }, last[status] ?? 0);
    },
  });
}

interface PoolStats {
  size: number;
  using: number;
  waiting: number;
}

export function createMetrics(db: Database): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer a request, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const rateLimited = new Counter({
    name: 'http_rate_limited_total',
    help: 'Requests answered 429, by limiter: api-key (per key) or failed-auth (per client IP)',
    labelNames: ['limiter'] as const,
    registers,
  });
  const unavailable = new Counter({
    name: 'http_service_unavailable_total',
    help: 'Requests answered 503, by cause',
    labelNames: ['cause'] as const,
    registers,
  });
  for (const limiter of LIMITERS) rateLimited.inc({ limiter }, 0);
  for (const cause of UNAVAILABLE_CAUSES) unavailable.inc({ cause }, 0);

  // Kept by withTransaction per database; read when scraped.
  new Counter({
    name: 'db_transaction_retries_total',
    help: 'Transactions run again after a deadlock',
    registers,
    collect() {
      this.reset();
      this.inc(transactionCounts(db).retries);
    },
  });
  new Counter({
    name: 'db_deadlocks_total',
    help: 'Transactions rolled back by a deadlock (retried or not)',
    registers,
    collect() {
      this.reset();
      this.inc(transactionCounts(db).deadlocks);
    },
  });

  // Only MySQL has a pool: Sequelize's SQLite dialect opens connections of its own.
  if (db.dialect === 'mysql') {
    const pool = () => (db.sequelize.connectionManager as unknown as { pool: PoolStats }).pool;
    const gauge = (name: string, help: string, read: (stats: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(pool()));
        },
      });
    gauge('db_pool_connections', 'Connections open in the database pool', (stats) => stats.size);
    gauge('db_pool_connections_in_use', 'Pool connections lent to a query or transaction', (stats) => stats.using);
    gauge('db_pool_waiting', 'Queries and transactions waiting for a pool connection', (stats) => stats.waiting);
  }

  const steps = new Counter({
    name: 'sequence_steps_total',
    help: 'Step executions recorded by this process\'s engine, by type and outcome (began: a wait started; skipped: a message step that sent nothing)',
    labelNames: ['type', 'outcome'] as const,
    registers,
  });
  const lagSeconds = new Histogram({
    name: 'sequence_due_lag_seconds',
    help: 'From the time a run was due to the time the engine claimed it',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  const projectionLag = new Histogram({
    name: 'run_log_projection_lag_seconds',
    help: 'From the commit of a run log row (a change to runs) to the commit of its projection into the counters and the events feed',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const unprocessable = new Counter({
    name: 'sequence_runs_unprocessable_total',
    help: 'Runs this process\'s engine failed alone because their stored data could not be planned (stage=plan) or recorded (stage=record)',
    labelNames: ['stage'] as const,
    registers,
  });
  for (const stage of ['plan', 'record'] as const) unprocessable.inc({ stage }, 0);
  const deadLettered = new Counter({
    name: 'sequence_runs_dead_lettered_total',
    help: 'Runs this process\'s engine set aside because their claims kept running out before their outcome was recorded',
    registers,
  });
  runsByStatus(db, registers);

  const messagesTotal = new Counter({
    name: 'messages_total',
    help: 'Messages by channel and the status they reached (sent, captured, delivered, read, failed, skipped, cancelled), counted by this process as each change commits',
    labelNames: ['channel', 'outcome'] as const,
    registers,
  });
  for (const channel of MESSAGE_CHANNELS) for (const outcome of MESSAGE_OUTCOMES) messagesTotal.inc({ channel, outcome }, 0);
  const channelPauses = new Counter({
    name: 'channel_pauses_total',
    help: 'Channels (or one step\'s template) paused by a sender-side failure, by channel and code (smtp_auth_failed, whatsapp_token_expired, ...), counted by this process as each pause commits',
    labelNames: ['channel', 'code'] as const,
    registers,
  });
  const providerLatency = new Histogram({
    name: 'message_provider_latency_seconds',
    help: 'One request to a message provider (an SMTP server, the Graph API), by channel and outcome: ok, retry (a retryable failure) or fail',
    labelNames: ['channel', 'outcome'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });

  const inbound = new Counter({
    name: 'whatsapp_inbound_messages_total',
    help: 'Inbound WhatsApp messages of signed posts, by outcome: received (message.received), opt_out, unknown_number or unknown_account (dropped)',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of WHATSAPP_INBOUND_OUTCOMES) inbound.inc({ outcome }, 0);
  const optOuts = new Counter({
    name: 'whatsapp_opt_outs_total',
    help: 'WhatsApp opt-outs taken, by source: keyword (an opt-out text or button), status (131050 on the status webhook), send (131050 answered to a send)',
    labelNames: ['source'] as const,
    registers,
  });
  for (const source of WHATSAPP_OPT_OUT_SOURCES) optOuts.inc({ source }, 0);
  const invalidNumbers = new Counter({
    name: 'whatsapp_numbers_invalid_total',
    help: 'WhatsApp numbers suppressed as invalid after repeated 131026 (undeliverable) with nothing delivered between',
    registers,
  });
  const feedback = new Counter({
    name: 'email_feedback_total',
    help: 'What came back about sent emails (the bounce listener, the SES and SendGrid webhooks), by source, kind (hard_bounce, soft_bounce, rejected, complaint, delivered, dropped, unsubscribe; forged, unreadable) and outcome (matched, unknown, dropped, refused)',
    labelNames: ['source', 'kind', 'outcome'] as const,
    registers,
  });
  // Kept by addSuppressions per database, whoever the writer (suppression-tally.ts); read when scraped.
  new Counter({
    name: 'suppressions_total',
    help: 'Addresses added to accounts\' suppression lists by this process, by channel and reason, counted as each addition commits',
    labelNames: ['channel', 'reason'] as const,
    registers,
    collect() {
      this.reset();
      const tally = suppressionTally(db);
      for (const channel of MESSAGE_CHANNELS) for (const reason of SUPPRESSION_REASONS) this.inc({ channel, reason }, tally.get(`${channel} ${reason}`) ?? 0);
    },
  });

  return {
    registry,
    requestDuration,
    rateLimited,
    unavailable,
    engine: { steps, lagSeconds, unprocessable, deadLettered },
    projection: { lagSeconds: projectionLag },
    messages: { total: messagesTotal, providerLatency, channelPauses },
    whatsapp: { inbound, optOuts, invalidNumbers },
    bounces: { feedback },
  };
}
