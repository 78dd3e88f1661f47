import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { select } from '../../../src/db/sql/statements';
import { createCaller, createCallerContext } from '../../../src/routers/caller';
import { putEmailChannel } from '../../../src/services/channels/email-channel';
import { SmtpTransports } from '../../../src/services/messages/smtp-transports';
import { channelSettings, dkimPrivateKey, publishedTokens, verifiedSendingDomain } from '../../support/channels';
import { testDb } from '../../support/db';
import { buildUser, dashboardApp, mutate, signInCookie } from '../../support/dashboard';
import { buildContact, buildTenant } from '../../support/factories';
import { startSmtpServer } from '../../support/smtp-server';
import { engineAt, enrolledRun } from './support';

// The From rules at save time (a sequence's email steps, over tRPC here as the API and the
// dashboard call them), at send time (defence in depth: what was stored before), DKIM signing
// only when aligned, and the relay's address checked again when the connection is made.

const step = (from?: string) => ({ id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi <a href="{{ unsubscribe_url }}">unsubscribe</a></p>', ...(from ? { from } : {}) });

async function messageOf(runId: string) {
  const [row] = await select<{ status: string; error: string | null }>(testDb(), "SELECT status, error FROM messages WHERE run_id = ? AND step_id = 'mail'", [runId]);
  return row;
}

describe('sending domains: steps, sends and relays', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  describe("a sequence's email steps at save (tRPC)", () => {
    const settings = channelSettings({ smtpUrl: 'smtp://relay.svc.example:587', emailFrom: 'Svc <news@svc.example>', resolveTxt: publishedTokens });
    const trpc = (key: string) => createCaller(createCallerContext({ db: testDb(), apiKey: key, channels: settings }));

    it('adds, lists, verifies and deletes a sending domain over tRPC, as over REST', async () => {
      const { key } = await buildTenant();
      const added = await trpc(key).channels.addEmailDomain({ domain: 'trpc.example' });
      expect(added.domain).to.deep.include({ domain: 'trpc.example', status: 'verified' });
      const listed = await trpc(key).channels.listEmailDomains({});
      expect(listed.domains.map((d) => d.domain)).to.deep.equal(['trpc.example']);
      expect(listed.operatorDomains).to.deep.equal(['svc.example']);
      expect((await trpc(key).channels.verifyEmailDomain({ domain: 'trpc.example' })).domain.status).to.equal('verified');
      await trpc(key).channels.deleteEmailDomain({ domain: 'trpc.example' });
      const gone = await trpc(key).channels.verifyEmailDomain({ domain: 'trpc.example' }).then(() => null, (error: { code: string }) => error.code);
      expect(gone).to.equal('NOT_FOUND');
    });

    it('refuses a step From outside the verified domains on the shared relay with a 400 naming steps.N.from, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const error = await trpc(key)
        .sequences.create({ name: 'Spoof', status: 'active', steps: [{ id: 'wait', type: 'wait', duration: 'PT1M' }, step('Bank Security <security@bank.example>')] } as never)
        .then(() => null, (caught: unknown) => caught as { code: string; cause?: { details?: Array<{ path: string; message: string }> } });
      expect(error, 'refused').not.to.equal(null);
      expect(error!.code).to.equal('BAD_REQUEST');
      expect(error!.cause?.details).to.deep.equal([
        { path: 'steps.1.from', message: 'Step "mail": bank.example is not a verified sending domain of the account (POST /channels/email/domains)' },
      ]);
      const rows = await select(testDb(), 'SELECT id FROM sequences WHERE account_id = ?', [accountId]);
      expect(rows).to.deep.equal([]);
    });

    it('refuses it on a change too, and accepts a verified domain, the server\'s own, or any From with the account\'s own relay', async () => {
      const { key, accountId } = await buildTenant();
      const { sequence } = await trpc(key).sequences.create({ name: 'Newsletter', status: 'draft', steps: [step()] } as never);
      const changed = await trpc(key)
        .sequences.update({ id: sequence.id, steps: [step('promo@other.example')] } as never)
        .then(() => 'saved', (caught: { cause?: { details?: Array<{ path: string }> } }) => caught.cause?.details?.[0]?.path);
      expect(changed).to.equal('steps.0.from');

      await verifiedSendingDomain(accountId, 'other.example', settings);
      await trpc(key).sequences.update({ id: sequence.id, steps: [step('Promo <promo@deals.other.example>')] } as never);
      await trpc(key).sequences.update({ id: sequence.id, steps: [step('ops@svc.example')] } as never);

      await putEmailChannel(testDb(), { accountId, from: 'news@svc.example', smtpUrl: 'smtp://127.0.0.1:2525' }, settings);
      const own = await trpc(key).sequences.update({ id: sequence.id, steps: [step('anyone@elsewhere.example')] } as never);
      expect(own.sequence.steps[0]).to.deep.include({ from: 'anyone@elsewhere.example' });
    });
  });

  describe('at send time', () => {
    async function setup() {
      const server = await startSmtpServer();
      const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: server.url });
      const parts = engineAt(Date.now() + 1, {
        messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), smtpTimeouts: { connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000 } },
      });
      cleanups.push(() => server.close(), () => parts.engine.stop(50));
      return { server, settings, ...parts };
    }

    it('never sends through the shared relay From a domain that is not verified (stored before SMTP_URL was set): failed from_unverified, nothing received', async () => {
      const { server, engine, advance } = await setup();
      // Saved on a server that captured emails (no SMTP_URL, so no check then).
      const run = await enrolledRun([step('Bank Security <security@bank.example>'), { id: 'after', type: 'tag', add: ['went-on'] }]);
      advance(1_000);
      await engine.runUntilIdle();
      expect(server.received).to.have.length(0);
      const message = await messageOf(run.runId);
      expect(message!.status).to.equal('failed');
      expect(message!.error).to.match(/^from_unverified: bank\.example is not a verified sending domain/);
    });

    it('sends it once the domain is verified, and signs only a From the DKIM domain aligns with', async () => {
      const { server, engine, advance, settings } = await setup();
      const run = await enrolledRun([step('promo@other.example'), { ...step('news@mail.shop.example'), id: 'mail2' }]);
      await verifiedSendingDomain(run.accountId, 'other.example', settings);
      await verifiedSendingDomain(run.accountId, 'shop.example', settings);
      await putEmailChannel(testDb(), { accountId: run.accountId, from: 'news@shop.example', dkim: { domain: 'shop.example', selector: 's1', privateKey: dkimPrivateKey() } }, settings);
      advance(1_000);
      await engine.runUntilIdle();
      advance(1_000);
      await engine.runUntilIdle();
      expect(server.received).to.have.length(2);
      const [promo, news] = server.received;
      expect(promo!.raw).to.match(/^From: promo@other\.example/m);
      expect(promo!.raw, 'no signature with a d= that fails DMARC').not.to.match(/^DKIM-Signature:/im);
      expect(news!.raw).to.match(/^DKIM-Signature:.*d=shop\.example/im);
    });
  });

  it("refuses the message editor's test send From an unverified domain on the shared relay (400 naming step.from), and sends nothing", async () => {
    const server = await startSmtpServer();
    cleanups.push(() => server.close());
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: server.url });
    const transports = new SmtpTransports({ connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000 }, settings);
    cleanups.push(async () => transports.close());
    const tenant = await buildTenant();
    const { sequence } = await createCaller(createCallerContext({ db: testDb(), apiKey: tenant.key })).sequences.create({
      name: 'Test sends',
      status: 'active',
      steps: [{ id: 'hello', type: 'email', subject: 'Hi', html: '<p>Hi</p>' }],
    } as never);
    const contact = await buildContact(tenant.accountId, { email: 'ada@example.com' });
    const user = await buildUser(tenant.accountId);
    const app = dashboardApp({ channels: settings, testSends: { transports, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-test-sends-')) } });
    const cookie = await signInCookie(app, user.email);
    const draft = { type: 'email', subject: 'Hi', html: '<p>Hi <a href="{{ unsubscribe_url }}">unsubscribe</a></p>', from: 'Bank <security@bank.example>' };
    const refused = await mutate(app, 'dashboard.messages.sendTest', { sequenceId: sequence.id, stepId: 'hello', contactId: contact.id, step: draft, to: 'me@agency.example' }, cookie);
    expect(refused.status).to.equal(400);
    expect(JSON.stringify(refused.body)).to.include('from_unverified: bank.example is not a verified sending domain');
    expect(server.received).to.have.length(0);
    const sent = await mutate(app, 'dashboard.messages.sendTest', { sequenceId: sequence.id, stepId: 'hello', contactId: contact.id, step: { ...draft, from: 'news@example.com' }, to: 'me@agency.example' }, cookie);
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(server.received).to.have.length(1);
  });

  describe("an account's relay at connect time", () => {
    it('refuses a relay whose name resolves to a loopback address on a server database, and connects with SMTP_ALLOW_PRIVATE_RELAYS', async () => {
      const server = await startSmtpServer();
      cleanups.push(() => server.close());
      // The name, not the address: the save-time check passes it; the lookup at connect time does not.
      const byName = server.url.replace('127.0.0.1', 'localhost');
      const mail = { from: 'news@shop.example', to: 'ada@example.com', subject: 'x', text: 'x' };
      const guarded = new SmtpTransports({ connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000 }, { smtpUrl: 'smtp://relay.svc.example:587', allowPrivateRelays: false });
      cleanups.push(async () => guarded.close());
      const refused = await guarded.send(byName, mail).then(() => null, (error: Error) => error);
      expect(refused, 'refused').to.be.instanceOf(Error);
      expect(refused!.message).to.match(/refused address/);
      expect(server.received).to.have.length(0);

      const allowed = new SmtpTransports({ connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000 }, { smtpUrl: undefined, allowPrivateRelays: true });
      cleanups.push(async () => allowed.close());
      await allowed.send(byName, mail);
      expect(server.received).to.have.length(1);
    });

    it("leaves the operator's own SMTP_URL alone (the operator names it, not a tenant)", async () => {
      const server = await startSmtpServer();
      cleanups.push(() => server.close());
      const transports = new SmtpTransports({ connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000 }, { smtpUrl: server.url, allowPrivateRelays: false });
      cleanups.push(async () => transports.close());
      await transports.send(server.url, { from: 'news@shop.example', to: 'ada@example.com', subject: 'x', text: 'x' });
      expect(server.received).to.have.length(1);
    });
  });
});
