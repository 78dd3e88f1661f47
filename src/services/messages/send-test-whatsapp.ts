import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { SendRefusedError, ValidationError } from '../../errors/app-errors';
import type { MessagePreview } from '../../schemas/message-preview';
import type { ChannelSettings } from '../channels/channel-settings';
import { resolveWhatsAppSender } from '../channels/senders';
import { newRowId } from '../ids';
import { markCaptured, markFailed, markSending, markSent, queueMessages } from './message-store';
import { captureWhatsApp } from './whatsapp-capture';
import { sendWhatsAppMessage } from './whatsapp-client';
import { whatsappRecipient } from './whatsapp-recipient';
import { countTestSend, quietly, type TestSendDeps, type TestSendInput, type TestSendResult } from './test-sends';

// "Send a test" of a WhatsApp step (send-test-message.ts): the template message as the preview
// renders it for the preview's contact (its header, body and button parameters), to the number
// typed instead of the contact's, POSTed once to Graph with the account's token as the engine's
// WhatsApp channel posts it (whatsapp-client.ts), or, with no token, captured as JSON under
// DATA_DIR/outbox/ as the engine captures. Recorded as a message with `test` true and no run,
// sequence nor step, and no message.* event, as an email test is. Graph's refusal (a template
// that is not approved, a number that is not on WhatsApp) is a 409 naming Graph's code.

export const DEFAULT_WHATSAPP_TEST_TIMEOUT_MS = 10_000;
const NOT_A_NUMBER = 'must be a phone number in international form, such as +44 7700 900123';

type WhatsAppPreview = Extract<MessagePreview, { channel: 'whatsapp' }>;

export async function sendTestWhatsApp(db: Database, input: TestSendInput, preview: WhatsAppPreview, settings: ChannelSettings, deps: TestSendDeps): Promise<TestSendResult> {
  const recipient = whatsappRecipient(input.to);
  if (!recipient.ok) throw new ValidationError(`to: ${NOT_A_NUMBER}`, [{ path: 'to', message: NOT_A_NUMBER }]);
  const sender = await resolveWhatsAppSender(db, input.accountId, settings);
  await countTestSend(deps, input.accountId);

  const now = deps.now();
  const messageKey = `test-${newRowId()}`;
  // The test's own callback data: a status webhook for it finds this row, never a run's message.
  const request = { ...preview.request, to: recipient.to, biz_opaque_callback_data: messageKey };
  const id = await withTransaction(db, async (transaction) => {
    const ids = await queueMessages(
      db,
      [{ accountId: input.accountId, contactId: input.contactId, channel: 'whatsapp', messageKey, to: recipient.to, subject: null, test: true }],
      { now },
      transaction,
    );
    const messageId = ids.get(messageKey)!;
    await markSending(db, [{ id: messageId, to: recipient.to, subject: null, content: { request } }], { now }, transaction);
    return messageId;
  });
  const result = { messageId: id, channel: 'whatsapp' as const, to: recipient.to, subject: null };

  if (!sender.accessToken || !sender.phoneNumberId) {
    const url = `${sender.apiUrl}/${sender.phoneNumberId ?? '{phoneNumberId}'}/messages`;
    const file = await captureWhatsApp(deps.outboxDir, messageKey, { url, body: request });
    await withTransaction(db, (transaction) => markCaptured(db, [{ id }], quietly(deps), transaction));
    return { ...result, status: 'captured', response: null, captured: file };
  }
  // One attempt, bounded: a test is not retried.
  const answer = await sendWhatsAppMessage(
    { apiUrl: sender.apiUrl, phoneNumberId: sender.phoneNumberId, accessToken: sender.accessToken },
    request,
    { timeoutMs: deps.whatsappTimeoutMs ?? DEFAULT_WHATSAPP_TEST_TIMEOUT_MS },
  );
  if (answer.ok) {
    await withTransaction(db, (transaction) => markSent(db, [{ id, providerMessageId: answer.providerMessageId }], quietly(deps), transaction));
    return { ...result, status: 'sent', response: answer.providerMessageId, captured: null };
  }
  await withTransaction(db, (transaction) => markFailed(db, [{ id, error: answer.error }], quietly(deps), transaction));
  throw new SendRefusedError(`The test was not sent: ${answer.error}`);
}
