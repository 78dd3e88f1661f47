import { z } from 'zod';
import { stepInputSchema } from '../../schemas/sequence-definition';
import { DEFAULT_CHANNEL_SETTINGS } from '../../services/channels/channel-settings';
import { checkDraftStep, previewMessage } from '../../services/messages/preview-message';
import { sendTestMessage } from '../../services/messages/send-test-message';
import { ValidationError } from '../../errors/app-errors';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';

// The message editor's preview: the API's POST /sequences/{id}/preview (the same service,
// senders and templates), with the step as it is being edited in place of the saved one
// (`step`, checked by the API's step rules), always within the signed-in account.

export const dashboardMessagesRouter = router({
  preview: sessionProcedure
    .input(
      z.object({
        sequenceId: z.string().max(64),
        stepId: z.string().min(1).max(64),
        contactId: z.guid('must be a UUID'),
        step: stepInputSchema.optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => ({
      preview: await previewMessage(
        ctx.db,
        { accountId: ctx.accountId, sequenceId: input.sequenceId, stepId: input.stepId, contactId: input.contactId, draft: input.step },
        ctx.channels ?? DEFAULT_CHANNEL_SETTINGS,
      ),
    })),

  // The message editor's check as it is typed in, before (or without) a preview contact: the
  // step's templates parsed as a save and the preview parse them. A template that does not parse
  // is a 400 naming the field and its line, as the preview's.
  check: sessionProcedure
    .input(z.object({ stepId: z.string().min(1).max(64), step: stepInputSchema }))
    .mutation(({ input }) => {
      checkDraftStep(input.stepId, input.step);
      return { ok: true as const };
    }),

  // "Send a test": the step as edited, rendered for the preview's contact, sent once to `to` (an
  // email address, or a phone number for a WhatsApp step) through the account's sender and
  // recorded as a test message (src/services/messages/send-test-message.ts). A relay's or
  // Graph's refusal is a 409 naming its answer; over the limit a 429.
  sendTest: sessionProcedure
    .input(
      z.object({
        sequenceId: z.string().max(64),
        stepId: z.string().min(1).max(64),
        contactId: z.guid('must be a UUID'),
        step: stepInputSchema.optional(),
        to: z.string().trim().min(1, 'is required').max(254).describe('An email address, or for a WhatsApp step a phone number (+44 7700 900123).'),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      if (!ctx.testSends) throw new ValidationError('Test sends are not available here');
      const { to, step, ...rest } = input;
      return {
        test: await sendTestMessage(ctx.db, { accountId: ctx.accountId, ...rest, draft: step, to }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS, ctx.testSends),
      };
    }),
});
