import { z } from 'zod';
import { EVENT_TYPES } from '../../schemas/event';
import { webhookDescriptionSchema, webhookEventsSchema, webhookUrlSchema } from '../../schemas/webhook';
import {
  createWebhook,
  deleteWebhook,
  listDeliveryAttempts,
  listWebhooks,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
} from '../../services/webhooks/endpoints';
import { listStepCalls } from '../../services/webhooks/step-calls';
import { SECURE_WEBHOOKS } from '../../services/webhooks/webhook-settings';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';

// Settings -> Developer -> Webhooks: the services and input rules of the API's webhooks.*
// (docs/webhooks.md), always within the signed-in account.

const id = z.object({ id: z.uuid('must be a webhook id') });

export const dashboardWebhooksRouter = router({
  // What an endpoint may subscribe to, for the form's choices.
  eventTypes: sessionProcedure.query(() => [...EVENT_TYPES]),

  list: sessionProcedure.query(async ({ ctx }) => ({ webhooks: await listWebhooks(ctx.db, { accountId: ctx.accountId }, ctx.webhooks ?? SECURE_WEBHOOKS) })),

  create: sessionProcedure
    .input(z.object({ url: webhookUrlSchema, events: webhookEventsSchema.optional(), description: webhookDescriptionSchema.optional() }))
    .mutation(({ ctx, input }) => createWebhook(ctx.db, { accountId: ctx.accountId, ...input }, ctx.webhooks ?? SECURE_WEBHOOKS)),

  setEnabled: sessionProcedure
    .input(id.extend({ enabled: z.boolean() }))
    .mutation(({ ctx, input }) => updateWebhook(ctx.db, { accountId: ctx.accountId, ...input }, ctx.webhooks ?? SECURE_WEBHOOKS)),

  delete: sessionProcedure.input(id).mutation(({ ctx, input }) => deleteWebhook(ctx.db, { accountId: ctx.accountId, id: input.id })),

  rotateSecret: sessionProcedure
    .input(id)
    .mutation(({ ctx, input }) => rotateWebhookSecret(ctx.db, { accountId: ctx.accountId, id: input.id }, ctx.webhooks ?? SECURE_WEBHOOKS)),

  sendTest: sessionProcedure.input(id).mutation(({ ctx, input }) => sendTestEvent(ctx.db, { accountId: ctx.accountId, id: input.id })),

  // The latest attempts, newest first (the page shows one screenful; the API pages further),
  // and the latest calls of sequences' webhook steps to the endpoint (step-calls.ts).
  deliveries: sessionProcedure.input(id).query(async ({ ctx, input }) => {
    const settings = ctx.webhooks ?? SECURE_WEBHOOKS;
    const { attempts, nextCursor } = await listDeliveryAttempts(ctx.db, { accountId: ctx.accountId, id: input.id, limit: 20 }, settings);
    return { attempts, nextCursor, stepCalls: await listStepCalls(ctx.db, { accountId: ctx.accountId, id: input.id, limit: 20 }, settings) };
  }),
});
