import type { Database } from '../db/database';
import type { AuthResult } from '../services/api-keys';
import type { DashboardHttp } from './dashboard-context';
import type { WebhookSettings } from '../services/webhooks/webhook-settings';
import type { ChannelSettings } from '../services/channels/channel-settings';
import type { IdempotencyScope } from '../services/idempotency/key-in-transaction';
import type { ActivitySettings } from '../services/activities/activity-settings';
import type { TestSendDeps } from '../services/messages/test-sends';

// What a procedure may set about its HTTP answer. A mutable holder, because middlewares pass
// copies of the context on: a plain `ctx.status` set by a procedure would be lost.
export interface HttpMeta {
  status?: number;
  headers: Record<string, string>;
}

export interface Context {
  db: Database;
  requestId: string;
  transport: 'rest' | 'trpc' | 'caller';
  // Resolved once per request (the HTTP layer needs it before tRPC runs, for rate limits).
  authenticate: () => Promise<AuthResult>;
  http: HttpMeta;
  // Only on the dashboard's own mount (src/http/dashboard-api.ts): its session, never a key.
  dashboard?: DashboardHttp;
  // Absent: https only, no special-use addresses, the real clock.
  webhooks?: WebhookSettings;
  // Absent: no secrets key and no server-wide sender defaults (src/services/channels/channel-settings.ts),
  // and no sender check of an active sequence's emails (definition-rules.ts, requireSenders).
  channels?: ChannelSettings;
  // The Idempotency-Key the request claimed, if it sent one: operations that enroll write their
  // result on it in their own transaction (src/services/idempotency/key-in-transaction.ts).
  idempotency?: IdempotencyScope;
  // Absent: ACTIVITY_RETENTION_DAYS' default and the real clock.
  activities?: ActivitySettings;
  // Only on the dashboard's mount: the message editor's test sends (relays, outbox, limit).
  testSends?: TestSendDeps;
  // Where contact imports keep their files (DATA_DIR/imports); absent: data/imports.
  imports?: { dir: string };
  // A text/csv upload the HTTP layer streamed to the imports folder (src/http/import-upload.ts),
  // for contacts.imports.create; never set from a request's input.
  upload?: { file: string };
}

export function newHttpMeta(): HttpMeta {
  return { headers: {} };
}
