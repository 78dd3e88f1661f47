import { z } from 'zod';
import {
  deliveryAttemptSchema,
  webhookDescriptionSchema,
  webhookEventsSchema,
  webhookSchema,
  webhookUrlSchema,
  webhookWithSecretSchema,
} from '../schemas/webhook';
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
import { SECURE_WEBHOOKS } from '../services/webhooks/webhook-settings';
import { accountProcedure, router } from '../trpc/init';

const TAGS = ['Webhooks'];
const idParam = z.strictObject({ id: z.string().describe('The webhook endpoint id (UUID).') });
const NOT_FOUND = { 404: 'Webhook not found' };
const WEBHOOK_IN_USE = 'The webhook endpoint is used by a webhook step of an active or paused sequence';

export const webhooksRouter = router({
  create: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks',
        tags: TAGS,
        summary: 'Create a webhook endpoint',
        description:
          'Events committed from now on are POSTed to `url`, signed per Standard Webhooks (`webhook-id`, ' +
          '`webhook-timestamp`, `webhook-signature`). The body is the event: `{ id, type, createdAt, accountId, data }`. ' +
          'The answer carries the signing secret, once.',
        protect: true,
        errorResponses: { 400: 'Invalid URL (not https, or a refused address) or unknown event type' },
      },
      successStatus: 201,
      location: '/api/v1/webhooks/{id}',
    })
    .input(z.strictObject({ url: webhookUrlSchema, events: webhookEventsSchema.optional(), description: webhookDescriptionSchema.optional() }))
    .output(webhookWithSecretSchema)
    .mutation(async ({ ctx, input }) => {
      const created = await createWebhook(ctx.db, { accountId: ctx.accountId, ...input }, ctx.webhooks ?? SECURE_WEBHOOKS);
      ctx.http.headers.Location = `/api/v1/webhooks/${created.webhook.id}`;
      return created;
    }),

  list: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks',
        tags: TAGS,
        summary: 'List webhook endpoints',
        description: 'Every endpoint of the account, oldest first. Secrets are never shown again.',
        protect: true,
      },
    })
    .input(z.strictObject({}))
    .output(z.object({ webhooks: z.array(webhookSchema) }))
    .query(async ({ ctx }) => ({ webhooks: await listWebhooks(ctx.db, { accountId: ctx.accountId }, ctx.webhooks ?? SECURE_WEBHOOKS) })),

  get: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/{id}', tags: TAGS, summary: 'Get a webhook endpoint', description: 'Without its secret.', protect: true, errorResponses: NOT_FOUND },
    })
    .input(idParam)
    .output(z.object({ webhook: webhookSchema }))
    .query(async ({ ctx, input }) => ({ webhook: await getWebhook(ctx.db, { accountId: ctx.accountId, id: input.id }, ctx.webhooks ?? SECURE_WEBHOOKS) })),

  update: accountProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/webhooks/{id}',
        tags: TAGS,
        summary: 'Change a webhook endpoint',
        description:
          'Any of url, events, enabled, description. Re-enabling a disabled endpoint sends what queued meanwhile and ' +
          'restarts the 3-day failure count.',
        protect: true,
        errorResponses: { 400: 'Invalid URL, unknown event type, or nothing to change', ...NOT_FOUND },
      },
    })
    .input(
      idParam.extend({
        url: webhookUrlSchema.optional(),
        events: webhookEventsSchema.optional(),
        enabled: z.boolean().optional().describe('False stops deliveries; they queue until it is true again.'),
        description: webhookDescriptionSchema.optional(),
      }),
    )
    .output(z.object({ webhook: webhookSchema }))
    .mutation(async ({ ctx, input }) => ({
      webhook: await updateWebhook(ctx.db, { accountId: ctx.accountId, ...input }, ctx.webhooks ?? SECURE_WEBHOOKS),
    })),

  delete: accountProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/webhooks/{id}',
        tags: TAGS,
        summary: 'Delete a webhook endpoint',
        description:
          'Its pending deliveries and its attempt history go with it. 409 `webhook_in_use` while a webhook step of an ' +
          '`active` or `paused` sequence\'s current version sends to it: `details` names each sequence and step; ' +
          'change those steps (or archive the sequence) first.',
        protect: true,
        errorResponses: { ...NOT_FOUND, 409: WEBHOOK_IN_USE },
        successDescription: 'Deleted; no body',
      },
      successStatus: 204,
    })
    .input(idParam)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteWebhook(ctx.db, { accountId: ctx.accountId, id: input.id });
    }),

  rotateSecret: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{id}/rotate-secret',
        tags: TAGS,
        summary: 'Rotate the signing secret',
        description:
          'A new secret, shown once. For 24 h the previous one still signs: `webhook-signature` carries both ' +
          'signatures, space-separated, so receivers can switch without losing a delivery.',
        protect: true,
        errorResponses: NOT_FOUND,
      },
    })
    .input(idParam)
    .output(webhookWithSecretSchema)
    .mutation(({ ctx, input }) => rotateWebhookSecret(ctx.db, { accountId: ctx.accountId, id: input.id }, ctx.webhooks ?? SECURE_WEBHOOKS)),

  deliveries: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/{id}/deliveries',
        tags: TAGS,
        summary: 'List delivery attempts',
        description: 'Every HTTP attempt to the endpoint, newest first, with its outcome and when the next try goes.',
        protect: true,
        errorResponses: { 400: 'Invalid cursor or limit', ...NOT_FOUND },
      },
    })
    .input(
      idParam.extend({
        limit: z.coerce.number().int().min(1).max(100).default(50).describe('Page size, 1-100.'),
        cursor: z.string().max(20).optional().describe('`nextCursor` of the previous page.'),
      }),
    )
    .output(z.object({ attempts: z.array(deliveryAttemptSchema), nextCursor: z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last page.').meta({ example: '1042' }) }))
    .query(({ ctx, input }) => listDeliveryAttempts(ctx.db, { accountId: ctx.accountId, ...input }, ctx.webhooks ?? SECURE_WEBHOOKS)),

  test: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/{id}/test',
        tags: TAGS,
        summary: 'Send a test event',
        description: 'Records a `webhook.test` event (`data: { webhookId }`) that goes to this endpoint only, delivered like any other.',
        protect: true,
        errorResponses: NOT_FOUND,
      },
      successStatus: 202,
    })
    .input(idParam)
    .output(z.object({ eventId: z.string().describe('The test event\'s id, also its `webhook-id` header.').meta({ example: '0b7e2c4a-5d1f-4e8a-9c3b-6f2d8a1e4c7b' }) }))
    .mutation(({ ctx, input }) => sendTestEvent(ctx.db, { accountId: ctx.accountId, id: input.id })),
});
