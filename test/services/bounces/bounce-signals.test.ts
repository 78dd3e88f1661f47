import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { startBounceListener, type BounceListener } from '../../../src/services/bounces/bounce-listener';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testDb } from '../../support/db';
import { startSmtpServer } from '../../support/smtp-server';
import { engineAt, enrolledRun } from '../engine/support';
import { arf, BOUNCE_DOMAIN, bounceSettings, dsn, sendReport, sentEmail, UNSUBSCRIBE_MAILBOX } from './support';

// `email.bounced` (docs/activities.md "Engagement signals"): reports sent to the bounce listener
// by nodemailer, as a receiving MTA or a feedback loop would, about emails the engine really
// sent through a real SMTP server; the contact's activities read from the table the intake
// writes.

async function activitiesOf(contactId: string) {
  const rows = await select<{ id: string; name: string; properties: string }>(testDb(), 'SELECT id, name, properties FROM activities WHERE contact_id = ? ORDER BY id', [contactId]);
  return rows.map((row) => ({ id: row.id, name: row.name, properties: JSON.parse(row.properties) as Record<string, unknown> }));
}

describe('bounce signals (email.bounced)', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  const settings = bounceSettings();
  let listener: BounceListener;

  beforeEach(async () => {
    listener = await startBounceListener({
      db: testDb(),
      host: '127.0.0.1',
      port: 0,
      key: settings.secrets!.bounce,
      bounceDomain: BOUNCE_DOMAIN,
      unsubscribeMailbox: UNSUBSCRIBE_MAILBOX,
      activities: { retentionDays: 90, now: () => new Date() },
    });
    cleanups.push(() => listener.close());
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('records a hard bounce once, with its type and message, however often the report comes', async () => {
    const sent = await sentEmail(cleanups, settings);
    for (let i = 0; i < 2; i += 1) await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom }));
    expect(await activitiesOf(sent.run.contact.id)).to.deep.equal([
      {
        id: `email.bounced:${sent.messageId}`,
        name: 'email.bounced',
        properties: {
          messageId: sent.messageId,
          sequenceId: sent.run.sequence.id,
          stepId: 'mail',
          runId: sent.run.runId,
          type: 'hard',
          detail: '5.1.1 550 5.1.1 <x>: No such user',
        },
      },
    ]);
  });

  it('records a complaint as email.bounced of type complaint, once', async () => {
    const sent = await sentEmail(cleanups, settings);
    for (let i = 0; i < 2; i += 1) await sendReport(listener.port, sent.envelopeFrom, arf({ to: sent.envelopeFrom }));
    const list = await activitiesOf(sent.run.contact.id);
    expect(list.map((a) => a.id)).to.deep.equal([`email.bounced:${sent.messageId}:complaint`]);
    expect(list[0]!.properties).to.deep.include({ messageId: sent.messageId, type: 'complaint', detail: 'abuse' });
  });

  it('records nothing for a soft bounce (delayed, 4.x.x) or a rejection of the content (5.7.x)', async () => {
    const sent = await sentEmail(cleanups, settings);
    await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom, action: 'delayed', status: '4.4.7', diagnostic: 'smtp; 451 4.4.7 try later' }));
    await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom, status: '4.2.2', diagnostic: 'smtp; 452 4.2.2 mailbox full' }));
    await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom, status: '5.7.1', diagnostic: 'smtp; 550 5.7.1 Message rejected as spam' }));
    expect(await activitiesOf(sent.run.contact.id)).to.deep.equal([]);
  });

  it('records a hard bounce at the send (RCPT 550 5.1.1) as email.bounced of type hard, once the outcome is recorded', async () => {
    const server = await startSmtpServer(undefined, { rcpt: () => '550 5.1.1 <gone>: No such user here' });
    const withRelay = { ...settings, smtpUrl: server.url };
    const { engine, advance } = engineAt(Date.now() + 1, {
      messages: { settings: withRelay, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) },
      activities: { retentionDays: 90, now: () => new Date() },
    });
    cleanups.push(() => server.close(), () => engine.stop(50));
    const run = await enrolledRun([{ id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p>' }], {}, { email: 'gone@example.com' });
    advance(1_000);
    await engine.runUntilIdle();
    const [message] = await select<{ id: string; status: string }>(testDb(), 'SELECT id, status FROM messages WHERE run_id = ?', [run.runId]);
    expect(message!.status).to.equal('bounced');
    expect(await activitiesOf(run.contact.id)).to.deep.equal([
      {
        id: `email.bounced:${message!.id}`,
        name: 'email.bounced',
        properties: { messageId: message!.id, sequenceId: run.sequence.id, stepId: 'mail', runId: run.runId, type: 'hard', detail: '550 5.1.1 no such mailbox' },
      },
    ]);
  });
});
