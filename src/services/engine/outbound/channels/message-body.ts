import type { Transaction } from 'sequelize';
import type { Database } from '../../../../db/database';
import type { MessageChannel } from '../../../../schemas/message';
import type { StepOf } from '../../../../schemas/sequence-definition';
import { queueMessages } from '../../../messages/message-store';
import { whatsappRecipient } from '../../../messages/whatsapp-recipient';
import type { ClaimedRun } from '../../claimed-run';
import type { QueuedSend } from '../../../runs/outbox';
import { webhookStepId } from './webhook';

// What an email or WhatsApp step queues: its outbox row's body is the step as the run's version
// has it (the templates), its sequence and version; the contact, its status and the sender
// are read when the message goes (email.ts, whatsapp.ts), so the message honours what changed
// while it waited.

export type MessageStep = StepOf<'email'> | StepOf<'whatsapp'>;

export interface MessageBody {
  step: MessageStep;
  sequenceId: string;
  version: number;
}

// The message's key, one per run, step and visit of that step: the outbox's idempotency id,
// the email's Message-ID (its local part), WhatsApp's biz_opaque_callback_data. The same on
// every retry and after a crash, as a webhook step's id is.
export const messageKey = webhookStepId;

export function composeMessage(run: ClaimedRun, step: MessageStep, stepVisit: number): { idempotencyId: string; body: string } {
  const body: MessageBody = { step, sequenceId: run.sequenceId, version: run.version };
  return { idempotencyId: messageKey(run.id, step.id, stepVisit), body: JSON.stringify(body) };
}

export function parseMessageBody(body: string | null): MessageBody | null {
  if (!body) return null;
  try {
    const parsed = JSON.parse(body) as MessageBody;
    return parsed && typeof parsed === 'object' && parsed.step && typeof parsed.sequenceId === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

// The address the message is queued to, as the contact is when the step begins (the send reads
// it again): its email, or its phone in E.164 digits (as written, when it is not a number).
export function queuedAddress(channel: MessageChannel, contact: { email: string | null; phone: string | null }): string {
  if (channel === 'email') return contact.email ?? '';
  const recipient = whatsappRecipient(contact.phone);
  return recipient.ok ? recipient.to : (contact.phone ?? '');
}

// The `queued` message rows of the message sends written now, in the transaction that queued
// them (the step's begin).
export async function queueStepMessages(db: Database, written: readonly QueuedSend[], now: Date, transaction: Transaction): Promise<void> {
  const messages = written.flatMap(({ outboxId, send, stepVisit, idempotencyId }) => {
    if (!send.message || (send.channel !== 'email' && send.channel !== 'whatsapp')) return [];
    return [
      {
        accountId: send.run.accountId,
        contactId: send.message.contactId,
        channel: send.channel as MessageChannel,
        messageKey: idempotencyId,
        to: send.message.to,
        runId: send.run.id,
        runVisit: send.run.visit,
        sequenceId: send.message.sequenceId,
        stepId: send.stepId,
        stepVisit,
        outboxId,
        category: send.message.category,
      },
    ];
  });
  await queueMessages(db, messages, { now }, transaction);
}
