import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { toDate } from '../../../src/db/sql/rows';
import { select } from '../../../src/db/sql/statements';
import { putEmailChannel } from '../../../src/services/channels/email-channel';
import { putWhatsAppChannel } from '../../../src/services/channels/whatsapp-channel';
import type { FrequencyCapInput } from '../../../src/schemas/frequency-cap';
import { caller } from '../../support/app';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { startSmtpServer } from '../../support/smtp-server';
import { startGraphStandIn } from '../../support/whatsapp-graph';
import { holdAfter } from '../../support/statement-gate';
import { engineAt } from './support';

// Caps across sequences (docs/channels.md "Frequency caps"): a contact gets at most `max`
// marketing messages of a channel within any rolling `per`, whichever sequences send them, also
// when two engines record at once. The engines' clocks are moved by hand; nothing sleeps.

const FROM = 'Shop <shop@example.com>';
const DAY = 86_400_000;

const email = (id: string, category?: 'marketing' | 'transactional') => ({
  id,
  type: 'email',
  subject: `${id} for {{ contact.email }}`,
  html: `<p>${id}</p>`,
  ...(category ? { category } : {}),
});
const TAG_AFTER = { id: 'after', type: 'tag', add: ['after'] };
const WHATSAPP = (id: string) => ({ id, type: 'whatsapp', template: { name: 'welcome', language: { code: 'en' } } });

interface Setup {
  cap: FrequencyCapInput;
  sequences: unknown[][];
  contacts?: number;
  phone?: string;
  settings?: ReturnType<typeof channelSettings>;
}

// A tenant whose email channel has the cap, its sequences (active), and its contacts enrolled
// in every one of them.
async function capped({ cap, sequences, contacts = 1, phone, settings = channelSettings({ emailFrom: FROM }) }: Setup) {
  const tenant = await buildTenant();
  await putEmailChannel(testDb(), { accountId: tenant.accountId, from: 'shop@example.com', frequencyCap: cap }, settings);
  const people = await Promise.all(Array.from({ length: contacts }, () => buildContact(tenant.accountId, phone ? { phone } : {})));
  const made: Array<{ id: string }> = [];
  for (const [index, steps] of sequences.entries()) {
    const { sequence } = await caller(tenant.key).sequences.create({ name: `Capped ${index}`, status: 'active', steps } as never);
    made.push(sequence);
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: people.map((contact) => contact.id) });
  }
  const runsOf = async () =>
    (await Promise.all(made.map(async (sequence) => (await caller(tenant.key).sequences.runs({ id: sequence.id, limit: 100 })).runs))).flat();
  const timeline = async (run: { id: string; sequenceId: string }) => (await caller(tenant.key).sequences.run({ id: run.sequenceId, runId: run.id })).run;
  return { ...tenant, contacts: people, sequences: made, runsOf, timeline };
}

async function messagesOfAccount(accountId: string) {
  return select<{ contact_id: string; status: string; category: string; step_id: string; run_id: string; sent_at: unknown }>(
    testDb(),
    'SELECT contact_id, status, category, step_id, run_id, sent_at FROM messages WHERE account_id = ? ORDER BY created_at',
    [accountId],
  );
}

