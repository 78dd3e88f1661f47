import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { RateLimitedError, SendRefusedError, ValidationError } from '../../errors/app-errors';
import type { StepInput } from '../../schemas/sequence-definition';
import type { ChannelSettings } from '../channels/channel-settings';
import { fromRefusal, resolveEmailSender, signingFor } from '../channels/senders';
import type { NewEventOf } from '../../schemas/event';
import { newRowId } from '../ids';
import { unsubscribeUrl } from '../unsubscribe/unsubscribe-links';
import { buildEmail } from './build-email';
import { messageAddresses } from '../bounces/bounce-addresses';
import { captureEmail } from './email-capture';
import { markCaptured, markFailed, markSending, markSent, queueMessages } from './message-store';
import { previewMessage } from './preview-message';
import { providerIdOf, smtpErrorVerdict, type SmtpTransports } from './smtp-transports';

// The message editor's "Send a test" (docs/dashboard.md): the step as edited, rendered for the
// preview's contact exactly as preview-message.ts renders it, built by build-email.ts as the
// engine builds a real one (From, Reply-To, Message-ID, List-Unsubscribe, DKIM), and sent once
// to the typed address through the account's relay (or SMTP_URL), else captured as an .eml file.
// It is recorded as a message with `test` true and no run, sequence nor step: it is in no run's
// timeline, no analytics counter (those come from the engine's executions), no contact's
// message list, and it makes no message.* event.

export interface TestSendDeps {
  transports: SmtpTransports;
  // DATA_DIR/outbox, as the engine's.
  outboxDir: string;
  // The limit's store: the dashboard's shared sliding log (src/http/rate-limit), by account.
  log: { hit(key: string, windowMs: number, limit: number): Promise<{ hits: number; oldestMs: number }> };
  limitPerMinute: number;
  now: () => Date;
}

export const DEFAULT_TEST_SENDS_PER_MINUTE = 10;

export interface TestSendResult {
  messageId: string;
  status: 'sent' | 'captured';
  to: string;
  subject: string;
  // The server's answer ("250 Ok: queued as …"), or where the .eml file was written.
  response: string | null;
  captured: string | null;
}

export async function sendTestEmail(
  db: Database,
  input: { accountId: string; sequenceId: string; stepId: string; contactId: string; draft?: StepInput; to: string },
  settings: ChannelSettings,
  deps: TestSendDeps,
): Promise<TestSendResult> {
  // Rendered (and checked: another account's sequence or contact is a 404, a template that does
  // not parse a 400) before anything is counted or written.
  const preview = await previewMessage(db, input, settings);
  if (preview.channel !== 'email') {
    throw new ValidationError('Only an email step can be sent as a test', [{ path: 'stepId', message: 'Only an email step can be sent as a test' }]);
  }
  if (!preview.from) {
    const message = "No From address: set the account's email channel, or EMAIL_FROM";
    throw new ValidationError(message, [{ path: 'step.from', message }]);
  }
  const sender = await resolveEmailSender(db, input.accountId, settings);
  // As a step's send: through the shared relay, only From a verified domain.
  const refusal = fromRefusal(sender, preview.from);
  if (refusal) throw new ValidationError(refusal, [{ path: 'step.from', message: refusal }]);
  const { hits, oldestMs } = await deps.log.hit(`test-send:${input.accountId}`, 60_000, deps.limitPerMinute);
  if (hits > deps.limitPerMinute) {
    const seconds = Math.max(1, Math.ceil((oldestMs + 60_000 - Date.now()) / 1000));
    throw new RateLimitedError(`At most ${deps.limitPerMinute} test sends a minute: try again in ${seconds} s`);
  }

  const now = deps.now();
  const messageKey = `test-${newRowId()}`;
  // Queued first: the envelope sender and the unsubscribe mailbox name the message's row.
  const { id, mail } = await withTransaction(db, async (transaction) => {
    const ids = await queueMessages(
      db,
      [{ accountId: input.accountId, contactId: input.contactId, channel: 'email', messageKey, to: input.to, subject: preview.subject, test: true }],
      { now },
      transaction,
    );
    const messageId = ids.get(messageKey)!;
    const { mail, content } = buildEmail({
      messageKey,
      from: preview.from!,
      to: input.to,
      replyTo: preview.headers['Reply-To'] ?? null,
      rendered: { subject: preview.subject, html: preview.html, text: preview.text },
      // The preview contact's own link, as in the body: following it unsubscribes that contact.
      unsubscribeLink: unsubscribeUrl(settings, { accountId: input.accountId, contactId: input.contactId, channel: 'email' }),
      dkim: signingFor(sender, preview.from!),
      date: now,
      addresses: messageAddresses(settings, sender, { id: messageId, accountId: input.accountId, sequenceId: null, stepId: null, from: preview.from! }),
    });
    await markSending(db, [{ id: messageId, content, to: input.to, subject: preview.subject }], { now }, transaction);
    return { id: messageId, mail };
  });
  // Events are collected and dropped: a test is not a message of a sequence's.
  const quiet = () => ({ now: deps.now(), events: new Map<string, NewEventOf[]>() });

  if (!sender.smtpUrl) {
    const file = await captureEmail(deps.outboxDir, messageKey, mail);
    await withTransaction(db, (transaction) => markCaptured(db, [{ id }], quiet(), transaction));
    return { messageId: id, status: 'captured', to: input.to, subject: preview.subject, response: null, captured: file };
  }
  try {
    // One attempt, bounded by the pool's connection, greeting and socket timeouts.
    const info = await deps.transports.send(sender.smtpUrl, mail);
    await withTransaction(db, (transaction) => markSent(db, [{ id, providerMessageId: providerIdOf(info) }], quiet(), transaction));
    return { messageId: id, status: 'sent', to: input.to, subject: preview.subject, response: info.response ?? null, captured: null };
  } catch (error) {
    // Any refusal (4xx, 5xx) or a server that cannot be reached: the test failed, once, and says why.
    const reason = smtpErrorVerdict(error).reason;
    await withTransaction(db, (transaction) => markFailed(db, [{ id, error: reason }], quiet(), transaction));
    throw new SendRefusedError(`The test was not sent: ${reason}`);
  }
}
