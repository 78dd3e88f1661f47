import type { NewEventOf } from '../../schemas/event';
import type { MessageStatus } from '../../schemas/message';
import { eventMessageFromRow, type MessageRow } from './message-rows';

// A message that changed status in one write: as it was, as it is, and the statuses it went
// through on the way (lowest first; `to` last).
export interface MessageTransition {
  before: MessageRow;
  after: MessageRow;
  reached: MessageStatus[];
}

type MessageEventType = 'message.sent' | 'message.delivered' | 'message.read' | 'message.failed' | 'message.bounced' | 'message.complained';
const EVENT_OF: Partial<Record<MessageStatus, MessageEventType>> = {
  sent: 'message.sent',
  delivered: 'message.delivered',
  read: 'message.read',
  failed: 'message.failed',
  bounced: 'message.bounced',
  complained: 'message.complained',
};

// One event per status a message reached that has one, in the order it reached them, each with
// the message as it is after the write. captured, unconfirmed, skipped and cancelled have none: nothing
// reached anyone (a skipped step has its run.step_completed).
export function messageEvents(transitions: readonly MessageTransition[]): Map<string, NewEventOf[]> {
  const byAccount = new Map<string, NewEventOf[]>();
  for (const { after, reached } of transitions) {
    const message = eventMessageFromRow(after);
    for (const status of reached) {
      const type = EVENT_OF[status];
      if (!type) continue;
      const list = byAccount.get(after.account_id) ?? [];
      list.push({ type, data: { message } });
      byAccount.set(after.account_id, list);
    }
  }
  return byAccount;
}
