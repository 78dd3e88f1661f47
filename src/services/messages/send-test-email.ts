import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { z } from 'zod';
import { SendRefusedError, ValidationError } from '../../errors/app-errors';
import type { MessagePreview } from '../../schemas/message-preview';
import type { ChannelSettings } from '../channels/channel-settings';
import { fromRefusal, resolveEmailSender, signingFor } from '../channels/senders';
import { newRowId } from '../ids';
import { unsubscribeUrl } from '../unsubscribe/unsubscribe-links';
import { buildEmail } from './build-email';
import { messageAddresses } from '../bounces/bounce-addresses';
import { captureEmail } from './email-capture';
import { markCaptured, markFailed, markSending, markSent, queueMessages } from './message-store';
import { providerIdOf, smtpErrorVerdict } from './smtp-transports';
import { countTestSend, quietly, type TestSendDeps, type TestSendInput, type TestSendResult } from './test-sends';

const EMAIL = z.email();

// "Send a test" of an email step (send-test-message.ts): the step as edited, rendered for the
// preview's contact exactly as preview-message.ts renders it, built by build-email.ts as the
// engine builds a real one (From, Reply-To, Message-ID, List-Unsubscribe, DKIM), and sent once
// to the typed address through the account's relay (or SMTP_URL), else captured as an .eml file.
// It is recorded as a message with `test` true and no run, sequence nor step: it is in no run's
// timeline, no analytics counter (those come from the engine's executions), no contact's
// message list, and it makes no message.* event.

type EmailPreview = Extract<MessagePreview, { channel: 'email' }>;

export async function sendTestEmail(db: Database, input: TestSendInput, preview: EmailPreview, settings: ChannelSettings, deps: TestSendDeps): Promise<TestSendResult> {
  if (!EMAIL.safeParse(input.to).success) throw new ValidationError('to: must be an email address', [{ path: 'to', message: 'must be an email address' }]);
  if (!preview.from) {
    const message = "No From address: set the account's email channel, or EMAIL_FROM";
    throw new ValidationError(message, [{ path: 'step.from', message }]);
  }
  const sender = await resolveEmailSender(db, input.accountId, settings);
  // As a step's send: through the shared relay, only From a verified domain.
  const refusal = fromRefusal(sender, preview.from);
  if (refusal) throw new ValidationError(refusal, [{ path: 'step.from', message: refusal }]);
  await countTestSend(deps, input.accountId);

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

  if (!sender.smtpUrl) {
    const file = await captureEmail(deps.outboxDir, messageKey, mail);
    await withTransaction(db, (transaction) => markCaptured(db, [{ id }], quietly(deps), transaction));
    return { messageId: id, channel: 'email', status: 'captured', to: input.to, subject: preview.subject, response: null, captured: file };
  }
  try {
    // One attempt, bounded by the pool's connection, greeting and socket timeouts.
    const info = await deps.transports.send(sender.smtpUrl, mail);
    await withTransaction(db, (transaction) => markSent(db, [{ id, providerMessageId: providerIdOf(info) }], quietly(deps), transaction));
    return { messageId: id, channel: 'email', status: 'sent', to: input.to, subject: preview.subject, response: info.response ?? null, captured: null };
  } catch (error) {
    // Any refusal (4xx, 5xx) or a server that cannot be reached: the test failed, once, and says why.
    const reason = smtpErrorVerdict(error).reason;
    await withTransaction(db, (transaction) => markFailed(db, [{ id, error: reason }], quietly(deps), transaction));
    throw new SendRefusedError(`The test was not sent: ${reason}`);
  }
}
