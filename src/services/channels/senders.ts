import type { Database } from '../../db/database';
import { openChannelSecret } from './channel-secrets';
import type { ChannelSettings } from './channel-settings';
import { emailChannelRows, type EmailChannelRow } from './email-channel';
import { cappedRate } from './rates';
import { whatsappChannelRows, type WhatsAppChannelRow } from './whatsapp-channel';

// What the sender uses, per account, with its secrets decrypted: the account's settings, else
// the server's. Set-based: one statement for any number of accounts. The values stay in
// memory: they are never logged nor answered (docs/channels.md "Secrets at rest").

export interface EmailSender {
  // Null when neither the account nor EMAIL_FROM gives one.
  from: string | null;
  replyTo: string | null;
  // The account's relay, else SMTP_URL; null: emails go to the outbox folder.
  smtpUrl: string | null;
  dkim: { domainName: string; keySelector: string; privateKey: string } | null;
  maxPerSecond: number;
  // The domain of the envelope sender's VERP address (src/services/bounces/verp-address.ts):
  // BOUNCE_DOMAIN for now; null: the envelope sender is the From, and late bounces cannot come back.
  bounceDomain: string | null;
}

export interface WhatsAppSender {
  phoneNumberId: string | null;
  // Null: the account has no token; messages go to the outbox folder.
  accessToken: string | null;
  apiUrl: string;
  maxPerSecond: number;
}

function emailSender(accountId: string, row: EmailChannelRow | undefined, settings: ChannelSettings): EmailSender {
  const smtpUrl = row?.smtp_url_secret ? openChannelSecret(settings, accountId, 'email_channels.smtp_url_secret', row.smtp_url_secret) : (settings.smtpUrl ?? null);
  const dkim =
    row?.dkim_private_key_secret && row.dkim_domain && row.dkim_selector
      ? {
          domainName: row.dkim_domain,
          keySelector: row.dkim_selector,
          privateKey: openChannelSecret(settings, accountId, 'email_channels.dkim_private_key_secret', row.dkim_private_key_secret),
        }
      : null;
  return {
    from: row?.from_address ?? settings.emailFrom ?? null,
    replyTo: row?.reply_to ?? null,
    smtpUrl,
    dkim,
    maxPerSecond: cappedRate(row?.max_per_second ?? null, settings.emailMaxPerSecond),
    bounceDomain: settings.bounceDomain ?? null,
  };
}

function whatsappSender(accountId: string, row: WhatsAppChannelRow | undefined, settings: ChannelSettings): WhatsAppSender {
  return {
    phoneNumberId: row?.phone_number_id ?? null,
    accessToken: row ? openChannelSecret(settings, accountId, 'whatsapp_channels.access_token_secret', row.access_token_secret) : null,
    apiUrl: settings.whatsappApiUrl,
    maxPerSecond: cappedRate(row?.max_per_second ?? null, settings.whatsappMaxPerSecond),
  };
}

export async function resolveEmailSenders(db: Database, accountIds: readonly string[], settings: ChannelSettings): Promise<Map<string, EmailSender>> {
  const unique = [...new Set(accountIds)];
  const rows = await emailChannelRows(db, unique);
  return new Map(unique.map((accountId) => [accountId, emailSender(accountId, rows.get(accountId), settings)]));
}

export async function resolveEmailSender(db: Database, accountId: string, settings: ChannelSettings): Promise<EmailSender> {
  return (await resolveEmailSenders(db, [accountId], settings)).get(accountId)!;
}

export async function resolveWhatsAppSenders(db: Database, accountIds: readonly string[], settings: ChannelSettings): Promise<Map<string, WhatsAppSender>> {
  const unique = [...new Set(accountIds)];
  const rows = await whatsappChannelRows(db, unique);
  return new Map(unique.map((accountId) => [accountId, whatsappSender(accountId, rows.get(accountId), settings)]));
}

export async function resolveWhatsAppSender(db: Database, accountId: string, settings: ChannelSettings): Promise<WhatsAppSender> {
  return (await resolveWhatsAppSenders(db, [accountId], settings)).get(accountId)!;
}
