import { expect } from 'chai';
import { withTransaction } from '../../src/db/sql/transaction';
import { markFailed, markSending, markSent } from '../../src/services/messages/message-store';
import { api, caller } from '../support/app';
import { captureQueries, testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { messageFixture } from '../support/messages';
import { engineAt } from '../services/engine/support';

// GET /contacts/{id}/messages (and contacts.messages on tRPC), and the run timeline's `message`.
// No sender exists yet: messages are written through the store functions, as it will write them.

const db = () => testDb();

describe('GET /contacts/{id}/messages', () => {
  it('lists the contact\'s messages newest first, page by page, each once', async () => {
    const fixture = await messageFixture();
    const base = Date.parse('2026-11-20T09:00:00.000Z');
    const ids: string[] = [];
    // Two share a creation time: the id breaks the tie.
    for (const offset of [0, 1_000, 2_000, 2_000, 3_000]) ids.push((await fixture.queue({ now: new Date(base + offset) })).id);
    const expected = [ids[4], ...[ids[2], ids[3]].sort().reverse(), ids[1], ids[0]];

    const seen: string[] = [];
    let cursor: string | undefined;
    const pages: number[] = [];
    do {
      const res = await api(fixture.key).get(`/contacts/${fixture.contact.id}/messages`).query({ limit: 2, ...(cursor && { cursor }) });
      expect(res.status, res.text).to.equal(200);
      pages.push(res.body.messages.length);
      seen.push(...res.body.messages.map((m: { id: string }) => m.id));
      cursor = res.body.nextCursor ?? undefined;
    } while (cursor);
    expect(pages).to.deep.equal([2, 2, 1]);
    expect(seen).to.deep.equal(expected);
  });

  it('answers each message as the API documents it', async () => {
    const fixture = await messageFixture();
    const email = await fixture.queue({ channel: 'email', subject: 'Welcome, Ada', to: 'ada@example.com', stepId: 'welcome' });
    const whatsapp = await fixture.queue({ channel: 'whatsapp', to: '4915112345678', stepId: 'nudge' });
    const sentAt = new Date('2026-11-22T09:30:00.412Z');
    await withTransaction(db(), async (transaction) => {
      await markSending(db(), [{ id: email.id, content: { subject: 'Welcome, Ada' } }, { id: whatsapp.id, content: {} }], { now: new Date() }, transaction);
      await markSent(db(), [{ id: email.id, providerMessageId: '<msg@example.com>', at: sentAt }], { now: new Date() }, transaction);
      await markFailed(db(), [{ id: whatsapp.id, error: '132001: Template name does not exist in the translation' }], { now: new Date() }, transaction);
    });
    const res = await api(fixture.key).get(`/contacts/${fixture.contact.id}/messages`);
    expect(res.status).to.equal(200);
    const byId = new Map(res.body.messages.map((m: { id: string }) => [m.id, m]));
    expect(byId.get(email.id)).to.deep.include({
      id: email.id,
      channel: 'email',
      status: 'sent',
      to: 'ada@example.com',
      subject: 'Welcome, Ada',
      providerMessageId: '<msg@example.com>',
      error: null,
      runId: fixture.runId,
      sequenceId: fixture.sequence.id,
      stepId: 'welcome',
      test: false,
      sentAt: sentAt.toISOString(),
      deliveredAt: null,
      readAt: null,
      failedAt: null,
    });
    expect(byId.get(whatsapp.id)).to.deep.include({ status: 'failed', subject: null, to: '4915112345678', error: '132001: Template name does not exist in the translation' });
    expect((byId.get(whatsapp.id) as { failedAt: string | null }).failedAt).to.be.a('string');
    // The content (what was sent) is not part of the list.
    expect(byId.get(email.id)).to.not.have.property('content');
    // The same through tRPC.
    const listed = await caller(fixture.key).contacts.messages({ id: fixture.contact.id });
    expect(listed.messages.map((m) => m.id).sort()).to.deep.equal([email.id, whatsapp.id].sort());
  });

  it('is an empty page for a contact with no messages', async () => {
    const tenant = await buildTenant();
    const contact = await buildContact(tenant.accountId);
    const res = await api(tenant.key).get(`/contacts/${contact.id}/messages`);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ messages: [], nextCursor: null });
  });

  it('is a 404 for an unknown contact, another account\'s, or an id that is not one', async () => {
    const fixture = await messageFixture();
    await fixture.queue();
    const other = await buildTenant();
    for (const [key, id] of [
      [fixture.key, '01938a3e-0000-7000-8000-000000000000'],
      [other.key, fixture.contact.id],
      [fixture.key, 'not-an-id'],
    ] as const) {
      const res = await api(key).get(`/contacts/${id}/messages`);
      expect([res.status, res.body.code, res.body.error], id).to.deep.equal([404, 'not_found', 'Contact not found']);
    }
  });

  it('is a 400 naming the problem for a bad limit, a bad cursor, another contact\'s cursor or an unknown parameter', async () => {
    const fixture = await messageFixture();
    for (let i = 0; i < 3; i += 1) await fixture.queue();
    const path = `/contacts/${fixture.contact.id}/messages`;
    const first = await api(fixture.key).get(path).query({ limit: 1 });
    const cursor = first.body.nextCursor as string;
    const otherContact = await buildContact(fixture.accountId);
    const cases: Array<[Record<string, string | number>, string, RegExp, string?]> = [
      [{ limit: 0 }, 'limit', /limit must be an integer from 1 to 200/],
      [{ limit: 'ten' }, 'limit', /limit must be an integer/],
      [{ cursor: 'garbage' }, 'cursor', /Invalid cursor/],
      [{ cursor }, 'cursor', /Invalid cursor/, `/contacts/${otherContact.id}/messages`],
      [{ status: 'sent' }, '', /status|Unrecognized/],
    ];
    for (const [query, field, message, otherPath] of cases) {
      const res = await api(fixture.key).get(otherPath ?? path).query(query);
      expect([res.status, res.body.code], JSON.stringify(query)).to.deep.equal([400, 'validation_failed']);
      expect(res.body.error, JSON.stringify(query)).to.match(message);
      if (field) expect(res.body.details.map((d: { path: string }) => d.path)).to.include(field);
    }
  });

  it('reads a page in one statement through the contact\'s index', async () => {
    const fixture = await messageFixture();
    for (let i = 0; i < 3; i += 1) await fixture.queue();
    const { queries } = await captureQueries(() => caller(fixture.key).contacts.messages({ id: fixture.contact.id, limit: 2 }));
    const reads = queries.filter((sql) => /FROM messages/i.test(sql));
    expect(reads).to.have.length(1);
    expect(reads[0]).to.match(/messages_contact_created/);
  });
});

