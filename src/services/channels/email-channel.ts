import type { Database } from '../../db/database';
import { forShare, select, upsertRows } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { ValidationError } from '../../errors/app-errors';
import type { EmailChannelDto, EmailChannelInput } from '../../schemas/channel';
import { smtpHost } from '../../schemas/smtp-url';
import { notifyDueWork } from '../runs/due-work';
import { resumeChannelPauses } from './channel-pauses';
import { sealChannelSecret } from './channel-secrets';
import type { ChannelSettings } from './channel-settings';
import { checkDkimKey, dkimDnsRecord } from './dkim-key';
import { cappedRate } from './rates';
import { checkRelayAddress, checkRelayPublicBase } from './relay-policy';
import { dkimAligns, domainOf, isVerified } from './sender-domains';
import { verifiedDomains } from './sending-domains';
import { FREQUENCY_CAP_COLUMNS, frequencyCapValues, toFrequencyCapDto, type FrequencyCapColumns } from './frequency-caps';

// GET and PUT /channels/email (docs/channels.md "Email").

export interface EmailChannelRow extends FrequencyCapColumns {
  account_id: string;
  from_address: string;
  reply_to: string | null;
  smtp_host: string | null;
  smtp_url_secret: string | null;
  dkim_domain: string | null;
  dkim_selector: string | null;
  dkim_public_key: string | null;
  dkim_private_key_secret: string | null;
  max_per_second: number | null;
  bounce_domain: string | null;
  track_opens: boolean | number | string;
  track_clicks: boolean | number | string;
}

export const EMAIL_CHANNEL_COLUMNS =
  'account_id, from_address, reply_to, smtp_host, smtp_url_secret, dkim_domain, dkim_selector, dkim_public_key, dkim_private_key_secret, max_per_second, bounce_domain, track_opens, track_clicks, ' + FREQUENCY_CAP_COLUMNS;

// A boolean column as either database answers it.
export const isSet = (value: unknown) => value === true || value === 1 || value === '1' || value === 'true';

export async function emailChannelRows(db: Database, accountIds: readonly string[]): Promise<Map<string, EmailChannelRow>> {
  if (accountIds.length === 0) return new Map();
  const rows = await select<EmailChannelRow>(db, `SELECT ${EMAIL_CHANNEL_COLUMNS} FROM email_channels WHERE account_id IN (?)`, [accountIds]);
  return new Map(rows.map((row) => [row.account_id, row]));
}

export function toEmailChannelDto(row: EmailChannelRow | undefined, settings: ChannelSettings): EmailChannelDto {
  const ownRelay = Boolean(row?.smtp_url_secret);
  return {
    from: row?.from_address ?? settings.emailFrom ?? null,
    replyTo: row?.reply_to ?? null,
    smtp: ownRelay
      ? { configured: true, host: row!.smtp_host, source: 'account' }
      : settings.smtpUrl
        ? { configured: true, host: smtpHost(settings.smtpUrl), source: 'server' }
        : { configured: false, host: null, source: null },
    dkim:
      row?.dkim_domain && row.dkim_selector && row.dkim_public_key
        ? { domain: row.dkim_domain, selector: row.dkim_selector, dnsRecord: dkimDnsRecord(row.dkim_domain, row.dkim_selector, row.dkim_public_key) }
        : null,
    maxPerSecond: cappedRate(row?.max_per_second ?? null, settings.emailMaxPerSecond),
    bounceDomain: row?.bounce_domain ?? null,
    tracking: { opens: isSet(row?.track_opens), clicks: isSet(row?.track_clicks) },
    frequencyCap: toFrequencyCapDto(row),
  };
}

export async function getEmailChannel(db: Database, input: { accountId: string }, settings: ChannelSettings): Promise<EmailChannelDto> {
  const rows = await emailChannelRows(db, [input.accountId]);
  return toEmailChannelDto(rows.get(input.accountId), settings);
}

export function assertWithinCap(field: string, value: number | null | undefined, cap: number, variable: string): void {
  if (value === null || value === undefined || value <= cap) return;
  const message = `must be at most ${cap}, this server's ${variable}`;
  throw new ValidationError(`${field}: ${message}`, [{ path: field, message }]);
}

