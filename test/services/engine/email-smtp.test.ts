import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import request from 'supertest';
import { select } from '../../../src/db/sql/statements';
import { putEmailChannel } from '../../../src/services/channels/email-channel';
import { emailChannel } from '../../../src/services/engine/outbound/channels/email';
import { claimSends, sendGroups } from '../../../src/services/runs/outbox';
import { planRun } from '../../../src/services/engine/plan-run';
import { recordBatch } from '../../../src/services/engine/record-batch';
import { claimDueRuns, loadClaimedRuns } from '../../../src/services/engine/run-queue';
import { SmtpTransports } from '../../../src/services/messages/smtp-transports';
import { readSteps } from '../../../src/services/runs/sequence-versions';
import { appWithChannels, channelSettings, dkimPrivateKey, verifiedSendingDomain } from '../../support/channels';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { startSmtpServer, type SmtpAnswer, type SmtpServerOptions } from '../../support/smtp-server';
import { engineAt, enrolledRun } from './support';

// Email steps sent to a real SMTP server (smtp-server, read with mailparser): what arrives,
// what is recorded, and the faults: a lost connection, a 4xx, a 5xx, a server that never answers.
// The engine's clock is moved by hand; the only real waits are the SMTP bounds of the
// never-answering server (300 ms here).

const EMAIL = {
  id: 'mail',
  type: 'email',
  subject: 'Hi {{ contact.firstName }}',
  html: '<p>Hi {{ contact.firstName }}</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>',
  replyTo: 'help@example.com',
};

const FROM = 'Shop <shop@example.com>';

async function messageOf(runId: string, stepId = 'mail') {
  const [row] = await select<{ status: string; error: string | null; provider_message_id: string | null; subject: string | null; content: string | null }>(
    testDb(),
    'SELECT status, error, provider_message_id, subject, content FROM messages WHERE run_id = ? AND step_id = ?',
    [runId, stepId],
  );
  return row;
}

