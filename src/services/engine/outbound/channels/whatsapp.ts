import type { Database } from '../../../../db/database';
import { withTransaction } from '../../../../db/sql/transaction';
import type { StepOf } from '../../../../schemas/sequence-definition';
import type { ChannelSettings } from '../../../channels/channel-settings';
import { resolveWhatsAppSenders } from '../../../channels/senders';
import type { MessageMetrics } from '../../../messages/message-metrics';
import { markSending } from '../../../messages/message-store';
import { buildTemplateContext } from '../../../messages/render-context';
import { renderWhatsApp, TemplateRenderError, type WhatsAppRequest } from '../../../messages/render-message';
import { captureWhatsApp } from '../../../messages/whatsapp-capture';
import { classifyWhatsAppFailure } from '../../../messages/send-failures';
import { sendWhatsAppMessage } from '../../../messages/whatsapp-client';
import { whatsappRecipient } from '../../../messages/whatsapp-recipient';
import { unsubscribeUrl } from '../../../unsubscribe/unsubscribe-links';
import { suppressedAddresses, suppressedKey } from '../../../suppressions/suppression-store';
import type { Channel, SendResult } from './channel';
import { parseMessageBody } from './message-body';
import { loadMessageTargets, type MessageTarget } from './message-targets';
import type { ClaimedSend } from '../../../runs/outbox';

// The WhatsApp step's channel (docs/sequences.md "Email and WhatsApp steps", docs/channels.md
// "WhatsApp"). load() reads, for a batch of claimed sends and in a few statements whatever its
// size: their messages with their contacts as they are now, their runs and sequences (the
// template's variables), and each account's WhatsApp sender. Then, per message, in the issue's
// order:
//   1. the contact unsubscribed from WhatsApp: skipped `unsubscribed` (the run goes on);
//   1b. its number (E.164 with +) on the account's suppression list (one lookup for the
//      batch): skipped `suppressed`;
//   2. no phone, or one that is not an international number: skipped `no_phone` /
//      `invalid_phone`;
//   3. rendered, biz_opaque_callback_data = the message key, and written `sending` with its
//      request in its own short transaction BEFORE Graph is called: a crash after the call
//      leaves it `sending`, and the send is retried with the same callback data;
//   4. POSTed to Graph with the account's token (whatsapp-client.ts, bounded by timeoutMs), or,
//      with no token, captured as JSON under the data folder's outbox/.
// Graph's answer: 2xx `sent` with messages[0].id; 429 (130429 and the other rate-limit codes),
// 5xx, no answer in time or a lost connection: retried on the webhook step's schedule; a
// sender-side code (190, 368, a template error: messages/send-failures.ts) pauses the channel or
// the step's template; any other 4xx fails the step, with Graph's code. The outcome is written
// by record-outcomes.ts with the run's move, in one transaction.

export interface WhatsAppChannelOptions {
  settings: ChannelSettings;
  // DATA_DIR/outbox: where captured messages are written.
  outboxDir: string;
  // The bound on one call to Graph, from its start to the end of its answer.
  timeoutMs: number;
  now: () => Date;
  metrics?: MessageMetrics;
}

// The batch's numbers as the suppression list keys them (E.164 with its +).
function suppressionPairs(sends: readonly ClaimedSend[], targets: Map<string, MessageTarget>) {
  return sends.flatMap((send) => {
    const recipient = whatsappRecipient(targets.get(send.idempotencyId)?.contact.phone);
    return recipient.ok ? [{ accountId: send.accountId, address: `+${recipient.to}` }] : [];
  });
}

