import { select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import type { MessageChannel } from '../../src/schemas/message';
import { queueMessages } from '../../src/services/messages/message-store';
import { caller } from './app';
import { testDb } from './db';
import { buildContact, buildTenant } from './factories';

// Messages written through the store functions, as the sender will write them (no sender
// exists on this branch): a tenant, a contact enrolled in a sequence (a run to own them), and
// queued messages of that run's visits.

export async function messageFixture(contactFields: Record<string, unknown> = {}) {
  const tenant = await buildTenant();
  const { sequence } = await caller(tenant.key).sequences.create({
    name: 'Messages',
    status: 'active',
    steps: [{ id: 'pause', type: 'wait', duration: 'P1D' }],
  } as never);
  const contact = await buildContact(tenant.accountId, contactFields);
  await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
  const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
  let visit = 0;
  // Queues one message of the next visit; answers its id and key.
  const queue = async (fields: { channel?: MessageChannel; to?: string; subject?: string | null; now?: Date; stepId?: string; runVisit?: number } = {}) => {
    visit += 1;
    const runVisit = fields.runVisit ?? visit;
    const stepId = fields.stepId ?? 'pause';
    const messageKey = `msg_${run!.id}_${stepId}_${runVisit}`;
    const channel = fields.channel ?? 'whatsapp';
    const ids = await withTransaction(testDb(), (transaction) =>
      queueMessages(
        testDb(),
        [{
          accountId: tenant.accountId,
          contactId: contact.id,
          channel,
          messageKey,
          to: fields.to ?? (channel === 'email' ? contact.email : '4915112345678'),
          subject: fields.subject ?? (channel === 'email' ? 'Hello' : null),
          runId: run!.id,
          runVisit,
          sequenceId: sequence.id,
          stepId,
          stepVisit: runVisit,
        }],
        { now: fields.now ?? new Date() },
        transaction,
      ),
    );
    return { id: ids.get(messageKey)!, messageKey };
  };
  return { ...tenant, sequence, contact, runId: run!.id, queue };
}

export interface StoredMessage {
  id: string;
  status: string;
  provider_message_id: string | null;
  error: string | null;
  content: string | null;
  sent_at: unknown;
  delivered_at: unknown;
  read_at: unknown;
  failed_at: unknown;
}

export async function storedMessage(id: string): Promise<StoredMessage> {
  const [row] = await select<StoredMessage>(
    testDb(),
    'SELECT id, status, provider_message_id, error, content, sent_at, delivered_at, read_at, failed_at FROM messages WHERE id = ?',
    [id],
  );
  if (!row) throw new Error(`no message ${id}`);
  return row;
}

export async function messageCount(): Promise<number> {
  const [row] = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM messages', []);
  return Number(row!.n);
}
