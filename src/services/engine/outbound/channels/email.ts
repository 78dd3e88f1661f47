import type { SendMailOptions } from 'nodemailer';
import { buildEmail } from '../../../messages/build-email';
import type { Database } from '../../../../db/database';
import { withTransaction } from '../../../../db/sql/transaction';
import type { StepOf } from '../../../../schemas/sequence-definition';
import type { ChannelSettings } from '../../../channels/channel-settings';
import { fromRefusal, resolveEmailSenders, signingFor, type EmailSender } from '../../../channels/senders';
import { captureEmail } from '../../../messages/email-capture';
import type { MessageMetrics } from '../../../messages/message-metrics';
import { markSending } from '../../../messages/message-store';
import { buildTemplateContext } from '../../../messages/render-context';
import { renderEmail, TemplateRenderError } from '../../../messages/render-message';
import { isUnknownOutcome } from '../../../messages/smtp-attempt';
import { providerIdOf, smtpErrorVerdict, type SmtpTransports } from '../../../messages/smtp-transports';
import { unsubscribeUrl } from '../../../unsubscribe/unsubscribe-links';
import { trackedHtml } from '../../../signals/tracked-html';
import { messageAddresses } from '../../../bounces/bounce-addresses';
import { normalizeSuppressionAddress, suppressedAddresses, suppressedKey } from '../../../suppressions/suppression-store';
import type { ClaimedSend } from '../../../runs/outbox';
import type { Channel, SendResult } from './channel';
import { loadMessageTargets, type MessageTarget } from './message-targets';
import { parseMessageBody } from './message-body';

// The email step's channel (docs/sequences.md "Email and WhatsApp steps"). load() reads, for a
// batch of claimed sends and in a few statements whatever its size: their messages with their
// contacts as they are now, their runs and sequences (the template's variables), and each
// account's sender. Then, per message, in the order:
//   1. the contact unsubscribed from email: skipped `unsubscribed` (the run goes on);
//   1b. its address on the account's suppression list (one lookup for the batch): skipped
//      `suppressed`;
//   2. no address: skipped `no_email`;
//   3. rendered, and written `sending` with its content (the batch's messages in one short
//      transaction) BEFORE any server is called: a crash after the call leaves the message
//      `sending`, and the send is retried with the same Message-ID (the one thing a receiver
//      can deduplicate on);
//   4. sent through the relay's pooled transport, or, with no relay, captured as an .eml file.
// The outcome (sent, captured, retried, bounced, unknown) is written by record-outcomes.ts with
// the run's move, in one transaction. Unknown: the final dot was written and no reply came (a
// timeout, a lost connection, a stop): the relay may have the message.

export interface EmailChannelOptions {
  settings: ChannelSettings;
  transports: SmtpTransports;
  // DATA_DIR/outbox: where captured messages are written.
  outboxDir: string;
  now: () => Date;
  metrics?: MessageMetrics;
}

// Where the Message-ID is made (kept importable from here).
export { emailMessageId } from '../../../messages/build-email';