// One statement: a field left out is not in the update, so it keeps what is stored, and two
// PUTs at once each write whole values (the last one wins per field), never half of one.
export async function putEmailChannel(
  db: Database,
  input: { accountId: string } & EmailChannelInput,
  settings: ChannelSettings,
): Promise<EmailChannelDto> {
  assertWithinCap('maxPerSecond', input.maxPerSecond, settings.emailMaxPerSecond, 'EMAIL_MAX_PER_SECOND');
  const cap = frequencyCapValues(input.frequencyCap);
  if (input.smtpUrl) checkRelayAddress(input.smtpUrl, settings);
  const dkim = input.dkim ? await checkDkimKey(input.dkim) : input.dkim;
  await checkSendingDomains(db, input, settings);
  if (input.smtpUrl) checkRelayPublicBase(input.smtpUrl, settings);
  const values: Record<string, unknown> = { from_address: input.from };
  if (input.replyTo !== undefined) values.reply_to = input.replyTo;
  if (input.smtpUrl !== undefined) {
    values.smtp_host = input.smtpUrl === null ? null : smtpHost(input.smtpUrl);
    values.smtp_url_secret = input.smtpUrl === null ? null : sealChannelSecret(settings, input.accountId, 'email_channels.smtp_url_secret', input.smtpUrl);
  }
  if (input.dkim !== undefined) {
    values.dkim_domain = input.dkim?.domain ?? null;
    values.dkim_selector = input.dkim?.selector ?? null;
    values.dkim_public_key = dkim ? dkim.publicKey : null;
    values.dkim_private_key_secret = input.dkim
      ? sealChannelSecret(settings, input.accountId, 'email_channels.dkim_private_key_secret', input.dkim.privateKey)
      : null;
  }
  if (input.maxPerSecond !== undefined) values.max_per_second = input.maxPerSecond;
  if (input.bounceDomain !== undefined) values.bounce_domain = input.bounceDomain;
  if (input.tracking?.opens !== undefined) values.track_opens = input.tracking.opens;
  if (input.tracking?.clicks !== undefined) values.track_clicks = input.tracking.clicks;
  for (const [column, value] of cap) values[column] = value;
  const now = new Date();
  const changed = [...Object.keys(values), 'updated_at'];
  const all = { reply_to: null, smtp_host: null, smtp_url_secret: null, dkim_domain: null, dkim_selector: null, dkim_public_key: null, dkim_private_key_secret: null, max_per_second: null, bounce_domain: null, track_opens: false, track_clicks: false, frequency_cap_max: null, frequency_cap_per: null, frequency_cap_when: null, ...values };
  const columns = ['account_id', ...Object.keys(all), 'created_at', 'updated_at'];
  const resumed = await withTransaction(db, async (transaction) => {
    // The bounce domain is one of the account's verified domains, share-locked until this
    // commits: a delete of it at the same time waits, then sees it in use (409).
    if (input.bounceDomain) {
      const [verified] = await select<{ id: string }>(
        db,
        `SELECT id FROM email_domains WHERE account_id = ? AND domain = ? AND verified_at IS NOT NULL${forShare(db)}`,
        [input.accountId, input.bounceDomain],
        transaction,
      );
      if (!verified) {
        const message = `${input.bounceDomain} is not a verified sending domain of the account (POST /channels/email/domains)`;
        throw new ValidationError(`bounceDomain: ${message}`, [{ path: 'bounceDomain', message }]);
      }
    }
    await upsertRows(db, 'email_channels', columns, [[input.accountId, ...Object.values(all), now, now]], ['account_id'], changed, transaction);
    // Saved settings are the sender's answer to a pause: the channel sends again (channel-pauses.ts).
    return resumeChannelPauses(db, { accountId: input.accountId, channel: 'email', by: 'settings' }, transaction);
  });
  if (resumed.length > 0) notifyDueWork();
  return getEmailChannel(db, input, settings);
}

// The From and the DKIM domain as they will be after this PUT (a field left out keeps what is
// stored): through the server's shared relay the From's domain must be verified; whatever the
// relay, the DKIM domain must align with the From (DMARC), or every signed email fails DMARC.
async function checkSendingDomains(db: Database, input: { accountId: string } & EmailChannelInput, settings: ChannelSettings): Promise<void> {
  const stored = (await emailChannelRows(db, [input.accountId])).get(input.accountId);
  const ownRelay = input.smtpUrl === undefined ? Boolean(stored?.smtp_url_secret) : input.smtpUrl !== null;
  const fromDomain = domainOf(input.from)!;
  if (!ownRelay && settings.smtpUrl) {
    const verified = (await verifiedDomains(db, [input.accountId], settings)).get(input.accountId)!;
    if (!isVerified(fromDomain, verified)) {
      const message = `${fromDomain} is not a verified sending domain of the account: add it (POST /channels/email/domains) and publish its TXT record, or use the account's own relay (smtpUrl)`;
      throw new ValidationError(`from: ${message}`, [{ path: 'from', message }]);
    }
  }
  const dkimDomain = input.dkim === undefined ? stored?.dkim_domain : input.dkim?.domain;
  if (dkimDomain && !dkimAligns(dkimDomain, fromDomain)) {
    const message = `${dkimDomain} is not the From's domain (${fromDomain}) or a parent of it: receivers' DMARC checks would fail every signed email`;
    throw new ValidationError(`dkim.domain: ${message}`, [{ path: 'dkim.domain', message }]);
  }
}
