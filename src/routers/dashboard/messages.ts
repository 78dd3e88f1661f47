import { z } from 'zod';
import { stepInputSchema } from '../../schemas/sequence-definition';
import { DEFAULT_CHANNEL_SETTINGS } from '../../services/channels/channel-settings';
import { previewMessage } from '../../services/messages/preview-message';
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
});
