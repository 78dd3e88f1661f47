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
import { engineAt, enrolledRun } from './support';

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
});
