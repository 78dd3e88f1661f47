import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { messageOfBounceAddress } from './bounce-addresses';
import type { ParsedReport } from './parse-report';
import { messageKeyOf } from './parse-report';
import type { Feedback, FeedbackKind } from './record-feedback';
import { permanentEnhancedKind } from '../messages/send-failures';

// What a report sent to the listener comes to, for the message its address (or, for an ARF
// report, its Original-Mail-From or the original's Message-ID) names.

// RFC 5965's types that are a recipient's complaint; `not-spam` and `auth-failure` (RFC 6591,
// a DMARC failure report) are not.
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

// A DSN's recipients, the worst first: a DSN to one VERP address is about one message, sent to
// one recipient.
// - failed with 5.x.x: as an answer when sending is (permanentEnhancedKind): a hard bounce when
//   the code names the address (5.1.x, 5.2.1, 5.5.x), else rejected (5.7.x policy or content);
// - failed with 4.x.x (or no status), delayed: soft;
// - delivered: delivered (a success DSN, sent only when asked for).
export function dsnKind(report: Extract<ParsedReport, { type: 'dsn' }>): { kind: FeedbackKind; detail: string } | null {
  const ranked: Array<{ kind: FeedbackKind; detail: string; rank: number }> = report.recipients.map((recipient) => {
    const detail = [recipient.status, recipient.diagnostic].filter(Boolean).join(' ') || recipient.action;
    if (recipient.action === 'failed' && recipient.status?.startsWith('5.')) {
      return permanentEnhancedKind(recipient.status) === 'rejected' ? { kind: 'rejected' as const, detail, rank: 3 } : { kind: 'hard_bounce' as const, detail, rank: 4 };
    }
    if (recipient.action === 'failed' || recipient.action === 'delayed') return { kind: 'soft_bounce' as const, detail, rank: 2 };
    if (recipient.action === 'delivered') return { kind: 'delivered' as const, detail, rank: 1 };
    return { kind: 'soft_bounce' as const, detail, rank: 0 };
  });
  const worst = ranked.filter((entry) => entry.rank > 0).sort((a, b) => b.rank - a.rank)[0];
  return worst ? { kind: worst.kind, detail: worst.detail } : null;
}

export function isComplaint(report: ParsedReport): report is Extract<ParsedReport, { type: 'arf' }> {
  return report.type === 'arf' && COMPLAINT_TYPES.has(report.feedbackType);
}

// An ARF report that came to another address of the bounce domain (a feedback loop's): the
// message its Original-Mail-From's VERP token names, else the one its original's Message-ID is.
export async function messageOfReport(
  db: Database,
  settings: { key: Buffer; bounceDomain?: string },
  report: Extract<ParsedReport, { type: 'arf' }>,
): Promise<string | null> {
  const byToken = report.originalMailFrom ? messageOfBounceAddress(settings, report.originalMailFrom) : null;
  if (byToken) return byToken;
  const keys = report.messageIds.map(messageKeyOf).filter((key): key is string => key !== null);
  if (keys.length === 0) return null;
  const rows = await select<{ id: string }>(db, "SELECT id FROM messages WHERE message_key IN (?) AND channel = 'email'", [keys]);
  return rows.length === 1 ? rows[0]!.id : null;
}

export function feedbackOf(messageId: string, report: ParsedReport, at: Date): Feedback | null {
  if (report.type === 'dsn') {
    const verdict = dsnKind(report);
    return verdict ? { kind: verdict.kind, messageId, at, detail: verdict.detail } : null;
  }
  if (isComplaint(report)) return { kind: 'complaint', messageId, at, detail: report.feedbackType };
  return null;
}
