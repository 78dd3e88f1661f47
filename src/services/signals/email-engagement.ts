import type { Database } from '../../db/database';
import { parseJson } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
import type { ActivitySettings } from '../activities/activity-settings';
import type { ChannelSettings } from '../channels/channel-settings';
import { isSet } from '../channels/email-channel';
import { prefetcherOf } from './prefetchers';
import { recordSignals, type Signal } from './record-signals';
import { verifyTrackingToken, type TrackingKind, type TrackingTarget } from './tracking-token';

// What an open pixel's load and a tracked link's click record (docs/activities.md "Engagement
// signals"), for the message its token names:
// - `email.opened`, id `email.opened:<messageId>`: the first load of the pixel. Later loads (a
//   reader opening again, a client reloading) find it stored and record nothing. A load by a
//   known proxy (prefetchers.ts) is recorded with `prefetched: true` and `proxy`; it is the
//   message's one open too (the first one stands).
// - `email.clicked`, id `email.clicked:<messageId>:<link>`: the first click on each distinct
//   link of the message; the redirect is answered on every click.
// Only while the account's tracking is on (turned off, the pixels and links of emails sent
// before still answer, and record nothing). A HEAD request (link scanners, previews) records
// nothing. The message is read by the id and account the token names: a message deleted since
// (with its contact) records nothing, and its links answer 404.

export interface TrackingRequest {
  token: string;
  ip?: string;
  userAgent?: string;
  // False for HEAD: answered, never recorded.
  record: boolean;
}

export interface TrackingDeps {
  channels: ChannelSettings;
  activities: ActivitySettings;
}

interface MessageRow {
  id: string;
  account_id: string;
  contact_id: string;
  run_id: string | null;
  sequence_id: string | null;
  step_id: string | null;
  content: string | null;
  track_opens: unknown;
  track_clicks: unknown;
}

// The token's target, or a 404 that says nothing more.
export function readTrackingToken(channels: ChannelSettings, token: string, kind: TrackingKind): TrackingTarget {
  const target = channels.secrets ? verifyTrackingToken(channels.secrets.tracking, token, kind) : null;
  if (!target) throw new NotFoundError('Link');
  return target;
}

async function messageOf(db: Database, target: TrackingTarget): Promise<MessageRow | undefined> {
  const [row] = await select<MessageRow>(
    db,
    `SELECT m.id, m.account_id, m.contact_id, m.run_id, m.sequence_id, m.step_id, m.content, c.track_opens, c.track_clicks
       FROM messages m LEFT JOIN email_channels c ON c.account_id = m.account_id
      WHERE m.id = ? AND m.account_id = ? AND m.channel = 'email' AND m.test = ?`,
    [target.messageId, target.accountId, false],
  );
  return row;
}

// What a sequence matches on: the message and where it was sent from.
const aboutMessage = (row: MessageRow) => ({ messageId: row.id, sequenceId: row.sequence_id, stepId: row.step_id, runId: row.run_id });

export async function recordEmailOpen(db: Database, request: TrackingRequest, deps: TrackingDeps): Promise<void> {
  const target = readTrackingToken(deps.channels, request.token, 'open');
  if (!request.record) return;
  const row = await messageOf(db, target);
  if (!row || !isSet(row.track_opens)) return;
  const proxy = prefetcherOf(request);
  const signal: Signal = {
    accountId: row.account_id,
    contactId: row.contact_id,
    id: `email.opened:${row.id}`,
    name: 'email.opened',
    properties: { ...aboutMessage(row), prefetched: proxy !== null, ...(proxy ? { proxy } : {}) },
  };
  await recordSignals(db, [signal], deps.activities);
}

// The link's target as the message was sent with it; a 404 for a link the message does not
// have (another index, a message gone): never a redirect anywhere else.
export async function followTrackedLink(db: Database, request: TrackingRequest, deps: TrackingDeps): Promise<string> {
  const target = readTrackingToken(deps.channels, request.token, 'click');
  const row = await messageOf(db, target);
  const links = row?.content ? (parseJson(row.content) as { links?: unknown } | null)?.links : undefined;
  const url = Array.isArray(links) ? links[target.link] : undefined;
  if (!row || typeof url !== 'string' || !/^https?:\/\//i.test(url)) throw new NotFoundError('Link');
  if (request.record && isSet(row.track_clicks)) {
    await recordSignals(
      db,
      [
        {
          accountId: row.account_id,
          contactId: row.contact_id,
          id: `email.clicked:${row.id}:${target.link}`,
          name: 'email.clicked',
          properties: { ...aboutMessage(row), url, link: target.link },
        },
      ],
      deps.activities,
    );
  }
  return url;
}
