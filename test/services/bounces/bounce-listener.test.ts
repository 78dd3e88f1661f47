import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { startBounceListener, type BounceListener } from '../../../src/services/bounces/bounce-listener';
import { signMessageToken } from '../../../src/services/bounces/message-token';
import { newRowId } from '../../../src/services/ids';
import { randomBytes } from 'node:crypto';
import { testDb, withFailingStatements } from '../../support/db';
import { refused } from '../../support/outage';
import { arf, BOUNCE_DOMAIN, bounceSettings, dsn, sendReport, sentEmail, UNSUBSCRIBE_MAILBOX } from './support';

// The inbound SMTP listener, fed by nodemailer as a receiving MTA or a feedback loop would, for
// emails the engine really sent through a real SMTP server with BOUNCE_DOMAIN set.

async function messageRow(id: string) {
  const [row] = await select<{ status: string; error: string | null; failed_at: unknown }>(testDb(), 'SELECT status, error, failed_at FROM messages WHERE id = ?', [id]);
  return row!;
}
const suppressionsOf = (accountId: string) =>
  select<{ address: string; reason: string; source: string }>(testDb(), 'SELECT address, reason, source FROM suppressions WHERE account_id = ? ORDER BY address', [accountId]);
const eventTypes = async (accountId: string) =>
  (await select<{ type: string }>(testDb(), 'SELECT type FROM events WHERE account_id = ? ORDER BY seq', [accountId])).map((row) => row.type);
const subscription = async (contactId: string) =>
  (await select<{ email_subscription_status: string }>(testDb(), 'SELECT email_subscription_status FROM contacts WHERE id = ?', [contactId]))[0]!.email_subscription_status;

