import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { select } from '../../../src/db/sql/statements';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { startSmtpServer } from '../../support/smtp-server';
import { caller } from '../../support/app';
import { buildContact } from '../../support/factories';
import { driveUntil, engineAt, enrolledRun } from './support';

// Email sends claimed ahead of those under way (Channel.claimAhead, dispatcher.ts): with one
// request at a time per account, the others wait in the dispatcher, begin one after another,
// and each is sent once, recorded, and its run completed; their outcomes recorded together.

const EMAIL = { id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' };

// n runs of one account (one group of sends), each its own contact.
async function oneAccountRuns(n: number) {
  const run = await enrolledRun([EMAIL]);
  const contacts = [];
  for (let i = 1; i < n; i += 1) contacts.push(await buildContact(run.accountId, { email: `c${i}@example.com` }));
  await caller(run.key).sequences.enroll({ id: run.sequence.id, contactIds: contacts.map((contact) => contact.id) });
  const rows = await select<{ id: string }>(testDb(), 'SELECT id FROM sequence_runs WHERE sequence_id = ?', [run.sequence.id]);
  return rows.map((row) => ({ runId: row.id, timeline: async () => (await select<{ status: string }>(testDb(), 'SELECT status FROM sequence_runs WHERE id = ?', [row.id]))[0]! }));
}

// Three runs of one account, one email under way at a time, the first held by the server: the
// two others claimed and waiting in the dispatcher (their messages already written `sending`).
// Answers the run whose email waits last, and what to look at.
async function oneHeldTwoWaiting() {
  const server = await startSmtpServer((index) => (index === 0 ? 'hold' : 'accept'));
  const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: server.url });
  const run = await enrolledRun([EMAIL]);
  for (const email of ['c1@example.com', 'c2@example.com']) {
    const contact = await buildContact(run.accountId, { email });
    await caller(run.key).sequences.enroll({ id: run.sequence.id, contactIds: [contact.id] });
  }
  const { engine, clock } = engineAt(Date.now() + 1_000, {
    outbound: { perTarget: 1 },
    messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), smtpTimeouts: { connectionMs: 1_000, greetingMs: 1_000, socketMs: 600_000, dataMs: 600_000 } },
  });
  engine.start();
  while (server.attempts.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const runs = await select<{ id: string; contact_id: string; email: string }>(
    testDb(),
    'SELECT r.id, r.contact_id, c.email FROM sequence_runs r JOIN contacts c ON c.id = r.contact_id WHERE r.sequence_id = ?',
    [run.sequence.id],
  );
  const first = runs.find((row) => server.attempts[0]!.includes(`To: ${row.email}`))!;
  const waiting = runs.filter((row) => row !== first)[1]!;
  const statusOf = async (sql: string) => (await select<{ status: string }>(testDb(), sql, [waiting.id])).map((row) => row.status);
  return {
    server,
    engine,
    clock,
    run,
    waiting,
    statuses: async () => (await select<{ status: string }>(testDb(), 'SELECT status FROM sequence_runs WHERE sequence_id = ?', [run.sequence.id])).map((row) => row.status),
    sendsOf: () => statusOf('SELECT status FROM outbox WHERE run_id = ?'),
    messagesOf: () => statusOf('SELECT status FROM messages WHERE run_id = ?'),
    runOf: async () => (await statusOf('SELECT status FROM sequence_runs WHERE id = ?'))[0],
    recipients: () => server.received.flatMap((mail) => mail.envelope.to),
  };
}