export function whatsappChannel(options: WhatsAppChannelOptions): Channel {
  const { settings } = options;
  return {
    name: 'whatsapp',
    async load(db: Database, sends) {
      const targets = await loadMessageTargets(db, sends);
      const senders = await resolveWhatsAppSenders(db, [...new Set(sends.map((send) => send.accountId))], settings);
      const suppressed = await suppressedAddresses(db, 'whatsapp', suppressionPairs(sends, targets));
      return async (send, signal): Promise<SendResult> => {
        const failed = (reason: string, final: boolean, message?: { id: string }, detail: Record<string, unknown> = {}): SendResult => ({
          ok: false,
          reason,
          detail,
          final,
          abandoned: false,
          message,
        });
        const target = targets.get(send.idempotencyId);
        const body = parseMessageBody(send.body);
        if (!target || !body || body.step.type !== 'whatsapp') return failed(`the message ${send.idempotencyId} cannot be read`, true, target ? { id: target.messageId } : undefined);
        const message = { id: target.messageId };
        // Taken by Graph already (a record that was lost): never sent again.
        if (target.status === 'sent' || target.status === 'captured' || target.status === 'delivered' || target.status === 'read') {
          return { ok: true, reason: null, detail: {}, final: false, abandoned: false, message: { ...message, captured: target.status === 'captured' } };
        }
        // Ended without being sent (skipped, cancelled, failed): never sent now.
        if (target.status !== 'queued' && target.status !== 'sending') return failed(`the message is already ${target.status}`, true, message);
        const { contact } = target;
        const skip = (reason: 'unsubscribed' | 'suppressed' | 'no_phone' | 'invalid_phone'): SendResult => ({ ok: false, reason, detail: {}, final: false, abandoned: false, skipped: reason, message });
        if (contact.whatsapp_subscription_status === 'unsubscribed') return skip('unsubscribed');
        const recipient = whatsappRecipient(contact.phone);
        if (recipient.ok && suppressed.has(suppressedKey(send.accountId, `+${recipient.to}`))) return skip('suppressed');
        if (!recipient.ok) return skip(recipient.reason);

        const sender = senders.get(send.accountId)!;
        const step = body.step as StepOf<'whatsapp'>;
        // A template may show the contact its unsubscribe link; without a secrets key there is
        // none to make, and the variable is empty (WhatsApp needs no link: the user blocks).
        const link = settings.secrets ? unsubscribeUrl(settings, { accountId: send.accountId, contactId: contact.id, channel: 'whatsapp' }) : '';
        let request: WhatsAppRequest;
        try {
          request = renderWhatsApp(
            step,
            buildTemplateContext({
              contact,
              run: target.run,
              sequence: { id: body.sequenceId, name: target.sequenceName, version: body.version },
              unsubscribeUrl: link,
              activities: target.activities,
            }),
            { to: recipient.to, callbackData: send.idempotencyId },
          );
        } catch (error) {
          if (error instanceof TemplateRenderError) return failed(`step "${step.id}": ${error.message}`, !error.overTime, message);
          throw error;
        }
        await withTransaction(db, (transaction) =>
          markSending(db, [{ id: target.messageId, to: recipient.to, subject: null, content: { request } }], { now: options.now() }, transaction),
        );

        if (!sender.accessToken || !sender.phoneNumberId) {
          const url = `${sender.apiUrl}/${sender.phoneNumberId ?? '{phoneNumberId}'}/messages`;
          const file = await captureWhatsApp(options.outboxDir, send.idempotencyId, { url, body: request });
          return { ok: true, reason: null, detail: { captured: file }, final: false, abandoned: false, message: { ...message, captured: true } };
        }
        const answer = await sendWhatsAppMessage(
          { apiUrl: sender.apiUrl, phoneNumberId: sender.phoneNumberId, accessToken: sender.accessToken },
          request,
          { timeoutMs: options.timeoutMs, signal },
        );
        const detail = { responseStatus: answer.status, durationMs: answer.durationMs };
        const observe = (outcome: 'ok' | 'retry' | 'fail') => options.metrics?.providerLatency.observe({ channel: 'whatsapp', outcome }, answer.durationMs / 1000);
        if (answer.ok) {
          observe('ok');
          return { ok: true, reason: null, detail, final: false, abandoned: false, message: { ...message, providerMessageId: answer.providerMessageId } };
        }
        // This process stopping cut it short: sent again with the same callback data.
        if (answer.abandoned) return { ok: false, reason: answer.error, detail, final: false, abandoned: true, message };
        const verdict = classifyWhatsAppFailure(answer);
        observe(verdict.kind === 'soft' || verdict.kind === 'sender' ? 'retry' : 'fail');
        // Who caused it decides what is recorded (record-outcomes.ts): a sender failure (the
        // token, the account, the step's template) pauses and touches no contact.
        return {
          ...failed(verdict.reason, verdict.kind === 'hard_bounce' || verdict.kind === 'rejected', message, { ...detail, error: answer.error, ...(answer.code !== null && { code: answer.code }) }),
          failure: { ...verdict, address: `+${recipient.to}` },
        };
      };
    },
  };
}
