import fs from 'node:fs';
import { z } from 'zod';
import type { Database } from '../db/database';
import { ValidationError } from '../errors/app-errors';
import { emailChannelInputSchema, whatsappChannelInputSchema } from '../schemas/channel';
import { sendingDomainInputSchema } from '../schemas/sending-domain';
import { getEmailChannel, putEmailChannel } from '../services/channels/email-channel';
import { addSendingDomain, deleteSendingDomain, listSendingDomains, verifySendingDomain } from '../services/channels/sending-domains';
import { getWhatsAppChannel, putWhatsAppChannel } from '../services/channels/whatsapp-channel';
import type { CliSettings } from './cli-settings';

// The admin command line's sender commands: GET and PUT /channels/* by account
// (docs/channels.md). As with PUT, a flag left out keeps the stored value and `none` clears it.
// Secrets on a command line are seen by `ps` and kept in shell history: the DKIM key, the
// WhatsApp token, app secret and verify token are read from files, the SMTP URL too when it
// carries a password.

const uuid = z.uuid('must be a UUID');
const orNone = (value: string | undefined) => (value === undefined ? undefined : value === 'none' ? null : value);
const rate = z.string().regex(/^(\d{1,9}|none)$/, 'must be a whole number or none').optional();
// --frequency-cap MAX/PER/wait|skip (2/P1D/wait), or none: the channel's frequencyCap.
const cap = z.string().max(64).optional();
const FREQUENCY_CAP_USAGE = '[--frequency-cap MAX/PER/wait|skip|none]';

function frequencyCap(value: string | undefined): unknown {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  const [max, per, whenCapped] = value.split('/');
  return { max: /^\d+$/.test(max ?? '') ? Number(max) : max, per, whenCapped };
}

