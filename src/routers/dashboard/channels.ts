import { z } from 'zod';
import { emailChannelInputSchema, whatsappChannelInputSchema } from '../../schemas/channel';
import { listChannelPauses } from '../../services/channels/channel-pauses';
import { DEFAULT_CHANNEL_SETTINGS } from '../../services/channels/channel-settings';
import { getEmailChannel, putEmailChannel } from '../../services/channels/email-channel';
import { getWhatsAppChannel, putWhatsAppChannel } from '../../services/channels/whatsapp-channel';
import { sendingDomainInputSchema, sendingDomainParamSchema } from '../../schemas/sending-domain';
import { addSendingDomain, deleteSendingDomain, listSendingDomains, verifySendingDomain } from '../../services/channels/sending-domains';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';

// Settings -> Channels: the services and input rules of the API's channels.* (docs/channels.md),
// always within the signed-in account.
export const dashboardChannelsRouter = router({
  email: sessionProcedure.query(({ ctx }) => getEmailChannel(ctx.db, { accountId: ctx.accountId }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS)),
  setEmail: sessionProcedure
    .input(emailChannelInputSchema)
    .mutation(({ ctx, input }) => putEmailChannel(ctx.db, { accountId: ctx.accountId, ...input }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS)),
  domains: sessionProcedure.query(({ ctx }) => listSendingDomains(ctx.db, { accountId: ctx.accountId }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS)),
  addDomain: sessionProcedure
    .input(sendingDomainInputSchema)
    .mutation(({ ctx, input }) => addSendingDomain(ctx.db, { accountId: ctx.accountId, ...input }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS)),
  verifyDomain: sessionProcedure
    .input(sendingDomainParamSchema)
    .mutation(({ ctx, input }) => verifySendingDomain(ctx.db, { accountId: ctx.accountId, ...input }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS)),
  deleteDomain: sessionProcedure
    .input(sendingDomainParamSchema)
    .mutation(({ ctx, input }) => deleteSendingDomain(ctx.db, { accountId: ctx.accountId, ...input })),
  // The account's paused channels and step templates (channel-pauses.ts), for the banners of
  // Settings -> Channels and the sequence page (sequenceId: that sequence's steps and the
  // channels as a whole).
  pauses: sessionProcedure
    .input(z.object({ sequenceId: z.uuid().optional() }).optional())
    .query(({ ctx, input }) => listChannelPauses(ctx.db, ctx.accountId, { sequenceId: input?.sequenceId })),
  whatsapp: sessionProcedure.query(({ ctx }) => getWhatsAppChannel(ctx.db, { accountId: ctx.accountId }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS)),
  setWhatsApp: sessionProcedure
    .input(whatsappChannelInputSchema)
    .mutation(({ ctx, input }) => putWhatsAppChannel(ctx.db, { accountId: ctx.accountId, ...input }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS)),
});
