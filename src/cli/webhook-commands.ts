import { z } from 'zod';
import type { Database } from '../db/database';
import { EVENT_TYPES } from '../schemas/event';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveryAttempts,
  listWebhooks,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
} from '../services/webhooks/endpoints';
import type { CliSettings } from './cli-settings';

// The admin command line's webhook commands: the REST calls of docs/webhooks.md, by account.
const uuid = z.uuid('must be a UUID');
const events = z
  .string()
  .transform((value) => (value === 'all' ? null : value.split(',').map((type) => type.trim())))
  .pipe(z.array(z.enum(EVENT_TYPES)).nullable());

type Run<S extends z.ZodType> = (db: Database, flags: z.infer<S>, settings: CliSettings) => Promise<unknown>;

function webhookCommand<S extends z.ZodType>(definition: { usage: string; flags: S; run: Run<S> }) {
  return definition;
}

export const WEBHOOK_COMMANDS = {
  'webhook:create': webhookCommand({
    usage: `--account ID --url URL [--events TYPE,TYPE|all] [--description TEXT]   (prints the secret, once)`,
    flags: z.object({ account: uuid, url: z.string().min(1).max(2048), events: events.optional(), description: z.string().max(500).optional() }),
    run: (db, f, settings) => createWebhook(db, { accountId: f.account, url: f.url, events: f.events, description: f.description }, settings.webhooks),
  }),
  'webhook:list': webhookCommand({
    usage: '--account ID',
    flags: z.object({ account: uuid }),
    run: (db, f, settings) => listWebhooks(db, { accountId: f.account }, settings.webhooks),
  }),
  'webhook:get': webhookCommand({
    usage: '--account ID --id ID',
    flags: z.object({ account: uuid, id: uuid }),
    run: (db, f, settings) => getWebhook(db, { accountId: f.account, id: f.id }, settings.webhooks),
  }),
  'webhook:update': webhookCommand({
    usage: '--account ID --id ID [--url URL] [--events TYPE,TYPE|all] [--enabled true|false] [--description TEXT]',
    flags: z.object({
      account: uuid,
      id: uuid,
      url: z.string().min(1).max(2048).optional(),
      events: events.optional(),
      enabled: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
      description: z.string().max(500).optional(),
    }),
    run: (db, f, settings) =>
      updateWebhook(db, { accountId: f.account, id: f.id, url: f.url, events: f.events, enabled: f.enabled, description: f.description }, settings.webhooks),
  }),
  'webhook:delete': webhookCommand({
    usage: '--account ID --id ID',
    flags: z.object({ account: uuid, id: uuid }),
    run: async (db, f) => {
      await deleteWebhook(db, { accountId: f.account, id: f.id });
      return { deleted: f.id };
    },
  }),
  'webhook:rotate-secret': webhookCommand({
    usage: '--account ID --id ID   (prints the new secret, once)',
    flags: z.object({ account: uuid, id: uuid }),
    run: (db, f, settings) => rotateWebhookSecret(db, { accountId: f.account, id: f.id }, settings.webhooks),
  }),
  'webhook:deliveries': webhookCommand({
    usage: '--account ID --id ID [--limit 1-100] [--cursor C]',
    flags: z.object({
      account: uuid,
      id: uuid,
      limit: z.string().regex(/^\d{1,3}$/, 'must be 1-100').transform(Number).pipe(z.number().min(1, 'must be 1-100').max(100, 'must be 1-100')).optional(),
      cursor: z.string().max(20).optional(),
    }),
    run: (db, f, settings) => listDeliveryAttempts(db, { accountId: f.account, id: f.id, limit: f.limit ?? 50, cursor: f.cursor }, settings.webhooks),
  }),
  'webhook:test': webhookCommand({
    usage: '--account ID --id ID',
    flags: z.object({ account: uuid, id: uuid }),
    run: (db, f) => sendTestEvent(db, { accountId: f.account, id: f.id }),
  }),
} as const;