function readFile(flag: string, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ValidationError(`--${flag}: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

// The API's own input schema, so the command line refuses what the API refuses, naming the flag.
function parsed<S extends z.ZodType>(schema: S, input: unknown, flags: Record<string, string>): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const field = issue!.path.map(String).join('.');
  throw new ValidationError(`--${flags[field] ?? flags[String(issue!.path[0])] ?? field}: ${issue!.message}`);
}

type Run<S extends z.ZodType> = (db: Database, flags: z.infer<S>, settings: CliSettings) => Promise<unknown>;
function channelCommand<S extends z.ZodType>(definition: { usage: string; flags: S; run: Run<S> }) {
  return definition;
}

const EMAIL_FLAGS = { frequencyCap: 'frequency-cap', from: 'from', replyTo: 'reply-to', smtpUrl: 'smtp-url-file', dkim: 'dkim-key-file', 'dkim.domain': 'dkim-domain', 'dkim.selector': 'dkim-selector', 'dkim.privateKey': 'dkim-key-file', maxPerSecond: 'max-per-second', bounceDomain: 'bounce-domain' };

export const CHANNEL_COMMANDS = {
  'channel:email:get': channelCommand({
    usage: '--account ID',
    flags: z.object({ account: uuid }),
    run: (db, f, settings) => getEmailChannel(db, { accountId: f.account }, settings.channels()),
  }),
  'channel:email:set': channelCommand({
    usage:
      '--account ID --from ADDRESS [--reply-to ADDRESS|none] [--smtp-url-file FILE|none] ' +
      '[--dkim-domain DOMAIN --dkim-selector S --dkim-key-file PEM | --dkim-key-file none] [--max-per-second N|none] [--bounce-domain DOMAIN|none] ' +
      FREQUENCY_CAP_USAGE,
    flags: z.object({
      account: uuid,
      from: z.string().max(254),
      'reply-to': z.string().max(254).optional(),
      'smtp-url-file': z.string().optional(),
      'dkim-domain': z.string().max(253).optional(),
      'dkim-selector': z.string().max(63).optional(),
      'dkim-key-file': z.string().optional(),
      'max-per-second': rate,
      'bounce-domain': z.string().max(253).optional(),
      'frequency-cap': cap,
    }),
    run: async (db, f, settings) => {
      const keyFile = f['dkim-key-file'];
      const dkim =
        keyFile === undefined
          ? undefined
          : keyFile === 'none'
            ? null
            : { domain: f['dkim-domain'] ?? '', selector: f['dkim-selector'] ?? '', privateKey: readFile('dkim-key-file', keyFile) };
      const smtpFile = orNone(f['smtp-url-file']);
      const input = parsed(
        emailChannelInputSchema,
        {
          from: f.from,
          replyTo: orNone(f['reply-to']),
          smtpUrl: typeof smtpFile === 'string' ? readFile('smtp-url-file', smtpFile) : smtpFile,
          dkim,
          maxPerSecond: orNone(f['max-per-second']) === undefined ? undefined : f['max-per-second'] === 'none' ? null : Number(f['max-per-second']),
          bounceDomain: orNone(f['bounce-domain']),
          frequencyCap: frequencyCap(f['frequency-cap']),
        },
        EMAIL_FLAGS,
      );
      return putEmailChannel(db, { accountId: f.account, ...input }, settings.channels());
    },
  }),
  // The sending domains (POST, GET, POST .../verify and DELETE /channels/email/domains).
  'channel:email:domains': channelCommand({
    usage: '--account ID',
    flags: z.object({ account: uuid }),
    run: (db, f, settings) => listSendingDomains(db, { accountId: f.account }, settings.channels()),
  }),
  'channel:email:domain:add': channelCommand({
    usage: '--account ID --domain DOMAIN   (prints the TXT record to publish, and the DKIM, SPF and DMARC records)',
    flags: z.object({ account: uuid, domain: z.string().max(253) }),
    run: async (db, f, settings) => {
      const input = parsed(sendingDomainInputSchema, { domain: f.domain }, { domain: 'domain' });
      return (await addSendingDomain(db, { accountId: f.account, ...input }, settings.channels())).domain;
    },
  }),
  'channel:email:domain:verify': channelCommand({
    usage: '--account ID --domain DOMAIN   (looks its records up now)',
    flags: z.object({ account: uuid, domain: z.string().max(253) }),
    run: (db, f, settings) => verifySendingDomain(db, { accountId: f.account, domain: f.domain }, settings.channels()),
  }),
  'channel:email:domain:delete': channelCommand({
    usage: '--account ID --domain DOMAIN',
    flags: z.object({ account: uuid, domain: z.string().max(253) }),
    run: async (db, f) => {
      await deleteSendingDomain(db, { accountId: f.account, domain: f.domain });
      return { deleted: f.domain };
    },
  }),
  'channel:whatsapp:get': channelCommand({
    usage: '--account ID',
    flags: z.object({ account: uuid }),
    run: (db, f, settings) => getWhatsAppChannel(db, { accountId: f.account }, settings.channels()),
  }),
  'channel:whatsapp:set': channelCommand({
    usage:
      '--account ID --phone-number-id ID [--access-token-file FILE] [--max-per-second N|none] [--app-secret-file FILE|none] ' +
      '[--verify-token-file FILE|none] [--opt-out-keywords WORD,WORD,...|none] ' + FREQUENCY_CAP_USAGE,
    flags: z.object({
      account: uuid,
      'phone-number-id': z.string().max(64),
      'access-token-file': z.string().optional(),
      'max-per-second': rate,
      'app-secret-file': z.string().optional(),
      'verify-token-file': z.string().optional(),
      'opt-out-keywords': z.string().max(4000).optional(),
      'frequency-cap': cap,
    }),
    run: async (db, f, settings) => {
      const tokenFile = f['access-token-file'];
      const secretFile = orNone(f['app-secret-file']);
      const verifyFile = orNone(f['verify-token-file']);
      const keywords = orNone(f['opt-out-keywords']);
      const input = parsed(
        whatsappChannelInputSchema,
        {
          phoneNumberId: f['phone-number-id'],
          accessToken: tokenFile === undefined ? undefined : readFile('access-token-file', tokenFile),
          maxPerSecond: f['max-per-second'] === undefined ? undefined : f['max-per-second'] === 'none' ? null : Number(f['max-per-second']),
          appSecret: typeof secretFile === 'string' ? readFile('app-secret-file', secretFile) : secretFile,
          verifyToken: typeof verifyFile === 'string' ? readFile('verify-token-file', verifyFile) : verifyFile,
          optOutKeywords: typeof keywords === 'string' ? keywords.split(',') : keywords,
          frequencyCap: frequencyCap(f['frequency-cap']),
        },
        {
          phoneNumberId: 'phone-number-id',
          accessToken: 'access-token-file',
          maxPerSecond: 'max-per-second',
          appSecret: 'app-secret-file',
          verifyToken: 'verify-token-file',
          optOutKeywords: 'opt-out-keywords',
          frequencyCap: 'frequency-cap',
        },
      );
      return putWhatsAppChannel(db, { accountId: f.account, ...input }, settings.channels());
    },
  }),
} as const;