describe('sequence engine: frequency caps across sequences', function () {
  this.timeout(30_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('holds across two sequences under two engines at once: each contact gets max, the rest wait for the window, then go', async () => {
    const server = await startSmtpServer();
    cleanups.push(() => server.close());
    const settings = channelSettings({ emailFrom: FROM, smtpUrl: server.url });
    const tenant = await capped({ cap: { max: 2, per: 'P1D', whenCapped: 'wait' }, sequences: [[email('a'), TAG_AFTER], [email('b'), TAG_AFTER], [email('c'), TAG_AFTER]], contacts: 6, settings });
    const start = Date.now() + 1;
    // Small batches, so the two engines record runs of the same contacts side by side.
    const engines = [0, 1].map(() => engineAt(start, { batchSize: 2, messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } }));
    for (const { engine } of engines) cleanups.push(() => engine.stop(50));
    await Promise.all(engines.map(({ engine }) => engine.runUntilIdle()));

    const perContact = (list: Array<{ contact_id: string }>) => new Map(tenant.contacts.map((contact) => [contact.id, list.filter((m) => m.contact_id === contact.id).length]));
    const first = await messagesOfAccount(tenant.accountId);
    expect([...perContact(first.filter((m) => m.status === 'sent')).values()]).to.deep.equal(tenant.contacts.map(() => 2));
    expect(server.received).to.have.length(12);
    // The third sequence's message of each contact is not queued at all: its run waits.
    expect(first).to.have.length(12);
    const runs = await tenant.runsOf();
    const waiting = runs.filter((run) => run.status !== 'completed');
    expect(waiting).to.have.length(6);
    for (const run of waiting) {
      const detail = await tenant.timeline(run);
      expect(detail).to.include({ waitingFor: 'frequency_cap', currentStepId: detail.currentStepId });
      // Due when the older of its contact's two messages leaves the window.
      const sentAt = first.filter((m) => m.contact_id === run.contactId).map((m) => toDate(m.sent_at).getTime()).sort((a, b) => a - b);
      expect(Date.parse(detail.dueAt!)).to.be.within(sentAt[0]! + DAY, sentAt[0]! + DAY + 1);
    }

    // Not yet: the window has not moved.
    for (const { advance } of engines) advance(DAY / 2);
    await Promise.all(engines.map(({ engine }) => engine.runUntilIdle()));
    expect(server.received).to.have.length(12);

    for (const { advance } of engines) advance(DAY / 2 + 1_000);
    await Promise.all(engines.map(({ engine }) => engine.runUntilIdle()));
    expect(server.received).to.have.length(18);
    const after = await messagesOfAccount(tenant.accountId);
    expect([...perContact(after.filter((m) => m.status === 'sent')).values()]).to.deep.equal(tenant.contacts.map(() => 3));
    expect((await tenant.runsOf()).map((run) => run.status)).to.deep.equal(runs.map(() => 'completed'));
  });

  it('never lets two engines both take the last slot: the second waits for the first\'s lock, then counts its message', async () => {
    const tenant = await capped({ cap: { max: 1, per: 'P1D', whenCapped: 'skip' }, sequences: [[email('a')], [email('b')]] });
    const [one, two] = [engineAt(Date.now() + 1, { batchSize: 1 }), engineAt(Date.now() + 1, { batchSize: 1 })];
    cleanups.push(() => one.engine.stop(50), () => two.engine.stop(50));
    // The first record is held open just after it counted the contact's messages, its lock held.
    const gate = holdAfter(/AS counted_at FROM messages/);
    cleanups.push(async () => gate.restore());
    const first = one.engine.runOnce();
    await gate.held;
    // The second claims the other run and comes to the contact's lock (on SQLite it queues
    // behind the first transaction before that: one writer).
    const locking = gate.sent(/FORCE INDEX \(contacts_account_email_unique\)/);
    const second = two.engine.runOnce();
    await Promise.race([locking, new Promise((resolve) => setTimeout(resolve, 300))]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    gate.release();
    await Promise.all([first, second]);
    await Promise.all([one.engine.runUntilIdle(), two.engine.runUntilIdle()]);
    const messages = await messagesOfAccount(tenant.accountId);
    expect(messages.map((m) => m.status)).to.deep.equal(['captured']);
    const details = await Promise.all((await tenant.runsOf()).map((run) => tenant.timeline(run)));
    expect(details.map((detail) => detail.status)).to.deep.equal(['completed', 'completed']);
    expect(details.flatMap((detail) => detail.executions.filter((e) => e.status === 'skipped')).map((e) => e.reason)).to.deep.equal(['frequency_capped']);
  });

  it('skips a capped step with reason frequency_capped when the cap says skip, and the run goes on', async () => {
    const tenant = await capped({ cap: { max: 1, per: 'PT12H', whenCapped: 'skip' }, sequences: [[email('a'), TAG_AFTER], [email('b'), TAG_AFTER]] });
    const [one, two] = [engineAt(), engineAt()];
    cleanups.push(() => one.engine.stop(50), () => two.engine.stop(50));
    await Promise.all([one.engine.runUntilIdle(), two.engine.runUntilIdle()]);
    const runs = await tenant.runsOf();
    expect(runs.map((run) => run.status)).to.deep.equal(['completed', 'completed']);
    const details = await Promise.all(runs.map((run) => tenant.timeline(run)));
    const skipped = details.flatMap((detail) => detail.executions.filter((execution) => execution.status === 'skipped'));
    expect(skipped).to.have.length(1);
    expect(skipped[0]).to.include({ reason: 'frequency_capped', type: 'email' });
    const messages = await messagesOfAccount(tenant.accountId);
    expect(messages.map((m) => m.status)).to.deep.equal(['captured']);
    // The run went on to its next step: the tag is there.
    const [contact] = await select<{ tags: unknown }>(testDb(), 'SELECT tags FROM contacts WHERE id = ?', [tenant.contacts[0]!.id]);
    expect(String(contact!.tags)).to.contain('after');

    // Twelve hours on, the window allows one again.
    for (const { advance } of [one, two]) advance(12 * 3_600_000 + 1_000);
    const { sequence } = await caller(tenant.key).sequences.create({ name: 'Later', status: 'active', steps: [email('c')] } as never);
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [tenant.contacts[0]!.id] });
    await one.engine.runUntilIdle();
    expect((await messagesOfAccount(tenant.accountId)).map((m) => m.status)).to.deep.equal(['captured', 'captured']);
  });

  it('neither counts nor caps transactional messages', async () => {
    const tenant = await capped({
      cap: { max: 1, per: 'P1D', whenCapped: 'skip' },
      sequences: [[email('receipt', 'transactional')], [email('promo')], [email('shipping', 'transactional')], [email('promo2', 'marketing')]],
    });
    const { engine } = engineAt();
    cleanups.push(() => engine.stop(50));
    await engine.runUntilIdle();
    const messages = await messagesOfAccount(tenant.accountId);
    const sent = (category: string) => messages.filter((m) => m.category === category && m.status === 'captured').map((m) => m.step_id).sort();
    expect(sent('transactional')).to.deep.equal(['receipt', 'shipping']);
    // One of the two marketing messages, whichever went first; the other was skipped.
    expect(sent('marketing')).to.have.length(1);
    const skipped = (await Promise.all((await tenant.runsOf()).map((run) => tenant.timeline(run)))).flatMap((detail) => detail.executions.filter((e) => e.status === 'skipped'));
    expect(skipped.map((e) => e.reason)).to.deep.equal(['frequency_capped']);
  });

  it('does not count a message skipped before it was sent (the contact unsubscribed)', async () => {
    const tenant = await capped({ cap: { max: 1, per: 'P1D', whenCapped: 'wait' }, sequences: [[email('a')]] });
    // The first email is skipped at the send (unsubscribed): no slot taken.
    await caller(tenant.key).contacts.update({ id: tenant.contacts[0]!.id, emailSubscriptionStatus: 'unsubscribed' } as never);
    const { engine, advance } = engineAt();
    cleanups.push(() => engine.stop(50));
    await engine.runUntilIdle();
    expect((await messagesOfAccount(tenant.accountId)).map((m) => m.status)).to.deep.equal(['skipped']);
    await caller(tenant.key).contacts.update({ id: tenant.contacts[0]!.id, emailSubscriptionStatus: 'subscribed' } as never);
    const { sequence } = await caller(tenant.key).sequences.create({ name: 'Next', status: 'active', steps: [email('b')] } as never);
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [tenant.contacts[0]!.id] });
    // Past the enrolment's due time (the API stamps it with the real clock); well within the window.
    advance(60_000);
    await engine.runUntilIdle();
    expect((await messagesOfAccount(tenant.accountId)).map((m) => m.status)).to.deep.equal(['skipped', 'captured']);
  });

  it('caps each channel by its own cap: an email cap does not hold back a WhatsApp message, and a WhatsApp cap holds its own', async () => {
    const graph = await startGraphStandIn();
    cleanups.push(() => graph.close());
    const settings = channelSettings({ emailFrom: FROM, whatsappApiUrl: graph.apiUrl });
    const tenant = await capped({ cap: { max: 1, per: 'P1D', whenCapped: 'wait' }, sequences: [[email('a')], [email('b')], [WHATSAPP('w1')], [WHATSAPP('w2')]], phone: '+44 7700 900123', settings });
    await putWhatsAppChannel(testDb(), { accountId: tenant.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken, frequencyCap: { max: 1, per: 'P1D', whenCapped: 'skip' } }, settings);
    const { engine } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
    cleanups.push(() => engine.stop(50));
    await engine.runUntilIdle();
    const messages = await messagesOfAccount(tenant.accountId);
    expect(messages.filter((m) => m.step_id.startsWith('w')).map((m) => m.status)).to.deep.equal(['sent']);
    expect(graph.requests).to.have.length(1);
    expect(messages.filter((m) => !m.step_id.startsWith('w')).map((m) => m.status)).to.deep.equal(['captured']);
    const details = await Promise.all((await tenant.runsOf()).map((run) => tenant.timeline(run)));
    expect(details.map((detail) => detail.waitingFor).filter(Boolean)).to.deep.equal(['frequency_cap']);
    expect(details.flatMap((detail) => detail.executions.filter((e) => e.status === 'skipped')).map((e) => [e.type, e.reason])).to.deep.equal([['whatsapp', 'frequency_capped']]);
  });
});
