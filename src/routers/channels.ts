import { z } from 'zod';
import { emailChannelInputSchema, emailChannelSchema, whatsappChannelInputSchema, whatsappChannelSchema } from '../schemas/channel';
import { channelPauseSchema, channelPausesQuerySchema } from '../schemas/channel-pause';
import { listChannelPauses } from '../services/channels/channel-pauses';
import { DEFAULT_CHANNEL_SETTINGS } from '../services/channels/channel-settings';
import { getEmailChannel, putEmailChannel } from '../services/channels/email-channel';
import { getWhatsAppChannel, putWhatsAppChannel } from '../services/channels/whatsapp-channel';
import { SECRETS_KEY_MISSING } from '../errors/app-errors';
import { accountProcedure, router } from '../trpc/init';

const TAGS = ['Channels'];
const WRITE_ONLY =
  'A field left out keeps its stored value (secrets need not be sent again); null clears it back to the server\'s default. ' +
  'Secrets are stored encrypted and never answered.';

export const channelsRouter = router({
  // A static path beside /channels/email and /channels/whatsapp (no parameter to shadow it).
  pauses: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/channels/pauses',
        tags: TAGS,
        summary: 'List paused channels',
        description:
          'The account\'s channels (or single steps\' templates) that stopped sending because the sender side failed: a refused login, ' +
          'MAIL FROM or TLS, an expired token, a restricted account, a template Graph refuses. Their messages wait, queued. Saving the ' +
          'channel (PUT /channels/email or /channels/whatsapp), saving the step\'s sequence, or a probe that logs in resumes them. ' +
          'Oldest first; empty when nothing is paused.',
        protect: true,
      },
    })
    .input(channelPausesQuerySchema)
    .output(z.object({ pauses: z.array(channelPauseSchema) }))
    .query(async ({ ctx, input }) => ({ pauses: await listChannelPauses(ctx.db, ctx.accountId, { channel: input.channel }) })),

  getEmail: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/channels/email',
        tags: TAGS,
        summary: 'Get the email sender',
        description:
          'The account\'s email settings, each falling back to the server\'s: `from` to EMAIL_FROM, the relay to SMTP_URL ' +
          '(`smtp.source` says which), `maxPerSecond` to EMAIL_MAX_PER_SECOND. `dkim.dnsRecord` is the TXT record to publish.',
        protect: true,
      },
    })
    .input(z.object({}))
    .output(z.object({ channel: emailChannelSchema }))
    .query(async ({ ctx }) => ({ channel: await getEmailChannel(ctx.db, { accountId: ctx.accountId }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS) })),

  putEmail: accountProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/channels/email',
        tags: TAGS,
        summary: 'Set the email sender',
        description:
          `${WRITE_ONLY} A DKIM key is tried on a message when saved: one that does not sign is a 400. ` +
          '`maxPerSecond` above the server\'s EMAIL_MAX_PER_SECOND is a 400.',
        protect: true,
        errorResponses: { 409: SECRETS_KEY_MISSING },
      },
    })
    .input(emailChannelInputSchema)
    .output(z.object({ channel: emailChannelSchema }))
    .mutation(async ({ ctx, input }) => ({
      channel: await putEmailChannel(ctx.db, { accountId: ctx.accountId, ...input }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS),
    })),

  getWhatsApp: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/channels/whatsapp',
        tags: TAGS,
        summary: 'Get the WhatsApp sender',
        description: 'The account\'s WhatsApp Cloud API number and whether a token is stored (its last 4 characters only). Nothing set: `configured: false`.',
        protect: true,
      },
    })
    .input(z.object({}))
    .output(z.object({ channel: whatsappChannelSchema }))
    .query(async ({ ctx }) => ({ channel: await getWhatsAppChannel(ctx.db, { accountId: ctx.accountId }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS) })),

  putWhatsApp: accountProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/channels/whatsapp',
        tags: TAGS,
        summary: 'Set the WhatsApp sender',
        description:
          'The business number\'s phone number ID and an access token (required the first time; left out later, the stored one is kept). ' +
          '`maxPerSecond` above the server\'s WHATSAPP_MAX_PER_SECOND is a 400. The token is stored encrypted and never answered.',
        protect: true,
        errorResponses: { 409: SECRETS_KEY_MISSING },
      },
    })
    .input(whatsappChannelInputSchema)
    .output(z.object({ channel: whatsappChannelSchema }))
    .mutation(async ({ ctx, input }) => ({
      channel: await putWhatsAppChannel(ctx.db, { accountId: ctx.accountId, ...input }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS),
    })),
});