export function emailChannel(options: EmailChannelOptions): Channel {
  const { settings } = options;
  return {
    name: 'email',
    // A look claims up to 128 of an account's emails, 32 under way at once (the pool's five
    // connections each with a few queued), the rest begun as those end: one claim, one load,
    // one `sending` write and a few records for a hundred messages, not for a few. The email
    // lease is the longest attempt plus 30 s (engine.ts): one begun within 15 s of its claim
    // ends within it.
    claimAhead: { sends: 96, startWithinMs: 15_000 },
    // An email's outcome waits up to 100 ms for others: recorded together, in a few statements.
    recordLingerMs: 100,
    async load(db: Database, sends) {
      const targets = await loadMessageTargets(db, sends);
      const senders = await resolveEmailSenders(db, [...new Set(sends.map((send) => send.accountId))], settings);
      const suppressed = await suppressedAddresses(db, 'email', suppressionPairs(sends, targets));
      // Each send decided and rendered first; then every message about to go out is written
      // `sending`, with its content, in one short transaction for the batch, BEFORE any server
      // is called (one per message cost more than the sending itself: bench:engine's email case).
      const prepared = new Map(sends.map((send) => [send.id, prepare(send, targets, senders, suppressed)]));
      const ready = [...prepared.values()].filter((p): p is ReadyEmail => 'mail' in p);
      if (ready.length > 0) {
        await withTransaction(db, (transaction) => markSending(db, ready.map((p) => p.sending), { now: options.now() }, transaction));
      }
      return async (send, signal): Promise<SendResult> => {
        const decided = prepared.get(send.id)!;
        if (!('mail' in decided)) return decided;
        const { mail, message, smtpUrl } = decided;
        const began = Date.now();
        const observe = (outcome: 'ok' | 'retry' | 'fail') => options.metrics?.providerLatency.observe({ channel: 'email', outcome }, (Date.now() - began) / 1000);
        if (!smtpUrl) {
          const file = await captureEmail(options.outboxDir, send.idempotencyId, mail);
          return { ok: true, reason: null, detail: { captured: file }, final: false, abandoned: false, message: { ...message, captured: true } };
        }
        try {
          const info = await options.transports.send(smtpUrl, mail, signal);
          observe('ok');
          const providerMessageId = providerIdOf(info);
          return { ok: true, reason: null, detail: { response: info.response }, final: false, abandoned: false, message: { ...message, providerMessageId } };
        } catch (error) {
          // After the final dot, no reply: the server may have it (record-outcomes.ts resends it once).
          if (isUnknownOutcome(error)) {
            observe('retry');
            return { ...failedResult(`unknown outcome: ${smtpErrorVerdict(error).reason}`, false, message), unknownOutcome: true };
          }
          const verdict = smtpErrorVerdict(error);
          // This process stopping cut it short: sent again with the same Message-ID.
          if (signal.aborted && verdict.kind === 'soft') return { ok: false, reason: verdict.reason, detail: {}, final: false, abandoned: true, message };
          observe(verdict.kind === 'soft' || verdict.kind === 'sender' ? 'retry' : 'fail');
          // Who caused it decides what is recorded (record-outcomes.ts): a hard bounce suppresses
          // the address, a sender failure pauses the channel and touches no contact.
          return { ...failedResult(verdict.reason, verdict.kind === 'hard_bounce' || verdict.kind === 'rejected', message), failure: { ...verdict, address: decided.sending.to } };
        }
      };
    },
  };

  // What one claimed send comes to before any server is called: a result already (skipped,
  // failed, or sent before), or the rendered message ready to go.
  function prepare(send: ClaimedSend, targets: Map<string, MessageTarget>, senders: Map<string, EmailSender>, suppressed: Set<string>): SendResult | ReadyEmail {
    const target = targets.get(send.idempotencyId);
    const body = parseMessageBody(send.body);
    if (!target || !body || body.step.type !== 'email') return failedResult(`the message ${send.idempotencyId} cannot be read`, true, target ? { id: target.messageId } : undefined);
    const message = { id: target.messageId };
    // Taken by the server already (a record that was lost), or perhaps taken (unconfirmed): never sent again.
    if (target.status === 'sent' || target.status === 'captured' || target.status === 'unconfirmed' || target.status === 'delivered' || target.status === 'read') {
      return { ok: true, reason: null, detail: {}, final: false, abandoned: false, message: { ...message, captured: target.status === 'captured' } };
    }
    // Ended without being sent (skipped, cancelled, failed): never sent now.
    if (target.status !== 'queued' && target.status !== 'sending') return failedResult(`the message is already ${target.status}`, true, message);
    const { contact } = target;
    const skip = (reason: 'unsubscribed' | 'suppressed' | 'no_email'): SendResult => ({ ok: false, reason, detail: {}, final: false, abandoned: false, skipped: reason, message });
    if (contact.email_subscription_status === 'unsubscribed') return skip('unsubscribed');
    if (suppressed.has(suppressedKey(send.accountId, suppressionAddress(contact.email)))) return skip('suppressed');
    if (!contact.email) return skip('no_email');
    const sender = senders.get(send.accountId)!;
    const step = body.step as StepOf<'email'>;
    const from = step.from ?? sender.from;
    if (!from) return failedResult("no From address: set the account's email channel, or EMAIL_FROM", true, message);
    // Never sent through the shared relay From a domain the account has not verified (the save
    // refuses it too; this holds for what was saved before): failed, no contact touched.
    const refusal = fromRefusal(sender, from);
    if (refusal) return failedResult(refusal, true, message);
    if (!settings.secrets) return failedResult('SECRETS_KEY is not set: no unsubscribe link can be made, so no email is sent', true, message);

    const link = unsubscribeUrl(settings, { accountId: send.accountId, contactId: contact.id, channel: 'email' });
    let rendered;
    try {
      rendered = renderEmail(
        step,
        buildTemplateContext({
          contact,
          run: target.run,
          sequence: { id: body.sequenceId, name: target.sequenceName, version: body.version },
          unsubscribeUrl: link,
          activities: target.activities,
        }),
      );
    } catch (error) {
      if (error instanceof TemplateRenderError) return failedResult(`step "${step.id}": ${error.message}`, !error.overTime, message);
      throw error;
    }
    // Open and click tracking, as the account and the step ask (docs/activities.md "Engagement signals").
    const opens = sender.tracking.opens;
    const clicks = sender.tracking.clicks && step.trackClicks === true;
    const tracked =
      opens || clicks
        ? trackedHtml(rendered.html, {
            key: settings.secrets.tracking,
            publicBaseUrl: settings.publicBaseUrl,
            accountId: send.accountId,
            messageId: target.messageId,
            opens,
            clicks,
            unsubscribeUrl: link,
          })
        : null;
    const { mail, content } = buildEmail({
      messageKey: send.idempotencyId,
      from,
      to: contact.email,
      replyTo: step.replyTo ?? sender.replyTo,
      rendered: tracked ? { ...rendered, html: tracked.html } : rendered,
      links: tracked?.links,
      unsubscribeLink: link,
      dkim: signingFor(sender, from),
      date: options.now(),
      addresses: messageAddresses(settings, sender, { id: target.messageId, accountId: send.accountId, sequenceId: body.sequenceId, stepId: step.id, from }),
    });
    return { mail, message, smtpUrl: sender.smtpUrl, sending: { id: target.messageId, to: contact.email, subject: rendered.subject, content } };
  }
}

// The contact's email as the suppression list keys it ('' for none: never on the list).
function suppressionAddress(email: string | null): string {
  return email ? (normalizeSuppressionAddress('email', email) ?? '') : '';
}

function suppressionPairs(sends: readonly ClaimedSend[], targets: Map<string, MessageTarget>) {
  return sends.flatMap((send) => {
    const address = suppressionAddress(targets.get(send.idempotencyId)?.contact.email ?? null);
    return address ? [{ accountId: send.accountId, address }] : [];
  });
}

interface ReadyEmail {
  mail: SendMailOptions;
  message: { id: string };
  // Null: no relay (the account's nor SMTP_URL): captured as an .eml file.
  smtpUrl: string | null;
  sending: { id: string; to: string; subject: string; content: unknown };
}

function failedResult(reason: string, final: boolean, message?: { id: string }): SendResult {
  return { ok: false, reason, detail: {}, final, abandoned: false, message };
}
