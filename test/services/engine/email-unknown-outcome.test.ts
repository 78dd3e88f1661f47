import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { select } from '../../../src/db/sql/statements';
import type { SmtpTimeouts } from '../../../src/services/messages/smtp-transports';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { startSmtpServer, type SmtpAnswer } from '../../support/smtp-server';
import { engineAt, enrolledRun } from './support';

// After the final dot, no reply is an unknown outcome (issue 34, section 2; docs/sequences.md
// "What a recipient can receive twice"): the relay may have the message. It is sent again at most
// once, with the same Message-ID; a second unknown outcome records the message `unconfirmed`,
// and the run goes on. Every other silence keeps its own, shorter bound and is an ordinary retry.
// The engine's clock is moved by hand; the only real waits are the SMTP bounds (300 ms here).

const EMAIL = { id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' };
const AFTER = { id: 'after', type: 'tag', add: ['after'] };
const FROM = 'Shop <shop@example.com>';
const SHORT: SmtpTimeouts = { connectionMs: 1_000, greetingMs: 1_000, socketMs: 300, dataMs: 300 };

async function messageOf(runId: string) {
  const [row] = await select<{ status: string; error: string | null }>(testDb(), "SELECT status, error FROM messages WHERE run_id = ? AND step_id = 'mail'", [runId]);
  return row!;
}

async function sendOf(runId: string) {
  const [row] = await select<{ status: string; attempt: number | string; unknown_outcomes: number | string }>(
    testDb(),
    'SELECT status, attempt, unknown_outcomes FROM outbox WHERE run_id = ?',
    [runId],
  );
  return { status: row!.status, attempt: Number(row!.attempt), unknownOutcomes: Number(row!.unknown_outcomes) };
}

const messageIdOf = (raw: string) => /^Message-ID: (.*)$/im.exec(raw)?.[1]?.trim();

// A server that greets, answers EHLO, and then fails the client before the final dot: it never
// answers MAIL FROM ('silent'), or closes the connection on it ('close').
async function startStallingServer(kind: 'silent' | 'close'): Promise<{ url: string; mailFroms: () => number; close: () => Promise<void> }> {
  let mailFroms = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.write('220 stall.test ESMTP\r\n');
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (/^(EHLO|HELO)/i.test(line)) socket.write('250 stall.test\r\n');
        else if (/^MAIL FROM/i.test(line)) {
          mailFroms += 1;
          if (kind === 'close') socket.destroy();
        } else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mailFroms: () => mailFroms,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('sequence engine: an email whose final dot gets no reply', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function engineFor(smtpUrl: string, smtpTimeouts: SmtpTimeouts = SHORT) {
    const settings = channelSettings({ emailFrom: FROM, smtpUrl });
    const parts = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), smtpTimeouts } });
    cleanups.push(() => parts.engine.stop(50));
    return parts;
  }

  async function relay(answer: (index: number) => SmtpAnswer) {
    const server = await startSmtpServer(answer);
    cleanups.push(() => server.close());
    return server;
  }

  it('hangs twice: sent again once with the same Message-ID, then unconfirmed, and the run completes', async () => {
    const server = await relay(() => 'hang');
    const { engine, advance } = engineFor(server.url);
    const run = await enrolledRun([EMAIL, AFTER]);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(1);
    expect(await messageOf(run.runId)).to.deep.include({ status: 'queued' });
    expect((await messageOf(run.runId)).error).to.match(/^unknown outcome: no answer to the final dot within 300 ms \(ETIMEDOUT\)/);
    expect(await sendOf(run.runId)).to.deep.equal({ status: 'queued', attempt: 1, unknownOutcomes: 1 });

    advance(6_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(2);
    const message = await messageOf(run.runId);
    expect(message.status).to.equal('unconfirmed');
    expect(message.error).to.match(/^unconfirmed: unknown outcome: no answer to the final dot within 300 ms \(ETIMEDOUT\)/);
    expect(await sendOf(run.runId)).to.deep.equal({ status: 'succeeded', attempt: 2, unknownOutcomes: 2 });
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    const mail = detail.executions.filter((execution: { stepId: string }) => execution.stepId === 'mail');
    expect(mail.map((execution: { status: string }) => execution.status)).to.deep.equal(['failed', 'succeeded']);
    expect(mail[1]).to.deep.include({ reason: message.error });
    expect(mail[1].detail).to.deep.include({ outcome: 'unconfirmed' });
    expect(detail.executions.find((execution: { stepId: string }) => execution.stepId === 'after')).to.include({ status: 'succeeded' });

    // Never a third time, whatever time passes.
    advance(7_200_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(2);
    expect(new Set(server.attempts.map(messageIdOf))).to.deep.equal(new Set([`<run_${run.runId}_mail_1@example.com>`]));
  });

  it('hangs once, then the server accepts: sent, received once complete, same Message-ID', async () => {
    const server = await relay((index) => (index === 0 ? 'hang' : 'accept'));
    const { engine, advance } = engineFor(server.url);
    const run = await enrolledRun([EMAIL]);
    advance(1_000);
    await engine.runUntilIdle();
    advance(6_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(2);
    expect(server.received).to.have.length(1);
    expect(messageIdOf(server.attempts[0]!)).to.equal(messageIdOf(server.attempts[1]!));
    expect(await messageOf(run.runId)).to.deep.equal({ status: 'sent', error: null });
    expect(await sendOf(run.runId)).to.deep.equal({ status: 'succeeded', attempt: 1, unknownOutcomes: 1 });
    expect((await run.timeline()).status).to.equal('completed');
  });

  it('a connection lost after the final dot, twice, is the same unknown outcome: unconfirmed after one resend', async () => {
    const server = await relay(() => 'destroy');
    const { engine, advance } = engineFor(server.url);
    const run = await enrolledRun([EMAIL, AFTER]);
    advance(1_000);
    await engine.runUntilIdle();
    advance(6_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(2);
    expect((await messageOf(run.runId)).status).to.equal('unconfirmed');
    expect((await run.timeline()).status).to.equal('completed');
  });

  it('an unknown outcome, then a 4xx, then another unknown outcome: the second is unconfirmed, counted by the send', async () => {
    const server = await relay((index) => (index === 1 ? 451 : 'hang'));
    const { engine, advance } = engineFor(server.url);
    const run = await enrolledRun([EMAIL]);
    advance(1_000);
    await engine.runUntilIdle();
    advance(6_000);
    await engine.runUntilIdle();
    expect((await messageOf(run.runId)).error).to.match(/^deferred: 451/);
    advance(60_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(3);
    expect((await messageOf(run.runId)).status).to.equal('unconfirmed');
    expect(await sendOf(run.runId)).to.deep.equal({ status: 'succeeded', attempt: 3, unknownOutcomes: 2 });
  });

  for (const kind of ['silent', 'close'] as const) {
    it(`a server ${kind === 'silent' ? 'silent' : 'closing the connection'} before the final dot is an ordinary retry within the socket bound, never unconfirmed`, async () => {
      const server = await startStallingServer(kind);
      cleanups.push(() => server.close());
      // The reply to the final dot may take 10 minutes; the wait for MAIL FROM's keeps 300 ms.
      const { engine, advance } = engineFor(server.url, { ...SHORT, dataMs: 600_000 });
      const run = await enrolledRun([EMAIL]);
      const began = Date.now();
      advance(1_000);
      await engine.runUntilIdle();
      advance(6_000);
      await engine.runUntilIdle();
      advance(60_000);
      await engine.runUntilIdle();
      expect(Date.now() - began).to.be.below(5_000);
      expect(server.mailFroms()).to.equal(3);
      const message = await messageOf(run.runId);
      expect(message.status).to.equal('queued');
      expect(message.error).to.match(kind === 'silent' ? /^no answer within 300 ms \(ETIMEDOUT\)/ : /\(E[A-Z]+\)$/);
      expect(message.error).not.to.contain('unknown outcome');
      expect(await sendOf(run.runId)).to.deep.equal({ status: 'queued', attempt: 3, unknownOutcomes: 0 });
      expect((await run.timeline()).status).to.equal('running');
    });
  }

  it('waits SMTP_DATA_TIMEOUT_MS for the reply, past the send lease of other channels, and a graceful stop ends the wait: an unknown outcome', async () => {
    const server = await relay(() => 'hang');
    const { engine, advance } = engineFor(server.url, { ...SHORT, dataMs: 600_000 });
    const run = await enrolledRun([EMAIL]);
    advance(1_000);
    await (engine as unknown as { tick(force: boolean): Promise<unknown> }).tick(true);
    for (let i = 0; i < 200 && server.attempts.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(server.attempts).to.have.length(1);
    // Five minutes later on the engine's clock: still waiting, not taken as interrupted (the
    // email's lease outlasts every SMTP bound), not sent again.
    advance(300_000);
    await (engine as unknown as { tick(force: boolean): Promise<unknown> }).tick(true);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.attempts).to.have.length(1);
    expect((await messageOf(run.runId)).status).to.equal('sending');

    const stopping = Date.now();
    await engine.stop(50);
    expect(Date.now() - stopping).to.be.below(3_000);
    const message = await messageOf(run.runId);
    expect(message.status).to.equal('queued');
    expect(message.error).to.match(/^unknown outcome: .*stopping/);
    expect(await sendOf(run.runId)).to.deep.include({ status: 'queued', unknownOutcomes: 1 });
  });
});
