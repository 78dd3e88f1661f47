import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database';
import { appRouter } from './app-router';
import { authenticateApiKey } from '../services/api-keys';
import type { ChannelSettings } from '../services/channels/channel-settings';
import type { WebhookSettings } from '../services/webhooks/webhook-settings';
import type { ActivitySettings } from '../services/activities/activity-settings';
import { newHttpMeta, type Context } from '../trpc/context';
import { createCallerFactory } from '../trpc/init';

// In-process calls to the procedures, through the same middlewares (auth included) as HTTP.
export function createCallerContext(deps: { db: Database; apiKey?: string; webhooks?: WebhookSettings; channels?: ChannelSettings; activities?: ActivitySettings; imports?: { dir: string } }): Context {
  let auth: ReturnType<Context['authenticate']> | undefined;
  return {
    db: deps.db,
    requestId: randomUUID(),
    transport: 'caller',
    authenticate: () => (auth ??= authenticateApiKey(deps.db, deps.apiKey)),
    http: newHttpMeta(),
    webhooks: deps.webhooks,
    channels: deps.channels,
    activities: deps.activities,
    imports: deps.imports,
  };
}

export const createCaller = createCallerFactory(appRouter);
