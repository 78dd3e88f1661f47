import type { Request } from 'express';
import type { Database } from '../db/database';
import type { WebhookSettings } from '../services/webhooks/webhook-settings';
import type { ChannelSettings } from '../services/channels/channel-settings';
import type { ActivitySettings } from '../services/activities/activity-settings';
import { newHttpMeta, type Context } from '../trpc/context';
import './express-types';

// The procedures' context for an HTTP request, on either transport. The key was resolved
// before (resolveApiKey), once, for the rate limiter too.
export function requestContext(req: Request, deps: { db: Database; webhooks?: WebhookSettings; channels?: ChannelSettings; activities?: ActivitySettings; imports?: { dir: string } }, transport: 'rest' | 'trpc'): Context {
  return {
    db: deps.db,
    requestId: req.id,
    transport,
    authenticate: async () => req.auth ?? { ok: false as const, code: 'missing_api_key' as const },
    http: newHttpMeta(),
    webhooks: deps.webhooks,
    channels: deps.channels,
    activities: deps.activities,
    imports: deps.imports,
    idempotency: req.idempotency,
  };
}
