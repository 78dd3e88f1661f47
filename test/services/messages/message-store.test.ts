import { expect } from 'chai';
import { toIso } from '../../../src/db/sql/rows';
import { withTransaction } from '../../../src/db/sql/transaction';
import type { ProviderStatus } from '../../../src/schemas/message';
import {
  markCancelled,
  markCaptured,
  markFailed,
  markRetrying,
  markSending,
  markSent,
  markSkipped,
  messagesByKey,
  queueMessages,
} from '../../../src/services/messages/message-store';
import { applyProviderStatuses } from '../../../src/services/messages/provider-statuses';
import { captureQueries, testDb } from '../../support/db';
import { messageCount, messageFixture, storedMessage } from '../../support/messages';
import { allEvents } from '../events/support';

const db = () => testDb();
const messageEventTypes = async (accountId: string) => (await allEvents(accountId)).map((e) => e.type).filter((type) => type.startsWith('message.'));
const now = () => ({ now: new Date() });

function report(providerMessageId: string, status: ProviderStatus, at: Date, extra: { error?: string; messageKey?: string } = {}) {
  return withTransaction(db(), (transaction) =>
    applyProviderStatuses(db(), [{ channel: 'whatsapp', providerMessageId, status, at, ...extra }], now(), transaction),
  );
}

async function sentMessage(fixture: Awaited<ReturnType<typeof messageFixture>>, providerMessageId: string) {
  const message = await fixture.queue();
  await withTransaction(db(), async (transaction) => {
    await markSending(db(), [{ id: message.id, content: { request: { to: '4915112345678' } } }], now(), transaction);
    await markSent(db(), [{ id: message.id, providerMessageId }], now(), transaction);
  });
  return message;
}

