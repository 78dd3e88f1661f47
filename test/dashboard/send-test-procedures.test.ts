import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { putEmailChannel } from '../../src/services/channels/email-channel';
import { SmtpTransports } from '../../src/services/messages/smtp-transports';
import { caller } from '../support/app';
import { channelSettings, dkimPrivateKey } from '../support/channels';
import { buildUser, dashboardApp, mutate, query, signInCookie } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { startSmtpServer, type SmtpAnswer } from '../support/smtp-server';

// dashboard.messages.sendTest: the message editor's "Send a test". The step as edited, rendered
// for the preview contact, goes once to the typed address through the account's sender, with a
// real send's headers, and is recorded as a test message: in no run, no list, no counter.

describe('dashboard.messages.sendTest', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(options: { answer?: (index: number) => SmtpAnswer; relay?: boolean; perMinute?: number; bounceDomain?: string } = {}) {
    const server = await startSmtpServer(options.answer);
    cleanups.push(() => server.close());
    const settings = channelSettings(options.bounceDomain ? { bounceDomain: options.bounceDomain } : {});
    const transports = new SmtpTransports({ connectionMs: 2_000, greetingMs: 2_000, socketMs: 2_000 });
    cleanups.push(() => transports.close());
    const outboxDir = mkdtempSync(path.join(tmpdir(), 'svc-test-sends-'));
    const tenant = await buildTenant();
    const channel = await putEmailChannel(
      testDb(),
      {
        accountId: tenant.accountId,
        from: 'News <news@shop.example>',
        replyTo: 'help@shop.example',
        ...(options.relay === false ? {} : { smtpUrl: server.url }),
        dkim: { domain: 'shop.example', selector: 's1', privateKey: dkimPrivateKey() },
      },
      settings,
    );
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Welcome',
      status: 'active',
      steps: [{ id: 'hello', type: 'email', subject: 'Saved, {{ contact.firstName }}', html: '<p>Saved</p>' }],
    });
    const contact = await buildContact(tenant.accountId, { email: 'ada@example.com', firstName: 'Ada' });
    const user = await buildUser(tenant.accountId);
    const app = dashboardApp({ channels: settings, testSends: { transports, outboxDir, perMinute: options.perMinute } });
    const cookie = await signInCookie(app, user.email);
    const edited = { type: 'email', subject: 'Edited for {{ contact.firstName }}', html: '<p>Hi {{ contact.firstName }}, <a href="{{ unsubscribeUrl }}">unsubscribe</a></p>' };
    const sendTest = (input: Record<string, unknown> = {}) =>
      mutate(app, 'dashboard.messages.sendTest', { sequenceId: sequence.id, stepId: 'hello', contactId: contact.id, step: edited, to: 'me@agency.example', ...input }, cookie);
    return { tenant, sequence, contact, server, outboxDir, app, cookie, sendTest, channel };
  }

  async function messageRows(accountId: string) {
    return testDb().sequelize.query<{ test: unknown; run_id: string | null; sequence_id: string | null; status: string; to_address: string; error: string | null }>(
      'SELECT test, run_id, sequence_id, status, to_address, error FROM messages WHERE account_id = ?',
      { replacements: [accountId], type: 'SELECT' as never },
    ) as unknown as Promise<Array<{ test: unknown; run_id: string | null; sequence_id: string | null; status: string; to_address: string; error: string | null }>>;
  }

  it('sends a test with the VERP envelope sender of its own message and a Feedback-ID, still signed', async () => {
    const { tenant, server, sendTest, channel } = await setUp({ bounceDomain: 'bounces.shop.example' });
    const res = await sendTest();
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const mail = server.received[0]!;
    expect(mail.envelope.from).to.match(/^bounce\+[a-z2-7]{44}@bounces\.shop\.example$/);
    expect(mail.parsed.from?.text).to.equal('"News" <news@shop.example>');
    expect(mail.parsed.headers.get('feedback-id')).to.equal(`test:test:${tenant.accountId}:shop.example`);
    const [row] = await messageRows(tenant.accountId);
    expect(row!.status).to.equal('sent');
    const record = channel.dkim!.dnsRecord;
    const verified = await dkimVerify(mail.raw, {
      resolver: async (name: string, type: string) => {
        if (name === record.name && type === 'TXT') return [[record.value]];
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      },
    });
    expect(verified.results[0]!.status.result).to.equal('pass');
  });

  it('sends the step as edited, rendered for the contact, to the typed address with a real send\'s headers, signed', async () => {
    const { tenant, server, sendTest, channel } = await setUp();
    const res = await sendTest();
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.result.data.test).to.include({ status: 'sent', to: 'me@agency.example', subject: 'Edited for Ada' });
    expect(server.received).to.have.length(1);
    const mail = server.received[0]!;
    expect(mail.envelope.to).to.deep.equal(['me@agency.example']);
    expect(mail.parsed.subject).to.equal('Edited for Ada');
    expect(mail.parsed.from?.text).to.equal('"News" <news@shop.example>');
    expect(mail.parsed.replyTo?.text).to.equal('help@shop.example');
    expect(mail.parsed.messageId).to.match(/^<test-[^@]+@shop\.example>$/);
    const headers = mail.raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n(?=[ \t])/g, '');
    expect(headers).to.match(/^List-Unsubscribe: <https:\/\/svc\.example\.com\/[^>]+>\r?$/m);
    expect(headers).to.match(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m);
    expect(mail.parsed.html).to.include('Hi Ada');
    const record = channel.dkim!.dnsRecord;
    const verified = await dkimVerify(mail.raw, {
      resolver: async (name: string, type: string) => {
        if (name === record.name && type === 'TXT') return [[record.value]];
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      },
    });
    expect(verified.results[0]!.status.result).to.equal('pass');
    expect(verified.results[0]!.signingDomain).to.equal('shop.example');

    const rows = await messageRows(tenant.accountId);
    expect(rows).to.have.length(1);
    expect(Boolean(Number(rows[0]!.test))).to.equal(true);
    expect(rows[0]).to.include({ run_id: null, sequence_id: null, status: 'sent', to_address: 'me@agency.example' });
  });

  it('is in no contact\'s message list, no run and no counter', async () => {
    const { tenant, contact, sequence, app, cookie, sendTest } = await setUp();
    expect((await sendTest()).status).to.equal(200);
    const messages = await caller(tenant.key).contacts.messages({ id: contact.id });
    expect(messages.messages).to.deep.equal([]);
    const runs = await caller(tenant.key).sequences.runs({ id: sequence.id });
    expect(runs.runs).to.deep.equal([]);
    const stats = await query(app, `dashboard.sequences.activity`, cookie);
    expect(JSON.stringify(stats.body)).to.not.match(/"messagesSent":[1-9]/);
  });

  it('captures the test as an .eml file when the account has no relay and SMTP_URL is unset', async () => {
    const { tenant, outboxDir, server, sendTest } = await setUp({ relay: false });
    const res = await sendTest();
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.result.data.test.status).to.equal('captured');
    expect(server.received).to.have.length(0);
    const files = readdirSync(outboxDir);
    expect(files).to.have.length(1);
    const parsed = await simpleParser(readFileSync(path.join(outboxDir, files[0]!)));
    expect(parsed.subject).to.equal('Edited for Ada');
    expect((parsed.to as { text: string }).text).to.equal('me@agency.example');
    expect((await messageRows(tenant.accountId))[0]).to.include({ status: 'captured' });
  });

  it('answers a relay\'s refusal with a 409 naming its answer, and records the test as failed', async () => {
    const { tenant, sendTest } = await setUp({ answer: () => 550 });
    const res = await sendTest();
    expect(res.status).to.equal(409);
    expect(res.body.error.message).to.equal('The test was not sent: rejected: 550 the receiving server refused the message');
    expect(res.body.error.data.appCode).to.equal('send_refused');
    const rows = await messageRows(tenant.accountId);
    expect(rows[0]).to.include({ status: 'failed' });
    expect(rows[0]!.error).to.equal('rejected: 550 the receiving server refused the message');
  });

  it('refuses bad input with a 400 and writes nothing, and another account\'s sequence is a 404', async () => {
    const { tenant, contact, server, sendTest } = await setUp();
    const badAddress = await sendTest({ to: 'not an address' });
    expect(badAddress.status).to.equal(400);
    expect(JSON.stringify(badAddress.body)).to.include('must be an email address');
    const badTemplate = await sendTest({ step: { type: 'email', subject: 'Hi', html: '{% if x %}open' } });
    expect(badTemplate.status).to.equal(400);
    expect(badTemplate.body.error.data.details[0].path).to.equal('step.html');
    const unknownType = await sendTest({ step: { type: 'fax', number: '1' } });
    expect(unknownType.status).to.equal(400);
    const other = await buildTenant();
    const { sequence: theirs } = await caller(other.key).sequences.create({ name: 'Theirs', status: 'active', steps: [{ id: 'hello', type: 'email', subject: 'x', html: 'x' }] });
    const foreign = await sendTest({ sequenceId: theirs.id, contactId: contact.id });
    expect(foreign.status).to.equal(404);
    expect(server.attempts).to.have.length(0);
    expect(await messageRows(tenant.accountId)).to.deep.equal([]);
  });

  it('limits test sends per account and minute: over it, a 429 that sends nothing', async () => {
    const { server, sendTest } = await setUp({ perMinute: 2 });
    expect((await sendTest()).status).to.equal(200);
    expect((await sendTest()).status).to.equal(200);
    const third = await sendTest();
    expect(third.status).to.equal(429);
    expect(third.body.error.message).to.match(/At most 2 test sends a minute/);
    expect(server.received).to.have.length(2);
  });
});
