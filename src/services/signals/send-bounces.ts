import type { Database } from '../../db/database';
import type { ActivitySettings } from '../activities/activity-settings';
import { recordSignals } from './record-signals';

// An email the recipient's server refused for good while we sent it (a 5.1.x at RCPT or after
// DATA: a hard bounce, src/services/messages/send-failures.ts): `email.bounced` as the bounce
// reports' (record-feedback.ts), with the same id, `email.bounced:<messageId>`, so that a DSN
// about the same message later records nothing more. Recorded by the dispatcher once the send's
// outcome has committed; a failure then is logged and the signal is not tried again (the send
// is done: nothing comes back to retry it).

export interface SendBounce {
  accountId: string;
  contactId: string;
  messageId: string;
  runId: string;
  sequenceId: string;
  stepId: string;
  // The server's answer as the message's error records it.
  detail: string | null;
}

export async function recordSendBounces(db: Database, bounces: readonly SendBounce[], settings: ActivitySettings): Promise<number> {
  return recordSignals(
    db,
    bounces.map((bounce) => ({
      accountId: bounce.accountId,
      contactId: bounce.contactId,
      id: `email.bounced:${bounce.messageId}`,
      name: 'email.bounced' as const,
      properties: {
        messageId: bounce.messageId,
        sequenceId: bounce.sequenceId,
        stepId: bounce.stepId,
        runId: bounce.runId,
        type: 'hard',
        // The server's words, as a report's detail: `550 5.1.1 no such mailbox`.
        detail: bounce.detail?.replace(/^bounced: /, '').slice(0, 500) ?? null,
      },
    })),
    settings,
  );
}