describe('sequence engine: emails claimed ahead', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('one under way at a time: the rest wait in the dispatcher, each sent once, every run completed', async () => {
    const server = await startSmtpServer();
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: server.url });
    const { engine, advance } = engineAt(Date.now() + 1, {
      outbound: { perTarget: 1 },
      messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), smtpTimeouts: { connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000 } },
    });
    cleanups.push(() => server.close(), () => engine.stop(50));
    const runs = await oneAccountRuns(4);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(4);
    const ids = server.received.map((mail) => mail.parsed.messageId);
    expect(new Set(ids).size).to.equal(4);
    for (const run of runs) expect((await run.timeline()).status).to.equal('completed');
    const sends = await select<{ status: string; attempt: number | string }>(testDb(), 'SELECT status, attempt FROM outbox WHERE run_id IN (?)', [runs.map((run) => run.runId)]);
    expect(sends.map((send) => [send.status, Number(send.attempt)])).to.deep.equal(Array(4).fill(['succeeded', 0]));
  });

  it('a stop hands back the sends that wait, due now with their ids, no attempt counted; the next engine sends each once', async () => {
    const server = await startSmtpServer((index) => (index === 0 ? 'hang' : 'accept'));
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: server.url });
    const messages = { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), smtpTimeouts: { connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000, dataMs: 5_000 } };
    const first = engineAt(Date.now() + 1, { outbound: { perTarget: 1 }, messages });
    cleanups.push(() => server.close());
    const runs = await oneAccountRuns(3);
    first.advance(1_000);
    const pass = first.engine.runOnce();
    while (server.attempts.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await first.engine.stop(50);
    await pass.catch(() => undefined);
    const sends = await select<{ status: string; attempt: number | string; claim_token: string | null }>(testDb(), 'SELECT status, attempt, claim_token FROM outbox WHERE run_id IN (?)', [runs.map((run) => run.runId)]);
    // The one cut short after its final dot is an unknown outcome (one attempt, sent again with
    // its Message-ID); the two that waited were never begun: no attempt.
    expect(sends.map((send) => [send.status, Number(send.attempt), send.claim_token]).sort()).to.deep.equal([['queued', 0, null], ['queued', 0, null], ['queued', 1, null]]);
    const second = engineAt(Date.now() + 60_000, { messages });
    cleanups.push(() => second.engine.stop(50));
    await second.engine.runUntilIdle();
    // The one cut short after its final dot may be received twice (same Message-ID); the others once.
    const ids = server.received.map((mail) => mail.parsed.messageId);
    expect(new Set(ids).size).to.equal(3);
    for (const run of runs) expect((await run.timeline()).status).to.equal('completed');
  });

  it('an unenroll answered while its email waits in the dispatcher: the email is cancelled, and never reaches the server', async () => {
    const held = await oneHeldTwoWaiting();
    cleanups.push(() => held.server.close(), () => held.engine.stop(50));
    await caller(held.run.key).sequences.unenroll({ id: held.run.sequence.id, contactIds: [held.waiting.contact_id] });
    held.server.release();
    await driveUntil(held.clock, async () => (await held.statuses()).filter((status) => status === 'completed').length === 2);
    await driveUntil(held.clock, async () => false, 5).catch(() => undefined);
    expect(held.server.received).to.have.length(2);
    expect(held.recipients()).to.not.include(held.waiting.email);
    expect(await held.runOf()).to.equal('cancelled');
    expect(await held.sendsOf()).to.deep.equal(['cancelled']);
    expect(await held.messagesOf()).to.deep.equal(['cancelled']);
  });

  it('a pause answered while its email waits in the dispatcher: nothing reaches the server until the resume, then it goes once', async () => {
    const held = await oneHeldTwoWaiting();
    cleanups.push(() => held.server.close(), () => held.engine.stop(50));
    await caller(held.run.key).sequences.pauseRun({ id: held.run.sequence.id, runId: held.waiting.id });
    held.server.release();
    await driveUntil(held.clock, async () => (await held.statuses()).filter((status) => status === 'completed').length === 2);
    await driveUntil(held.clock, async () => false, 5).catch(() => undefined);
    expect(held.server.received).to.have.length(2);
    expect(held.recipients()).to.not.include(held.waiting.email);
    expect(await held.runOf()).to.equal('paused');
    expect(await held.sendsOf()).to.deep.equal(['held']);
    expect(await held.messagesOf()).to.deep.equal(['queued']);

    await caller(held.run.key).sequences.resumeRun({ id: held.run.sequence.id, runId: held.waiting.id });
    await driveUntil(held.clock, async () => (await held.statuses()).every((status) => status === 'completed'));
    expect(held.recipients()).to.include(held.waiting.email);
    expect(new Set(held.server.received.map((mail) => mail.parsed.messageId)).size).to.equal(3);
    expect(held.server.received).to.have.length(3);
    expect(await held.sendsOf()).to.deep.equal(['succeeded']);
    expect(await held.messagesOf()).to.deep.equal(['sent']);
  });
});
