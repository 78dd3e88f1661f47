import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Database } from '../../db/database';
import { toIso, toIsoOrNull } from '../../db/sql/rows';
import { execute, insertIgnoringConflicts, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { ConflictError, NotFoundError, ValidationError } from '../../errors/app-errors';
import type { DnsCheck, SendingDomainDto } from '../../schemas/sending-domain';
import { newRowId } from '../ids';
import type { ChannelSettings } from './channel-settings';
import { emailChannelRows, type EmailChannelRow } from './email-channel';
import { dkimAligns, operatorDomains } from './sender-domains';
import { lookupTxt, type TxtLookup } from './txt-lookup';

// /channels/email/domains (docs/channels.md "Verified sending domains and the DNS records"):
// the domains an account may send From through the server's shared relay. Adding one answers
// the TXT record that proves control (_svc-verify.<domain> = its token) and the DKIM, SPF and
// DMARC records to publish, each with what the resolver saw. A domain is verified once the token
// is seen; it stays verified (a later lookup that fails or misses changes nothing but the report).

interface DomainRow {
  id: string;
  account_id: string;
  domain: string;
  token: string;
  verified_at: unknown;
  last_checked_at: unknown;
  created_at: unknown;
}

const COLUMNS = 'id, account_id, domain, token, verified_at, last_checked_at, created_at';

// As domainNameSchema keeps it; a path parameter may come percent-encoded (the REST adapter
// leaves it so), with a trailing dot or capitals.
function canonical(domain: string): string {
  let text = domain;
  try {
    text = decodeURIComponent(domain);
  } catch {
    // Not percent-encoding: taken as it is (and found nowhere).
  }
  return text.trim().toLowerCase().replace(/\.$/, '');
}

async function domainRows(db: Database, accountId: string, domain?: string): Promise<DomainRow[]> {
  const [filter, values] = domain === undefined ? ['', [accountId]] : [' AND domain = ?', [accountId, canonical(domain)]];
  return select<DomainRow>(db, `SELECT ${COLUMNS} FROM email_domains WHERE account_id = ?${filter} ORDER BY domain`, values);
}

async function oneDomain(db: Database, accountId: string, domain: string): Promise<DomainRow> {
  const [row] = await domainRows(db, accountId, domain);
  if (!row) throw new NotFoundError('Sending domain');
  return row;
}

// The verified domains of each account, the server's own included: one statement.
export async function verifiedDomains(db: Database, accountIds: readonly string[], settings: ChannelSettings): Promise<Map<string, string[]>> {
  const unique = [...new Set(accountIds)];
  const shared = operatorDomains(settings);
  const result = new Map(unique.map((accountId) => [accountId, [...shared]]));
  if (unique.length === 0) return result;
  const rows = await select<{ account_id: string; domain: string }>(
    db,
    'SELECT account_id, domain FROM email_domains WHERE account_id IN (?) AND verified_at IS NOT NULL',
    [unique],
  );
  for (const row of rows) result.get(row.account_id)!.push(row.domain);
  return result;
}

// What the From checks need of an account, without opening any secret: whether its mail goes
// through the server's shared relay, the domains verified for it, and the From a step without
// its own is sent from (the account's sender, else EMAIL_FROM; null: none).
export interface SendingRules {
  sharedRelay: boolean;
  verifiedDomains: string[];
  defaultFrom: string | null;
}

export async function sendingRules(db: Database, accountId: string, settings: ChannelSettings): Promise<SendingRules> {
  const [channels, verified] = await Promise.all([emailChannelRows(db, [accountId]), verifiedDomains(db, [accountId], settings)]);
  const channel = channels.get(accountId);
  return { sharedRelay: !channel?.smtp_url_secret && Boolean(settings.smtpUrl), verifiedDomains: verified.get(accountId)!, defaultFrom: channel?.from_address ?? settings.emailFrom ?? null };
}

// What an SPF record should name: the relay the account's mail leaves through.
function relayMechanism(channel: EmailChannelRow | undefined, settings: ChannelSettings): string | null {
  const host = channel?.smtp_host ? new URL(`smtp://${channel.smtp_host}`).hostname : settings.smtpUrl ? new URL(settings.smtpUrl).hostname : null;
  if (!host) return null;
  const bare = host.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  return family === 4 ? `ip4:${bare}` : family === 6 ? `ip6:${bare}` : `a:${bare}`;
}

interface Expected {
  purpose: DnsCheck['purpose'];
  name: string | null;
  value: string | null;
  // Which of the name's records are of this kind (SPF and DMARC share names with others).
  ofKind: (record: string) => boolean;
  matches: (record: string) => boolean;
  // More than one record of the kind is an error for receivers.
  single?: string;
}

function expectedRecords(row: DomainRow, channel: EmailChannelRow | undefined, settings: ChannelSettings): Expected[] {
  const { domain } = row;
  const dkim =
    channel?.dkim_domain && channel.dkim_selector && channel.dkim_public_key && dkimAligns(channel.dkim_domain, domain)
      ? { name: `${channel.dkim_selector}._domainkey.${channel.dkim_domain}`, key: channel.dkim_public_key }
      : null;
  const mechanism = relayMechanism(channel, settings);
  const tokens = (record: string) => record.toLowerCase().split(/\s+/).map((term) => term.replace(/^\+/, ''));
  return [
    { purpose: 'verification', name: `_svc-verify.${domain}`, value: row.token, ofKind: () => true, matches: (record) => record.trim() === row.token },
    {
      purpose: 'dkim',
      name: dkim?.name ?? null,
      value: dkim ? `v=DKIM1; k=rsa; p=${dkim.key}` : null,
      ofKind: () => true,
      matches: (record) => dkim !== null && record.replace(/\s+/g, '').includes(`p=${dkim.key}`),
    },
    {
      purpose: 'spf',
      name: domain,
      value: mechanism ? `v=spf1 ${mechanism} ~all` : null,
      ofKind: (record) => /^v=spf1(\s|$)/i.test(record.trim()),
      matches: (record) => mechanism === null || tokens(record).includes(mechanism.toLowerCase()),
      single: 'SPF',
    },
    {
      purpose: 'dmarc',
      name: `_dmarc.${domain}`,
      value: 'v=DMARC1; p=none; adkim=r; aspf=r',
      ofKind: (record) => /^v=DMARC1\s*(;|$)/i.test(record.trim()),
      matches: () => true,
      single: 'DMARC',
    },
  ];
}

function judged(expected: Expected, lookup: TxtLookup | undefined): DnsCheck {
  const base = { purpose: expected.purpose, type: 'TXT' as const, name: expected.name, value: expected.value };
  if (expected.purpose === 'dkim' && expected.name === null) {
    return { ...base, seen: null, status: 'no_key', problem: 'The account has no DKIM key for this domain or a parent of it (PUT /channels/email, dkim)' };
  }
  if (!lookup) return { ...base, seen: null, status: 'not_checked', problem: null };
  if (!lookup.ok) return { ...base, seen: null, status: 'lookup_failed', problem: lookup.problem };
  const seen = lookup.records.filter(expected.ofKind);
  if (seen.length === 0) return { ...base, seen, status: 'missing', problem: null };
  if (expected.single && seen.length > 1) {
    return { ...base, seen, status: 'mismatch', problem: `${seen.length} ${expected.single} records: receivers treat more than one as an error; keep one` };
  }
  if (seen.some(expected.matches)) return { ...base, seen, status: 'found', problem: null };
  return { ...base, seen, status: 'mismatch', problem: 'A record is there, with other contents than the value to publish' };
}

function toDto(row: DomainRow, checks: DnsCheck[]): SendingDomainDto {
  return {
    domain: row.domain,
    status: row.verified_at ? 'verified' : 'pending',
    verifiedAt: toIsoOrNull(row.verified_at),
    lastCheckedAt: toIsoOrNull(row.last_checked_at),
    createdAt: toIso(row.created_at),
    records: checks,
  };
}

// Every lookup at once, each bounded (txt-lookup.ts): a check costs one timeout at most.
async function checkDomain(db: Database, row: DomainRow, settings: ChannelSettings): Promise<SendingDomainDto> {
  const channel = (await emailChannelRows(db, [row.account_id])).get(row.account_id);
  const expected = expectedRecords(row, channel, settings);
  const lookups = await Promise.all(
    expected.map((record) => (record.name === null ? undefined : lookupTxt(record.name, settings.resolveTxt, settings.txtTimeoutMs))),
  );
  const checks = expected.map((record, index) => judged(record, lookups[index]));
  const now = new Date();
  const proven = checks[0]!.status === 'found';
  // Conditional in the statement: the first sighting stamps verified_at, later ones keep it.
  await withTransaction(db, (transaction) =>
    execute(
      db,
      `UPDATE email_domains SET last_checked_at = ?, updated_at = ?${proven ? ', verified_at = COALESCE(verified_at, ?)' : ''} WHERE id = ?`,
      proven ? [now, now, now, row.id] : [now, now, row.id],
      transaction,
    ),
  );
  const [stored] = await domainRows(db, row.account_id, row.domain);
  return toDto(stored ?? row, checks);
}

export async function listSendingDomains(
  db: Database,
  input: { accountId: string },
  settings: ChannelSettings,
): Promise<{ domains: SendingDomainDto[]; operatorDomains: string[] }> {
  const [rows, channels] = await Promise.all([domainRows(db, input.accountId), emailChannelRows(db, [input.accountId])]);
  const channel = channels.get(input.accountId);
  return {
    domains: rows.map((row) => toDto(row, expectedRecords(row, channel, settings).map((record) => judged(record, undefined)))),
    operatorDomains: operatorDomains(settings),
  };
}

// Adding a domain the account has already added answers it (created: false), checked again.
// Two adds at once leave one row (the unique index), with one token.
export async function addSendingDomain(
  db: Database,
  input: { accountId: string; domain: string },
  settings: ChannelSettings,
): Promise<{ domain: SendingDomainDto; created: boolean }> {
  const domain = canonical(input.domain);
  if (operatorDomains(settings).includes(domain)) {
    const message = "is this server's own domain (EMAIL_FROM or BOUNCE_DOMAIN): verified for every account already";
    throw new ValidationError(`domain: ${message}`, [{ path: 'domain', message }]);
  }
  const id = newRowId();
  const now = new Date();
  await withTransaction(db, (transaction) =>
    insertIgnoringConflicts(
      db,
      'email_domains',
      ['id', 'account_id', 'domain', 'token', 'verified_at', 'last_checked_at', 'created_at', 'updated_at'],
      [[id, input.accountId, domain, `svc-verify=${randomBytes(16).toString('hex')}`, null, null, now, now]],
      transaction,
    ),
  );
  const row = await oneDomain(db, input.accountId, domain);
  return { domain: await checkDomain(db, row, settings), created: row.id === id };
}

export async function verifySendingDomain(db: Database, input: { accountId: string; domain: string }, settings: ChannelSettings): Promise<SendingDomainDto> {
  return checkDomain(db, await oneDomain(db, input.accountId, input.domain), settings);
}

// The account's bounceDomain names it: 409, so that the envelope sender never names a domain
// the account no longer has. The check and the delete are one statement.
export async function deleteSendingDomain(db: Database, input: { accountId: string; domain: string }): Promise<void> {
  const domain = canonical(input.domain);
  const deleted = await withTransaction(db, (transaction) =>
    execute(
      db,
      `DELETE FROM email_domains WHERE account_id = ? AND domain = ?
         AND NOT EXISTS (SELECT 1 FROM email_channels WHERE account_id = ? AND bounce_domain = ?)`,
      [input.accountId, domain, input.accountId, domain],
      transaction,
    ),
  );
  if (deleted > 0) return;
  await oneDomain(db, input.accountId, domain);
  throw new ConflictError(`${domain} is the account's bounceDomain: set another bounceDomain (or null) first`, 'domain_in_use', [
    { path: 'bounceDomain', message: `${domain} is the account's bounce domain` },
  ]);
}
