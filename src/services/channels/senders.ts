import type { Database } from '../../db/database';
import { openChannelSecret } from './channel-secrets';
import type { ChannelSettings } from './channel-settings';
import { emailChannelRows, isSet, type EmailChannelRow } from './email-channel';
import { cappedRate } from './rates';
import { dkimAligns, domainOf, isVerified } from './sender-domains';
import { verifiedDomains } from './sending-domains';
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
  // The envelope sender's domain: the account's verified bounceDomain, else BOUNCE_DOMAIN.
  bounceDomain: string | null;
  // The mail goes through the server's SMTP_URL (the account has no relay of its own): only
  // From a verified domain (fromRefusal).
  sharedRelay: boolean;
  // The account's verified sending domains and the server's own.
  verifiedDomains: string[];
  // The account's open and click tracking (src/services/signals/tracked-html.ts).
  tracking: { opens: boolean; clicks: boolean };
}

export interface WhatsAppSender {
  phoneNumberId: string | null;
  // Null: the account has no token; messages go to the outbox folder.
  accessToken: string | null;
  apiUrl: string;
  maxPerSecond: number;
}

function emailSender(accountId: string, row: EmailChannelRow | undefined, settings: ChannelSettings, verified: string[]): EmailSender {
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
    bounceDomain: row?.bounce_domain ?? settings.bounceDomain ?? null,
    sharedRelay: !row?.smtp_url_secret && Boolean(settings.smtpUrl),
    verifiedDomains: verified,
    tracking: { opens: isSet(row?.track_opens), clicks: isSet(row?.track_clicks) },
  };
}

// Why an email From this address is never sent through this sender, or null. The save of a
// step or of the channel refuses it already (a 400); this holds for what was stored before a
// domain was deleted, or before SMTP_URL was set.
export function fromRefusal(sender: EmailSender, from: string): string | null {
  const domain = domainOf(from);
  if (!sender.sharedRelay || (domain && isVerified(domain, sender.verifiedDomains))) return null;
  return `from_unverified: ${domain ?? from} is not a verified sending domain of the account, and this server's shared relay sends only From verified domains`;
}

// The DKIM signature for a From: only an aligned one (its d= the From's domain or a parent);
// a From in another domain goes unsigned rather than signed with a d= that fails DMARC.
export function signingFor(sender: EmailSender, from: string): EmailSender['dkim'] {
  const domain = domainOf(from);
  return sender.dkim && domain && dkimAligns(sender.dkim.domainName, domain) ? sender.dkim : null;
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
  const [rows, verified] = await Promise.all([emailChannelRows(db, unique), verifiedDomains(db, unique, settings)]);
  return new Map(unique.map((accountId) => [accountId, emailSender(accountId, rows.get(accountId), settings, verified.get(accountId)!)]));
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