describe('the messages store (src/services/messages/message-store.ts)', () => {
  it('queues a message once per key: queuing the same step visit again answers the same id', async () => {
    const fixture = await messageFixture();
    const first = await fixture.queue({ runVisit: 1 });
    const again = await fixture.queue({ runVisit: 1 });
    expect(again.id).to.equal(first.id);
    expect(await messageCount()).to.equal(1);
    expect((await storedMessage(first.id)).status).to.equal('queued');
  });

  it('finds messages by key as they are now, for a sender holding an outbox row', async () => {
    const fixture = await messageFixture();
    const queued = await fixture.queue();
    const sent = await sentMessage(fixture, 'wamid.BYKEY');
    const found = await messagesByKey(db(), [queued.messageKey, sent.messageKey, 'msg_unknown']);
    expect(Object.fromEntries(found)).to.deep.equal({
      [queued.messageKey]: { id: queued.id, status: 'queued', channel: 'whatsapp', providerMessageId: null },
      [sent.messageKey]: { id: sent.id, status: 'sent', channel: 'whatsapp', providerMessageId: 'wamid.BYKEY' },
    });
  });

  it('writes the content when sending, then sent with the provider id and one message.sent event', async () => {
    const fixture = await messageFixture();
    const message = await fixture.queue();
    const content = { request: { messaging_product: 'whatsapp', to: '4915112345678' } };
    await withTransaction(db(), (transaction) => markSending(db(), [{ id: message.id, content }], now(), transaction));
    const sending = await storedMessage(message.id);
    expect(sending.status).to.equal('sending');
    expect(JSON.parse(sending.content!)).to.deep.equal(content);

    const transitions = await withTransaction(db(), (transaction) => markSent(db(), [{ id: message.id, providerMessageId: 'wamid.A' }], now(), transaction));
    expect(transitions.map((t) => [t.before.status, t.after.status, t.reached])).to.deep.equal([['sending', 'sent', ['sent']]]);
    const sent = await storedMessage(message.id);
    expect([sent.status, sent.provider_message_id, sent.sent_at !== null]).to.deep.equal(['sent', 'wamid.A', true]);
    const events = (await allEvents(fixture.accountId)).filter((e) => e.type.startsWith('message.'));
    expect(events.map((e) => e.type)).to.deep.equal(['message.sent']);
    const data = events[0]!.data as { message: Record<string, unknown> };
    expect(data.message).to.include({ id: message.id, status: 'sent', providerMessageId: 'wamid.A', contactId: fixture.contact.id, runId: fixture.runId, channel: 'whatsapp' });

    // A second markSent (a crash between the answer and the record, retried) changes nothing.
    const repeat = await withTransaction(db(), (transaction) => markSent(db(), [{ id: message.id, providerMessageId: 'wamid.B' }], now(), transaction));
    expect(repeat).to.deep.equal([]);
    expect((await storedMessage(message.id)).provider_message_id).to.equal('wamid.A');
    expect(await messageEventTypes(fixture.accountId)).to.deep.equal(['message.sent']);
  });

  it('keeps read when delivered arrives after it, and fills in the delivery time', async () => {
    const fixture = await messageFixture();
    const message = await sentMessage(fixture, 'wamid.R');
    const readAt = new Date('2026-11-22T10:00:05.000Z');
    const deliveredAt = new Date('2026-11-22T10:00:01.000Z');
    await report('wamid.R', 'read', readAt);
    await report('wamid.R', 'delivered', deliveredAt);
    const stored = await storedMessage(message.id);
    expect(stored.status).to.equal('read');
    expect(toIso(stored.read_at)).to.equal(readAt.toISOString());
    expect(toIso(stored.delivered_at)).to.equal(deliveredAt.toISOString());
    expect(await messageEventTypes(fixture.accountId)).to.deep.equal(['message.sent', 'message.read']);
  });

  it('applies a failure after delivered, never after read; a late delivered does not undo a failure', async () => {
    const fixture = await messageFixture();
    const failing = await sentMessage(fixture, 'wamid.F');
    await report('wamid.F', 'delivered', new Date());
    await report('wamid.F', 'failed', new Date(), { error: '131026: Message undeliverable' });
    await report('wamid.F', 'delivered', new Date());
    const failed = await storedMessage(failing.id);
    expect([failed.status, failed.error, failed.failed_at !== null]).to.deep.equal(['failed', '131026: Message undeliverable', true]);

    const reading = await sentMessage(fixture, 'wamid.G');
    await report('wamid.G', 'read', new Date());
    await report('wamid.G', 'failed', new Date(), { error: '131000: Something went wrong' });
    const read = await storedMessage(reading.id);
    expect([read.status, read.error, read.failed_at]).to.deep.equal(['read', null, null]);
    const types = await messageEventTypes(fixture.accountId);
    expect(types).to.deep.equal(['message.sent', 'message.delivered', 'message.failed', 'message.sent', 'message.read']);
  });

  it('moves through every status one report names, one event each, in order', async () => {
    const fixture = await messageFixture();
    const message = await sentMessage(fixture, 'wamid.M');
    const at = new Date();
    await withTransaction(db(), (transaction) =>
      applyProviderStatuses(
        db(),
        (['read', 'delivered'] as const).map((status) => ({ channel: 'whatsapp' as const, providerMessageId: 'wamid.M', status, at })),
        now(),
        transaction,
      ),
    );
    expect((await storedMessage(message.id)).status).to.equal('read');
    expect(await messageEventTypes(fixture.accountId)).to.deep.equal(['message.sent', 'message.delivered', 'message.read']);
  });

  it('finds a message by its key when the report overtakes the recorded send, and keeps the provider id', async () => {
    const fixture = await messageFixture();
    const message = await fixture.queue();
    await withTransaction(db(), (transaction) => markSending(db(), [{ id: message.id, content: {} }], now(), transaction));
    const applied = await report('wamid.EARLY', 'delivered', new Date(), { messageKey: message.messageKey });
    expect(applied.matched).to.equal(1);
    await withTransaction(db(), (transaction) => markSent(db(), [{ id: message.id, providerMessageId: 'wamid.EARLY' }], now(), transaction));
    const stored = await storedMessage(message.id);
    expect([stored.status, stored.provider_message_id, stored.sent_at !== null]).to.deep.equal(['delivered', 'wamid.EARLY', true]);
    // The same key on another channel names nothing.
    const other = await withTransaction(db(), (transaction) =>
      applyProviderStatuses(db(), [{ channel: 'email', providerMessageId: 'x', messageKey: message.messageKey, status: 'read', at: new Date() }], now(), transaction),
    );
    expect([other.matched, other.unknown]).to.deep.equal([0, 1]);
  });

  it('ignores unknown provider ids', async () => {
    const fixture = await messageFixture();
    const message = await sentMessage(fixture, 'wamid.K');
    const applied = await report('wamid.NOT-OURS', 'read', new Date());
    expect([applied.matched, applied.unknown, applied.transitions.length]).to.deep.equal([0, 1, 0]);
    expect((await storedMessage(message.id)).status).to.equal('sent');
  });

  it('skips or cancels only a message no provider has; failed, captured and retrying as the sender records them', async () => {
    const fixture = await messageFixture();
    const skipped = await fixture.queue();
    const cancelled = await fixture.queue();
    const sent = await sentMessage(fixture, 'wamid.S');
    const captured = await fixture.queue();
    const failed = await fixture.queue();
    await withTransaction(db(), async (transaction) => {
      await markSkipped(db(), [{ id: skipped.id, reason: 'unsubscribed' }, { id: sent.id, reason: 'unsubscribed' }], now(), transaction);
      await markCancelled(db(), [{ id: cancelled.id, reason: 'run cancelled: unenrolled' }, { id: sent.id }], now(), transaction);
      await markCaptured(db(), [{ id: captured.id }], now(), transaction);
      await markSending(db(), [{ id: failed.id, content: {} }], now(), transaction);
      await markRetrying(db(), [{ id: failed.id, error: 'http 503' }], now(), transaction);
    });
    expect((await storedMessage(failed.id)).status).to.equal('queued');
    expect((await storedMessage(failed.id)).error).to.equal('http 503');
    await withTransaction(db(), (transaction) => markFailed(db(), [{ id: failed.id, error: '132001: Template name does not exist' }], now(), transaction));
    const rows = await Promise.all([skipped, cancelled, sent, captured, failed].map((m) => storedMessage(m.id)));
    expect(rows.map((row) => [row.status, row.error])).to.deep.equal([
      ['skipped', 'unsubscribed'],
      ['cancelled', 'run cancelled: unenrolled'],
      ['sent', null],
      ['captured', null],
      ['failed', '132001: Template name does not exist'],
    ]);
    expect(rows[3]!.sent_at).to.not.equal(null);
    // No event for skipped, cancelled or captured.
    expect(await messageEventTypes(fixture.accountId)).to.deep.equal(['message.sent', 'message.failed']);
  });

  it('counts messages_total once the change commits, and not for a rolled-back one', async () => {
    const fixture = await messageFixture();
    const message = await fixture.queue();
    const counted: string[] = [];
    const metrics = { total: { inc: (labels: { channel: string; outcome: string }) => counted.push(`${labels.channel}:${labels.outcome}`) }, providerLatency: { observe: () => undefined } };
    await withTransaction(db(), async (transaction) => {
      await markSent(db(), [{ id: message.id, providerMessageId: 'wamid.X' }], { now: new Date(), metrics }, transaction);
      throw new Error('rolled back');
    }).catch(() => undefined);
    expect(counted).to.deep.equal([]);
    expect((await storedMessage(message.id)).status).to.equal('queued');
    await withTransaction(db(), (transaction) => markSent(db(), [{ id: message.id, providerMessageId: 'wamid.X' }], { now: new Date(), metrics }, transaction));
    expect(counted).to.deep.equal(['whatsapp:sent']);
  });

  it('hands the events to the caller when asked, recording none itself', async () => {
    const fixture = await messageFixture();
    const message = await fixture.queue();
    const events = new Map();
    await withTransaction(db(), (transaction) => markSent(db(), [{ id: message.id, providerMessageId: 'wamid.C' }], { now: new Date(), events }, transaction));
    expect([...events.keys()]).to.deep.equal([fixture.accountId]);
    expect(events.get(fixture.accountId).map((e: { type: string }) => e.type)).to.deep.equal(['message.sent']);
    expect(await messageEventTypes(fixture.accountId)).to.deep.equal([]);
  });

  it('ends at read with one event per status whatever the order of concurrent reports', async function () {
    this.timeout(60_000);
    const fixture = await messageFixture();
    const messages = [];
    for (let i = 0; i < 6; i += 1) messages.push(await sentMessage(fixture, `wamid.P${i}`));
    const statuses: ProviderStatus[] = ['delivered', 'read', 'sent', 'delivered', 'read'];
    // Every report of every message at once, each in its own transaction, in a shuffled order.
    const reports = messages.flatMap((_, i) => statuses.map((status) => ({ i, status })));
    reports.sort(() => Math.random() - 0.5);
    await Promise.all(reports.map(({ i, status }) => report(`wamid.P${i}`, status, new Date())));
    for (const message of messages) expect((await storedMessage(message.id)).status).to.equal('read');
    const events = (await allEvents(fixture.accountId)).filter((e) => e.type.startsWith('message.') && e.type !== 'message.sent');
    const perMessage = new Map<string, string[]>();
    for (const event of events) {
      const id = (event.data as { message: { id: string } }).message.id;
      perMessage.set(id, [...(perMessage.get(id) ?? []), event.type]);
    }
    for (const message of messages) {
      const types = perMessage.get(message.id)!;
      // read once and last; delivered at most once, and only before read.
      expect(types[types.length - 1]).to.equal('message.read');
      expect(types.filter((t) => t === 'message.read')).to.have.length(1);
      expect(types.filter((t) => t === 'message.delivered').length).to.be.at.most(1);
    }
  });

  it('costs the same few statements for one message or fifty', async () => {
    const fixture = await messageFixture();
    const count = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i += 1) ids.push((await fixture.queue()).id);
      const { queries } = await captureQueries(() =>
        withTransaction(db(), (transaction) => markSent(db(), ids.map((id, i) => ({ id, providerMessageId: `wamid.${n}.${i}` })), now(), transaction)),
      );
      return queries.filter((sql) => /messages/i.test(sql)).length;
    };
    expect(await count(50)).to.equal(await count(1));
  });

  it('refuses nothing it cannot find: queuing nothing or marking unknown ids writes nothing', async () => {
    await withTransaction(db(), async (transaction) => {
      expect((await queueMessages(db(), [], now(), transaction)).size).to.equal(0);
      expect(await markSent(db(), [{ id: '01938a3e-0000-7000-8000-000000000000', providerMessageId: 'x' }], now(), transaction)).to.deep.equal([]);
    });
    expect(await messageCount()).to.equal(0);
  });
});