describe('the run timeline\'s message', () => {
  it('shows on the execution of the visit that sent it; null on the others', async () => {
    const fixture = await messageFixture();
    const { engine, advance } = engineAt(Date.now() + 1);
    advance(10);
    await engine.runOnce();
    const before = await caller(fixture.key).sequences.run({ id: fixture.sequence.id, runId: fixture.runId });
    expect(before.run.executions).to.have.length(1);
    expect(before.run.executions[0]!.message).to.equal(null);

    // The run's first step is its visit 0 (sequence_runs.visit, as the outbox counts it).
    const message = await fixture.queue({ runVisit: 0, channel: 'whatsapp', to: '4915112345678' });
    // Another visit's message (not an execution of this run's yet) shows nowhere.
    await fixture.queue({ runVisit: 7 });
    await withTransaction(db(), (transaction) => markSent(db(), [{ id: message.id, providerMessageId: 'wamid.T1' }], { now: new Date() }, transaction));
    const res = await api(fixture.key).get(`/sequences/${fixture.sequence.id}/runs/${fixture.runId}`);
    expect(res.status).to.equal(200);
    expect(res.body.run.executions).to.have.length(1);
    expect(res.body.run.executions[0].message).to.deep.equal({
      id: message.id,
      channel: 'whatsapp',
      status: 'sent',
      to: '4915112345678',
      subject: null,
      providerMessageId: 'wamid.T1',
      error: null,
    });
  });

  it('reads the run\'s messages in one statement, whatever the number of executions', async () => {
    const fixture = await messageFixture();
    const { queries } = await captureQueries(() => caller(fixture.key).sequences.run({ id: fixture.sequence.id, runId: fixture.runId }));
    expect(queries.filter((sql) => /FROM messages/i.test(sql))).to.have.length(1);
  });
});
