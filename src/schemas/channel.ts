import { z } from 'zod';
import { smtpUrlProblem } from './smtp-url';
import { MAX_OPT_OUT_KEYWORD_LENGTH, MAX_OPT_OUT_KEYWORDS, optOutKey } from './opt-out-keywords';
import { frequencyCapInputSchema, frequencyCapSchema } from './frequency-cap';

// The senders' settings (docs/channels.md): GET and PUT /channels/email and /channels/whatsapp.
// Secrets (the SMTP URL, which carries the relay's password; the DKIM private key; the WhatsApp
// access token) are write-only: no answer carries them.
//
// PUT: a field left out keeps its stored value (a secret need not be sent again to change
// another field); null clears it back to the server-wide default.

const address = z.email('must be an email address').max(254);

export const smtpUrlSchema = z
  .string()
  .trim()
  .max(2048)
  .superRefine((value, context) => {
    const problem = smtpUrlProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .describe('smtp://user:password@host:587 (STARTTLS when offered) or smtps://user:password@host:465 (TLS). Write-only.')
  .meta({ example: 'smtps://news%40shop.example:app-password@smtp.shop.example:465' });

// A domain name as DNS spells it (ASCII; an internationalized name in its xn-- form).
export const domainNameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/, 'must be a domain name');

export const dkimInputSchema = z
  .strictObject({
    domain: domainNameSchema.describe('The domain the signature claims (d=): the From address\'s domain, or a parent of it.').meta({ example: 'shop.example' }),
    selector: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, 'must be a DNS label, e.g. s1')
      .max(63)
      .describe('The selector (s=): the record is published at <selector>._domainkey.<domain>.')
      .meta({ example: 's1' }),
    privateKey: z
      .string()
      .max(16_384)
      .describe('An RSA private key (1024 bits or more; 2048 advised), PEM (PKCS#1 or PKCS#8). Write-only.')
      .meta({ example: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC...\n-----END PRIVATE KEY-----\n' }),
  })
  .describe('Signs every email (DKIM, rsa-sha256).');

const maxPerSecond = (limit: string) =>
  z
    .number()
    .int()
    .positive()
    .describe(`Messages per second at most, for this account. At most the server-wide ${limit}: a higher value is a 400. Null: the server-wide limit.`)
    .meta({ example: 20 });

// Open and click tracking (docs/channels.md "Open and click tracking"): both off unless set.
export const emailTrackingInputSchema = z
  .strictObject({
    opens: z.boolean().optional().describe('A 1x1 pixel in every email: its first load records the activity `email.opened`. Left out: kept.'),
    clicks: z
      .boolean()
      .optional()
      .describe('The links of email steps with `trackClicks: true` go through a signed redirect that records `email.clicked`. Off: no step\'s links are rewritten. Left out: kept.'),
  })
  .describe('Engagement tracking of the account\'s emails (docs/activities.md "Engagement signals").');

export const emailTrackingSchema = z
  .object({
    opens: z.boolean().describe('Emails carry the open pixel.'),
    clicks: z.boolean().describe('Steps that ask for it (`trackClicks: true`) have their links tracked.'),
  })
  .describe('Engagement tracking of the account\'s emails.');

export const emailChannelInputSchema = z.strictObject({
  from: address.describe('The From address of the account\'s emails (a step may name another).').meta({ example: 'news@shop.example' }),
  replyTo: address.nullable().optional().describe('Reply-To of the account\'s emails. Null: none.').meta({ example: 'help@shop.example' }),
  smtpUrl: smtpUrlSchema.nullable().optional().describe('The account\'s SMTP relay (write-only). Null: the server\'s SMTP_URL.'),
  dkim: dkimInputSchema.nullable().optional().describe('The account\'s DKIM key. Null: emails are not signed.'),
  maxPerSecond: maxPerSecond('EMAIL_MAX_PER_SECOND').nullable().optional(),
  bounceDomain: domainNameSchema
    .nullable()
    .optional()
    .describe('The account\'s own bounce domain, one of its verified sending domains: the envelope sender\'s domain. Null: the server\'s BOUNCE_DOMAIN.')
    .meta({ example: 'shop.example' }),
  tracking: emailTrackingInputSchema.optional().meta({ example: { opens: true, clicks: true } }),
  frequencyCap: frequencyCapInputSchema.nullable().optional(),
});
export type EmailChannelInput = z.infer<typeof emailChannelInputSchema>;

export const dnsRecordSchema = z
  .object({
    name: z.string().describe('Where to publish it.').meta({ example: 's1._domainkey.shop.example' }),
    type: z.literal('TXT'),
    value: z.string().describe('The record\'s text: v=DKIM1; k=rsa; p=<the public key, base64>.').meta({ example: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA...' }),
  })
  .describe('The DNS TXT record receivers look the public key up in.');

export const emailChannelSchema = z
  .object({
    from: z.string().nullable().describe('The account\'s From address, else the server\'s EMAIL_FROM; null when neither is set.').meta({ example: 'news@shop.example' }),
    replyTo: z.string().nullable().describe('The account\'s Reply-To; null: none.').meta({ example: 'help@shop.example' }),
    smtp: z
      .object({
        configured: z.boolean().describe('Whether emails go to an SMTP relay (the account\'s or SMTP_URL). False: they are written to the outbox folder instead.'),
        host: z.string().nullable().describe('The relay\'s host[:port]; its user and password are never shown.').meta({ example: 'smtp.shop.example:465' }),
        source: z.enum(['account', 'server']).nullable().describe('account: set with PUT; server: SMTP_URL; null: no relay.'),
      })
      .describe('Where emails are handed over.'),
    dkim: z
      .object({ domain: z.string().meta({ example: 'shop.example' }), selector: z.string().meta({ example: 's1' }), dnsRecord: dnsRecordSchema })
      .nullable()
      .describe('The account\'s DKIM key (its private part is never shown); null: emails are not signed.'),
    maxPerSecond: z.number().int().describe('The rate in force: the account\'s, capped by EMAIL_MAX_PER_SECOND; else EMAIL_MAX_PER_SECOND.').meta({ example: 20 }),
    bounceDomain: z.string().nullable().describe('The account\'s own bounce domain; null: the server\'s BOUNCE_DOMAIN (if any).').meta({ example: 'shop.example' }),
    tracking: emailTrackingSchema,
    frequencyCap: frequencyCapSchema,
  })
  .meta({ id: 'EmailChannel' });
export type EmailChannelDto = z.infer<typeof emailChannelSchema>;

export const whatsappChannelInputSchema = z.strictObject({
  phoneNumberId: z
    .string()
    .trim()
    .regex(/^\d{1,32}$/, 'must be the phone number ID (digits) from WhatsApp Manager, not the phone number')
    .describe('The Cloud API\'s phone number ID of the business number (WhatsApp Manager > API Setup).')
    .meta({ example: '106540352242922' }),
  accessToken: z
    .string()
    .trim()
    .min(16, 'must be at least 16 characters')
    .max(4096)
    .regex(/^\S+$/, 'must not contain spaces')
    .optional()
    .describe('A system user\'s permanent access token with whatsapp_business_messaging (write-only). Required the first time; left out: the stored one is kept.')
    .meta({ example: 'EAAGm0PX4ZCpsBA...' }),
  maxPerSecond: maxPerSecond('WHATSAPP_MAX_PER_SECOND').nullable().optional(),
  appSecret: z
    .string()
    .trim()
    .min(8, 'must be at least 8 characters')
    .max(256)
    .regex(/^\S+$/, 'must not contain spaces')
    .nullable()
    .optional()
    .describe(
      'The secret of the Meta app whose webhook posts for this number (App settings > Basic), write-only: the status and message ' +
        'webhook checks the posts naming this number with it. Null: the server\'s WHATSAPP_APP_SECRET.',
    )
    .meta({ example: '3f9a0c1b2d4e5f60718293a4b5c6d7e8' }),
  verifyToken: z
    .string()
    .trim()
    .min(8, 'must be at least 8 characters')
    .max(256)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    .nullable()
    .optional()
    .describe(
      'The verify token entered in the Meta app\'s webhook settings, write-only (kept as a keyed hash): the subscription handshake ' +
        'answers for it as for WHATSAPP_VERIFY_TOKEN. Null: only the server\'s WHATSAPP_VERIFY_TOKEN.',
    )
    .meta({ example: 'shop-example-verify-4b1c' }),
  optOutKeywords: z
    .array(
      z
        .string()
        .trim()
        .min(1)
        .max(MAX_OPT_OUT_KEYWORD_LENGTH)
        .refine((keyword) => optOutKey(keyword).length > 0, 'must contain a letter or a digit'),
    )
    .min(1, 'must name at least one keyword (null: the defaults)')
    .max(MAX_OPT_OUT_KEYWORDS)
    .nullable()
    .optional()
    .describe(
      'What opts a contact out when it is the whole message (case, accents, spaces and punctuation around it ignored), or a quick-reply ' +
        'button\'s payload or text, or an interactive reply\'s id or title. Null: the defaults (STOP, UNSUBSCRIBE, ARRET, BAJA, PARAR, STOPP).',
    )
    .meta({ example: ['STOP', 'UNSUBSCRIBE', 'STOP_PROMOTIONS'] }),
  frequencyCap: frequencyCapInputSchema.nullable().optional(),
});
export type WhatsAppChannelInput = z.infer<typeof whatsappChannelInputSchema>;

export const whatsappChannelSchema = z
  .object({
    configured: z.boolean().describe('Whether the account has set its number and token. False: WhatsApp messages are written to the outbox folder instead.'),
    phoneNumberId: z.string().nullable().meta({ example: '106540352242922' }),
    accessToken: z
      .object({ configured: z.boolean(), last4: z.string().nullable().describe('The token\'s last 4 characters, to tell tokens apart.').meta({ example: 'x9Qz' }) })
      .describe('The token itself is never shown.'),
    maxPerSecond: z.number().int().describe('The rate in force: the account\'s, capped by WHATSAPP_MAX_PER_SECOND; else WHATSAPP_MAX_PER_SECOND.').meta({ example: 20 }),
    appSecret: z
      .object({ configured: z.boolean().describe('Whether the account set its own; false: the server\'s WHATSAPP_APP_SECRET checks its posts.') })
      .describe('The Meta app secret itself is never shown.'),
    verifyToken: z
      .object({ configured: z.boolean().describe('Whether the account set its own (the server\'s WHATSAPP_VERIFY_TOKEN is always accepted too).') })
      .describe('The verify token itself is never shown.'),
    optOutKeywords: z
      .array(z.string())
      .describe('The opt-out keywords in force: the account\'s, else the defaults.')
      .meta({ example: ['STOP', 'UNSUBSCRIBE', 'ARRET', 'BAJA', 'PARAR', 'STOPP'] }),
    frequencyCap: frequencyCapSchema,
  })
  .meta({ id: 'WhatsAppChannel' });
export type WhatsAppChannelDto = z.infer<typeof whatsappChannelSchema>;