describe('bounce listener', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  const counted: Array<{ source: string; kind: string; outcome: string }> = [];
  const settings = bounceSettings();
  let listener: BounceListener;

  beforeEach(async () => {
    counted.length = 0;
    listener = await startBounceListener({
      db: testDb(),
      host: '127.0.0.1',
      port: 0,
      key: settings.secrets!.bounce,
      bounceDomain: BOUNCE_DOMAIN,
      unsubscribeMailbox: UNSUBSCRIBE_MAILBOX,
      metrics: { feedback: { inc: (labels) => void counted.push(labels) } },
      maxBytes: 64 * 1024,
    });
    cleanups.push(() => listener.close());
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('takes a DSN for a sent email at its envelope sender: the message bounced, the address suppressed, message.bounced recorded', async () => {
    const sent = await sentEmail(cleanups, settings);
    expect(sent.envelopeFrom).to.match(new RegExp(`^bounce\\+[a-z2-7]{44}@${BOUNCE_DOMAIN.replace(/\./g, '\\.')}$`));
    const info = await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom }));
    expect(info.response).to.match(/^250 /);
    const message = await messageRow(sent.messageId);
    expect(message.status).to.equal('bounced');
    expect(message.error).to.equal('bounced: 5.1.1 550 5.1.1 <x>: No such user');
    expect(message.failed_at).to.not.equal(null);
    expect(await suppressionsOf(sent.run.accountId)).to.deep.equal([{ address: sent.to, reason: 'hard_bounce', source: `message:${sent.messageId}` }]);
    const types = await eventTypes(sent.run.accountId);
    expect(types.filter((type) => type === 'message.bounced')).to.have.length(1);
    expect(types).to.include('contact.suppressed');
    expect(counted).to.deep.include({ source: 'dsn', kind: 'hard_bounce', outcome: 'matched' });

    // The same DSN again (a sender that did not see our 250): nothing more.
    await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom }));
    expect((await eventTypes(sent.run.accountId)).filter((type) => type === 'message.bounced')).to.have.length(1);
    expect(await suppressionsOf(sent.run.accountId)).to.have.length(1);
  });

  it('counts a delayed DSN and a 4.x.x failure without changing the message; a late 5.7.x fails it as rejected and suppresses nothing', async () => {
    const sent = await sentEmail(cleanups, settings);
    await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom, action: 'delayed', status: '4.4.7', diagnostic: 'smtp; 451 4.4.7 try later' }));
    expect((await messageRow(sent.messageId)).status).to.equal('sent');
    expect(counted).to.deep.include({ source: 'dsn', kind: 'soft_bounce', outcome: 'matched' });
    await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom, status: '5.7.1', diagnostic: 'smtp; 550 5.7.1 Message rejected as spam' }));
    expect(await messageRow(sent.messageId)).to.include({ status: 'failed', error: 'rejected: 5.7.1 550 5.7.1 Message rejected as spam' });
    expect(await suppressionsOf(sent.run.accountId)).to.deep.equal([]);
  });

  it('takes an ARF complaint at the envelope sender: complained, suppressed as complaint, the contact unsubscribed as the one-click link does', async () => {
    const sent = await sentEmail(cleanups, settings);
    await sendReport(listener.port, sent.envelopeFrom, arf({ to: sent.envelopeFrom }));
    expect((await messageRow(sent.messageId)).status).to.equal('complained');
    expect(await suppressionsOf(sent.run.accountId)).to.deep.equal([{ address: sent.to, reason: 'complaint', source: `message:${sent.messageId}` }]);
    expect(await subscription(sent.run.contact.id)).to.equal('unsubscribed');
    const types = await eventTypes(sent.run.accountId);
    expect(types).to.include.members(['message.complained', 'contact.suppressed', 'contact.updated', 'contact.subscription_changed']);
    const [changed] = await select<{ data: string }>(testDb(), "SELECT data FROM events WHERE account_id = ? AND type = 'contact.subscription_changed'", [sent.run.accountId]);
    expect(JSON.parse(changed!.data)).to.deep.include({ source: 'unsubscribe' });
  });

  it('matches an ARF report sent to a feedback-loop address of the bounce domain by the original Message-ID, inline or attached', async () => {
    const sent = await sentEmail(cleanups, settings);
    await sendReport(listener.port, `fbl@${BOUNCE_DOMAIN}`, arf({ to: `fbl@${BOUNCE_DOMAIN}`, originalMessageId: sent.messageIdHeader, inline: true }));
    expect((await messageRow(sent.messageId)).status).to.equal('complained');
    const other = await sentEmail(cleanups, settings);
    await sendReport(listener.port, `fbl@${BOUNCE_DOMAIN}`, arf({ to: `fbl@${BOUNCE_DOMAIN}`, originalMailFrom: other.envelopeFrom }));
    expect((await messageRow(other.messageId)).status).to.equal('complained');
  });

  it('ignores a not-spam report and mail that is no report (an auto-reply), and counts them', async () => {
    const sent = await sentEmail(cleanups, settings);
    await sendReport(listener.port, sent.envelopeFrom, arf({ to: sent.envelopeFrom, feedbackType: 'not-spam' }));
    await sendReport(listener.port, sent.envelopeFrom, `From: ada@receiver.example\r\nTo: ${sent.envelopeFrom}\r\nSubject: Out of office\r\n\r\nI am away until Monday.\r\n`);
    expect((await messageRow(sent.messageId)).status).to.equal('sent');
    expect(counted).to.deep.include({ source: 'arf', kind: 'arf', outcome: 'dropped' });
    expect(counted).to.deep.include({ source: 'dsn', kind: 'unreadable', outcome: 'dropped' });
  });

  it('refuses a forged or altered token at RCPT with 550, and changes nothing', async () => {
    const sent = await sentEmail(cleanups, settings);
    const forged = `bounce+${signMessageToken(randomBytes(32), 'bounce', sent.messageId)}@${BOUNCE_DOMAIN}`;
    const error = await sendReport(listener.port, forged, dsn({ to: forged })).catch((e: { responseCode?: number; response?: string }) => e);
    expect(error).to.include({ responseCode: 550 });
    expect((error as { response: string }).response).to.match(/^550 5\.1\.1/);
    expect((await messageRow(sent.messageId)).status).to.equal('sent');
    expect(counted).to.deep.include({ source: 'smtp', kind: 'forged', outcome: 'refused' });
  });

  it('accepts and drops a DSN whose signed token names a message that is gone', async () => {
    const gone = `bounce+${signMessageToken(settings.secrets!.bounce, 'bounce', newRowId())}@${BOUNCE_DOMAIN}`;
    const info = await sendReport(listener.port, gone, dsn({ to: gone }));
    expect(info.response).to.match(/^250 /);
    expect(counted).to.deep.include({ source: 'dsn', kind: 'hard_bounce', outcome: 'unknown' });
  });

  it('answers 550 for any other domain (no open relay)', async () => {
    for (const to of ['ada@receiver.example', `bounce+x@shop.example`, `someone@sub.${BOUNCE_DOMAIN}`]) {
      const error = await sendReport(listener.port, to, 'Subject: relay me\r\n\r\nhi\r\n').catch((e: { responseCode?: number; response?: string }) => e);
      expect(error, to).to.include({ responseCode: 550 });
      expect((error as { response: string }).response).to.match(/^550 5\.7\.1/);
    }
  });

  it('takes garbage and broken MIME without crashing, and still takes the next report', async () => {
    const sent = await sentEmail(cleanups, settings);
    const garbage = [
      randomBytes(4096),
      Buffer.from('Content-Type: multipart/report; boundary="never-closed"\r\n\r\n--never-closed\r\nContent-Type: message/delivery-status\r\n\r\nAction'),
      Buffer.from('Content-Type: multipart/report; report-type=delivery-status; boundary=\r\n\r\n\u0000\u0001--\r\n'),
      Buffer.from(`Content-Type: message/delivery-status\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!!not base64${'='.repeat(100)}\r\n`),
    ];
    for (const raw of garbage) expect((await sendReport(listener.port, sent.envelopeFrom, raw)).response).to.match(/^250 /);
    expect((await messageRow(sent.messageId)).status).to.equal('sent');
    await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom }));
    expect((await messageRow(sent.messageId)).status).to.equal('bounced');
  });

  it('answers 451 while the database is down, so that the sender tries again; the report sent again is recorded', async () => {
    const sent = await sentEmail(cleanups, settings);
    const error = await withFailingStatements({ scope: 'all', failure: refused }, () =>
      sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom })).catch((e: { responseCode?: number }) => e),
    );
    expect(error).to.include({ responseCode: 451 });
    expect((await messageRow(sent.messageId)).status).to.equal('sent');
    await sendReport(listener.port, sent.envelopeFrom, dsn({ to: sent.envelopeFrom }));
    expect((await messageRow(sent.messageId)).status).to.equal('bounced');
  });

  it('refuses a message over its bound with 552 and reads none of it', async () => {
    const sent = await sentEmail(cleanups, settings);
    const big = dsn({ to: sent.envelopeFrom }).replace('Your message could not be delivered.', 'x'.repeat(100 * 1024));
    const error = await sendReport(listener.port, sent.envelopeFrom, big).catch((e: { responseCode?: number }) => e);
    expect(error).to.include({ responseCode: 552 });
    expect((await messageRow(sent.messageId)).status).to.equal('sent');
  });

  it('unsubscribes the contact of a mail to the unsubscribe mailbox of List-Unsubscribe, as the one-click POST does', async () => {
    const sent = await sentEmail(cleanups, settings);
    expect(sent.mailto).to.match(/^unsubscribe\+[a-z2-7]{44}@bounces\.example\.net$/);
    await sendReport(listener.port, sent.mailto!, `From: ${sent.to}\r\nTo: ${sent.mailto}\r\nSubject: unsubscribe\r\n\r\n`);
    expect(await subscription(sent.run.contact.id)).to.equal('unsubscribed');
    expect(await eventTypes(sent.run.accountId)).to.include('contact.subscription_changed');
    // The message itself is left as it is: an unsubscribe is no complaint.
    expect((await messageRow(sent.messageId)).status).to.equal('sent');
    // The bounce token does not work as an unsubscribe mailbox's.
    const swapped = `unsubscribe+${sent.envelopeFrom.slice('bounce+'.length)}`;
    const error = await sendReport(listener.port, swapped, 'Subject: unsubscribe\r\n\r\n').catch((e: { responseCode?: number }) => e);
    expect(error).to.include({ responseCode: 550 });
  });
});
