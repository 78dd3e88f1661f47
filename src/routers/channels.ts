import { z } from 'zod';
import { emailChannelInputSchema, emailChannelSchema, whatsappChannelInputSchema, whatsappChannelSchema } from '../schemas/channel';
import { channelPauseSchema, channelPausesQuerySchema } from '../schemas/channel-pause';
import { listChannelPauses } from '../services/channels/channel-pauses';
import { DEFAULT_CHANNEL_SETTINGS } from '../services/channels/channel-settings';
import { getEmailChannel, putEmailChannel } from '../services/channels/email-channel';
import { getWhatsAppChannel, putWhatsAppChannel } from '../services/channels/whatsapp-channel';
import { DOMAIN_IN_USE, EMAIL_SENDER_CONFLICTS, SECRETS_KEY_MISSING } from '../errors/app-errors';
import { sendingDomainInputSchema, sendingDomainListSchema, sendingDomainParamSchema, sendingDomainSchema } from '../schemas/sending-domain';
import { addSendingDomain, deleteSendingDomain, listSendingDomains, verifySendingDomain } from '../services/channels/sending-domains';
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
    .input(z.strictObject({}))
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
          '`maxPerSecond` above the server\'s EMAIL_MAX_PER_SECOND is a 400. Through the server\'s shared relay (no `smtpUrl` of the ' +
          'account\'s), `from` must be in a verified sending domain (400 naming `from`); `dkim.domain` must be the From\'s domain or a ' +
          'parent of it (400); `bounceDomain` must be a verified sending domain of the account (400). `smtpUrl` on a loopback, private, ' +
          'link-local or metadata address is a 400 unless the server allows it (SMTP_ALLOW_PRIVATE_RELAYS); a relay not on loopback ' +
          'while the server\'s PUBLIC_BASE_URL is not https is a 409 `public_base_url_required`.',
        protect: true,
        errorResponses: { 409: EMAIL_SENDER_CONFLICTS },
      },
    })
    .input(emailChannelInputSchema)
    .output(z.object({ channel: emailChannelSchema }))
    .mutation(async ({ ctx, input }) => ({
      channel: await putEmailChannel(ctx.db, { accountId: ctx.accountId, ...input }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS),
    })),

  // Static paths first: /channels/email/domains/{domain}/verify before /channels/email/domains/{domain}.
  listEmailDomains: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/channels/email/domains',
        tags: TAGS,
        summary: 'List the sending domains',
        description:
          'The account\'s sending domains with the records to publish (no lookup: `status: not_checked`), and the server\'s own ' +
          'domains, verified for every account. Mail goes through the server\'s shared relay only From a verified domain or a subdomain of one.',
        protect: true,
      },
    })
    .input(z.strictObject({}))
    .output(sendingDomainListSchema)
    .query(({ ctx }) => listSendingDomains(ctx.db, { accountId: ctx.accountId }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS)),

  addEmailDomain: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/channels/email/domains',
        tags: TAGS,
        summary: 'Add a sending domain',
        description:
          'Answers the records to publish, each with what the resolver saw: `verification` (a TXT record `_svc-verify.<domain>` = the ' +
          'domain\'s token; once seen, the domain is verified), `dkim` (the account\'s key, when its domain aligns), `spf` (the relay) ' +
          'and `dmarc`. A domain the account has already added is answered as it is (200), checked again. The server\'s own domains are a 400.',
        protect: true,
        successDescription: 'The domain was added',
      },
      successStatus: 201,
      alternateSuccess: { status: 200, description: 'The account had added the domain already' },
    })
    .input(sendingDomainInputSchema)
    .output(z.object({ domain: sendingDomainSchema }))
    .mutation(async ({ ctx, input }) => {
      const { domain, created } = await addSendingDomain(ctx.db, { accountId: ctx.accountId, ...input }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS);
      ctx.http.status = created ? 201 : 200;
      return { domain };
    }),

  verifyEmailDomain: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/channels/email/domains/{domain}/verify',
        tags: TAGS,
        summary: 'Check a sending domain\'s records now',
        description:
          'Looks every record up again (each lookup bounded in time) and answers what the resolver saw. The first time the token is ' +
          'seen the domain is verified; it stays verified. A lookup that fails is `lookup_failed` and changes nothing.',
        protect: true,
        errorResponses: { 404: 'Sending domain not found' },
      },
    })
    .input(sendingDomainParamSchema)
    .output(z.object({ domain: sendingDomainSchema }))
    .mutation(async ({ ctx, input }) => ({
      domain: await verifySendingDomain(ctx.db, { accountId: ctx.accountId, domain: input.domain }, ctx.channels ?? DEFAULT_CHANNEL_SETTINGS),
    })),

  deleteEmailDomain: accountProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/channels/email/domains/{domain}',
        tags: TAGS,
        summary: 'Delete a sending domain',
        description:
          'Mail From it no longer goes through the server\'s shared relay: steps that name it fail at send time (`from_unverified`). ' +
          '409 `domain_in_use` while it is the account\'s `bounceDomain`.',
        protect: true,
        errorResponses: { 404: 'Sending domain not found', 409: DOMAIN_IN_USE },
        successDescription: 'Deleted; no body',
      },
      successStatus: 204,
    })
    .input(sendingDomainParamSchema)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteSendingDomain(ctx.db, { accountId: ctx.accountId, domain: input.domain });
    }),

  getWhatsApp: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/channels/whatsapp',
        tags: TAGS,
        summary: 'Get the WhatsApp sender',
        description:
          'The account\'s WhatsApp Cloud API number and whether a token is stored (its last 4 characters only), whether it set its own ' +
          'webhook app secret and verify token (never shown), and the opt-out keywords in force. Nothing set: `configured: false`.',
        protect: true,
      },
    })
    .input(z.strictObject({}))
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
          '`maxPerSecond` above the server\'s WHATSAPP_MAX_PER_SECOND is a 400. `appSecret` and `verifyToken` (the account\'s own Meta app, ' +
          'for /webhooks/whatsapp) and `optOutKeywords` are optional; null puts the server\'s default back. The token and the app secret ' +
          'are stored encrypted, the verify token as a keyed hash; none is ever answered.',
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