const unfolded = (raw: string) => raw.replace(/\r?\n[ \t]+/g, ' ');
const header = (raw: string, name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(unfolded(raw))?.[1]?.trim();

describe('sequence engine: email steps through SMTP', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup(answer?: (index: number) => SmtpAnswer, options: SmtpServerOptions & { query?: string } = {}) {
    const server = await startSmtpServer(answer, options);
    const settings = channelSettings({ emailFrom: FROM, smtpUrl: `${server.url}${options.query ?? ''}` });
    const engineParts = engineAt(Date.now() + 1, {
      messages: {
        settings,
        outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')),
        smtpTimeouts: { connectionMs: 1_000, greetingMs: 1_000, socketMs: 300 },
      },
    });
    cleanups.push(() => server.close(), () => engineParts.engine.stop(50));
    return { server, settings, ...engineParts };
  }

  it('sends the rendered message with its headers, contact fields escaped in the html, and records it sent with the queue id', async () => {
    const { server, engine, advance } = await setup();
    const run = await enrolledRun([EMAIL, { id: 'after', type: 'tag', add: ['after'] }], {}, { firstName: '<script>alert(1)</script> & Co' });
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(1);
    const [mail] = server.received;
    const { parsed, raw } = mail!;
    expect(parsed.subject).to.equal('Hi <script>alert(1)</script> & Co');
    expect(parsed.html).to.contain('Hi &lt;script&gt;alert(1)&lt;/script&gt; &amp; Co');
    expect(parsed.html).not.to.contain('<script>');
    expect(parsed.text).to.contain('Hi <script>alert(1)</script> & Co');
    expect(parsed.from?.value[0]).to.deep.include({ name: 'Shop', address: 'shop@example.com' });
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value[0]?.address : null).to.equal(run.contact.email);
    expect(parsed.replyTo?.text).to.equal('help@example.com');
    expect(mail!.envelope).to.deep.equal({ from: 'shop@example.com', to: [run.contact.email] });
    expect(parsed.messageId).to.equal(`<run_${run.runId}_mail_1@example.com>`);
    const link = /^<(https:\/\/svc\.example\.com\/u\/[A-Za-z0-9_-]+)>$/.exec(header(raw, 'List-Unsubscribe') ?? '')?.[1];
    expect(link).to.be.a('string');
    expect(header(raw, 'List-Unsubscribe-Post')).to.equal('List-Unsubscribe=One-Click');
    // The same link in the body, where the template put it.
    expect(parsed.html).to.contain(`href="${link}"`);
    const message = await messageOf(run.runId);
    expect(message).to.include({ status: 'sent', provider_message_id: 'Q1', subject: 'Hi <script>alert(1)</script> & Co', error: null });
    expect(JSON.parse(message!.content!)).to.include({ from: FROM, to: run.contact.email });
    expect((await run.timeline()).status).to.equal('completed');
  });

  it('keeps the Message-ID across retries: a lost connection, then a 4xx, then accepted; the message is sent once', async () => {
    const { server, engine, advance } = await setup((index) => (index === 0 ? 'destroy' : index === 1 ? 451 : 'accept'));
    const run = await enrolledRun([EMAIL]);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(0);
    let message = await messageOf(run.runId);
    expect(message!.status).to.equal('queued');
    // Cut after the final dot: an unknown outcome, sent again once (email-unknown-outcome.test.ts).
    expect(message!.error).to.match(/^unknown outcome: connection closed by the server \(ECONNECTION\)/);
    expect((await run.timeline()).status).to.equal('running');

    advance(6_000);
    await engine.runUntilIdle();
    message = await messageOf(run.runId);
    expect(message).to.include({ status: 'queued' });
    expect(message!.error).to.equal('deferred: 451 the receiving server asked us to try again later');

    advance(60_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(3);
    expect(server.received).to.have.length(1);
    const ids = server.attempts.map((raw) => header(raw, 'Message-ID'));
    expect(new Set(ids)).to.deep.equal(new Set([`<run_${run.runId}_mail_1@example.com>`]));
    expect(await messageOf(run.runId)).to.include({ status: 'sent', error: null });
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    expect(detail.executions.map((execution: { status: string }) => execution.status)).to.deep.equal(['failed', 'failed', 'succeeded']);
  });

  it('fails the run at once on a 5xx, with the code, and never sends again', async () => {
    const { server, engine, advance } = await setup(() => 550);
    const run = await enrolledRun([EMAIL, { id: 'after', type: 'tag', add: ['after'] }]);
    advance(1_000);
    await engine.runUntilIdle();
    advance(3_600_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(1);
    const message = await messageOf(run.runId);
    expect(message!.status).to.equal('failed');
    expect(message!.error).to.equal('rejected: 550 the receiving server refused the message');
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'failed', currentStepId: 'mail' });
    expect(detail.reason).to.contain('rejected: 550');
  });

  it('a hard bounce (RCPT 550 5.1.1): the message bounced, the address suppressed from that message', async () => {
    const { server, engine, advance } = await setup(undefined, { rcpt: (address) => (address.toLowerCase().startsWith('gone') ? '550 5.1.1 <gone>: No such user here (mx7.example banner)' : undefined) });
    const run = await enrolledRun([EMAIL], {}, { email: 'Gone@Example.com' });
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(0);
    const message = await messageOf(run.runId);
    expect(message).to.include({ status: 'bounced', error: 'bounced: 550 5.1.1 no such mailbox' });
    const [{ id }] = await select<{ id: string }>(testDb(), 'SELECT id FROM messages WHERE run_id = ?', [run.runId]);
    const suppressions = await select<{ channel: string; address: string; reason: string; source: string }>(testDb(), 'SELECT channel, address, reason, source FROM suppressions WHERE account_id = ?', [run.accountId]);
    expect(suppressions).to.deep.equal([{ channel: 'email', address: 'gone@example.com', reason: 'hard_bounce', source: `message:${id}` }]);
    const events = await select<{ type: string }>(testDb(), "SELECT type FROM events WHERE account_id = ? AND type IN ('message.bounced', 'contact.suppressed') ORDER BY type", [run.accountId]);
    expect(events.map((event) => event.type)).to.deep.equal(['contact.suppressed', 'message.bounced']);
    expect((await run.timeline()).reason).to.contain('bounced: 550 5.1.1 no such mailbox');
    // The banner of the receiving server is nowhere a tenant can read it.
    expect(JSON.stringify(await run.timeline())).not.to.contain('mx7.example');
  });

  it('a policy rejection after the data (554 5.7.1): the message failed `rejected`, nobody suppressed', async () => {
    const { server, engine, advance } = await setup(() => '554 5.7.1 Message rejected as spam by relay.internal');
    const run = await enrolledRun([EMAIL]);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(1);
    expect(await messageOf(run.runId)).to.include({ status: 'failed', error: "rejected: 554 5.7.1 refused by the receiver's policy" });
    expect(await select(testDb(), 'SELECT id FROM suppressions WHERE account_id = ?', [run.accountId])).to.have.length(0);
  });

  it('bounds a server that takes the message and never answers: retried with the same Message-ID, not stuck', async () => {
    const { server, engine, advance } = await setup((index) => (index === 0 ? 'hang' : 'accept'));
    const run = await enrolledRun([EMAIL]);
    const began = Date.now();
    advance(1_000);
    await engine.runUntilIdle();
    expect(Date.now() - began).to.be.below(5_000);
    expect((await messageOf(run.runId))!.status).to.equal('queued');
    advance(6_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(2);
    expect(header(server.attempts[0]!, 'Message-ID')).to.equal(header(server.attempts[1]!, 'Message-ID'));
    expect(await messageOf(run.runId)).to.include({ status: 'sent' });
    expect((await run.timeline()).status).to.equal('completed');
  });

  it('signs with the account\'s DKIM key over the unsubscribe headers, verified by mailauth', async () => {
    const { server, engine, settings, advance } = await setup();
    const run = await enrolledRun([EMAIL]);
    await verifiedSendingDomain(run.accountId, 'shop.example', settings);
    const channel = await putEmailChannel(
      testDb(),
      { accountId: run.accountId, from: 'news@shop.example', dkim: { domain: 'shop.example', selector: 's1', privateKey: dkimPrivateKey() } },
      settings,
    );
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(1);
    const record = channel.dkim!.dnsRecord;
    const result = await dkimVerify(server.received[0]!.raw, {
      resolver: async (name: string, type: string) => {
        if (name === record.name && type === 'TXT') return [[record.value]];
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      },
    });
    const [signature] = result.results;
    expect(signature!.status.result).to.equal('pass');
    expect(signature!.signingDomain).to.equal('shop.example');
    const signed = /\bh=([^;]+)/.exec(unfolded(header(server.received[0]!.raw, 'DKIM-Signature') ?? ''))?.[1]?.replace(/\s+/g, '').toLowerCase().split(':');
    expect(signed).to.include.members(['from', 'subject', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']);
  });

  it('the unsubscribe journey: the link from the received message, POSTed with no cookie, skips the next email step', async () => {
    const { server, engine, advance, settings } = await setup();
    const run = await enrolledRun([EMAIL, { id: 'later', type: 'wait', duration: 'P1D' }, { ...EMAIL, id: 'again' }, { id: 'after', type: 'tag', add: ['after'] }]);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(1);
    const link = /^<([^>]+)>$/.exec(header(server.received[0]!.raw, 'List-Unsubscribe') ?? '')?.[1];
    const res = await request(appWithChannels(settings)).post(new URL(link!).pathname).type('form').send('List-Unsubscribe=One-Click');
    expect(res.status).to.equal(200);
    const [contact] = await select<{ email_subscription_status: string }>(testDb(), 'SELECT email_subscription_status FROM contacts WHERE id = ?', [run.contact.id]);
    expect(contact!.email_subscription_status).to.equal('unsubscribed');

    advance(2 * 86_400_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(1);
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    expect(detail.executions.find((execution: { stepId: string }) => execution.stepId === 'again')).to.include({ status: 'skipped', reason: 'unsubscribed' });
    expect(await messageOf(run.runId, 'again')).to.include({ status: 'skipped', error: 'unsubscribed' });
  });

  it('a worker killed after the server took the message and before its record: sent again after the lease, same Message-ID', async () => {
    const server = await startSmtpServer();
    cleanups.push(() => server.close());
    const settings = channelSettings({ emailFrom: FROM, smtpUrl: server.url });
    const run = await enrolledRun([EMAIL]);
    const start = Date.now() + 1;
    const LEASE_MS = 60_000;
    // The first worker: begins the step (its send and message queued), sends, and dies.
    const claim = await claimDueRuns(testDb(), new Date(start), { limit: 10, leaseMs: LEASE_MS });
    const [claimed] = await loadClaimedRuns(testDb(), claim);
    await recordBatch(testDb(), [planRun(claimed!, await readSteps(testDb(), claimed!.sequenceId, claimed!.version), new Date(start))], new Date(start));
    const { queued } = await sendGroups(testDb());
    const sends = await claimSends(testDb(), new Date(start), queued.map((group) => ({ group, limit: 10 })), { leaseMs: LEASE_MS, takeInterrupted: false });
    const transports = new SmtpTransports();
    cleanups.push(async () => transports.close());
    const send = await emailChannel({ settings, transports, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), now: () => new Date(start) }).load(testDb(), sends.sending);
    const result = await send(sends.sending[0]!, new AbortController().signal);
    expect(result.ok).to.equal(true);
    expect(server.received).to.have.length(1);
    // Written before the server was called, and nothing after: the record never came.
    expect((await messageOf(run.runId))!.status).to.equal('sending');

    const { engine, advance } = engineAt(start, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
    cleanups.push(() => engine.stop(50));
    advance(LEASE_MS - 1);
    expect(await engine.runOnce()).to.equal(0);
    advance(2);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(2);
    expect(server.received[1]!.parsed.messageId).to.equal(server.received[0]!.parsed.messageId);
    expect(await messageOf(run.runId)).to.include({ status: 'sent' });
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    expect(detail.executions.map((execution: { status: string }) => execution.status)).to.deep.equal(['failed', 'succeeded']);
    expect(detail.executions[0]!.reason).to.match(/^interrupted/);
  });

  it('a relay that never answers holds its account\'s messages only: another account\'s keep flowing', async () => {
    const silent = await startSmtpServer(() => 'hang');
    const working = await startSmtpServer();
    cleanups.push(() => silent.close(), () => working.close());
    const settings = channelSettings({ emailFrom: FROM });
    const stuck = await enrolledRun([EMAIL]);
    const flowing = await enrolledRun([EMAIL]);
    await putEmailChannel(testDb(), { accountId: stuck.accountId, from: 'a@example.com', smtpUrl: silent.url }, settings);
    await putEmailChannel(testDb(), { accountId: flowing.accountId, from: 'b@example.com', smtpUrl: working.url }, settings);
    const { engine, advance } = engineAt(Date.now() + 1, {
      messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), smtpTimeouts: { connectionMs: 1_000, greetingMs: 1_000, socketMs: 600_000 } },
    });
    cleanups.push(() => engine.stop(50));
    advance(1_000);
    // One pass: both sends start; the silent relay's never ends (its bound is long here).
    await (engine as unknown as { tick(force: boolean): Promise<unknown> }).tick(true);
    for (let i = 0; i < 200 && working.received.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(working.received).to.have.length(1);
    for (let i = 0; i < 200 && (await messageOf(flowing.runId))!.status !== 'sent'; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await messageOf(flowing.runId)).to.include({ status: 'sent' });
    expect((await flowing.timeline()).status).to.equal('completed');
    expect(silent.attempts).to.have.length(1);
    expect(await messageOf(stuck.runId)).to.include({ status: 'sending' });
  });

  it('a message waiting for its retry is cancelled with its run, and never sent', async () => {
    const { server, engine, advance } = await setup(() => 451);
    const run = await enrolledRun([EMAIL]);
    advance(1_000);
    await engine.runUntilIdle();
    expect((await messageOf(run.runId))!.status).to.equal('queued');
    await caller(run.key).sequences.unenroll({ id: run.sequence.id, contactIds: [run.contact.id] });
    const message = await messageOf(run.runId);
    expect(message).to.include({ status: 'cancelled', error: 'the run ended before it was sent' });
    advance(3_600_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(1);
    expect((await messageOf(run.runId))!.status).to.equal('cancelled');
  });

  it('upgrades smtp:// with STARTTLS when the server offers it (a self-signed test relay, allowed by its URL)', async () => {
    const { server, engine, advance } = await setup(undefined, { startTls: true, query: '?tls.rejectUnauthorized=false' });
    const run = await enrolledRun([EMAIL]);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(1);
    expect(server.received[0]!.secure).to.equal(true);
    expect(await messageOf(run.runId)).to.include({ status: 'sent' });
  });

  it('refuses a relay whose certificate it cannot check unless the URL allows it: retried, never sent in clear', async () => {
    const { server, engine, advance } = await setup(undefined, { startTls: true });
    const run = await enrolledRun([EMAIL]);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(0);
    const message = await messageOf(run.runId);
    expect(message!.status).to.equal('queued');
    expect(message!.error).to.match(/^paused: smtp tls failed \((CERT_|SELF_SIGNED|DEPTH_ZERO|UNABLE_TO)[A-Z_]*\)$/);
  });
});
