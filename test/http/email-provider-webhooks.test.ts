import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createSign, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../src/app';
import { toDate } from '../../src/db/sql/rows';
import { select } from '../../src/db/sql/statements';
import { silentLogger } from '../support/app';
import { testDb } from '../support/db';
import { bounceSettings, sentEmail } from '../services/bounces/support';

// POST /webhooks/email/ses (Amazon SES through SNS) and /webhooks/email/sendgrid, with the
// providers' documented payloads, signed with keys made here: an RSA key and a self-signed
// certificate (openssl) standing in for SNS's, an ECDSA P-256 key for SendGrid's. The SNS
// certificate's fetch and the subscription's confirmation are a stand-in that records what it
// was asked; every email is one the engine sent through a real SMTP server.

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-feedback';
const CERT_URL = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem';

function makeCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-sns-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=sns.amazonaws.com'], { stdio: 'ignore' });
  return { key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8') };
}

const NOTIFICATION_FIELDS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'];
const SUBSCRIPTION_FIELDS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];

// Signed as SNS signs (its documentation's string to sign), independently of the service's code.
function snsMessage(privateKey: string, fields: Record<string, string>, version: '1' | '2' = '1'): Record<string, string> {
  const order = fields.Type === 'Notification' ? NOTIFICATION_FIELDS : SUBSCRIPTION_FIELDS;
  const text = order.filter((name) => fields[name] !== undefined).map((name) => `${name}\n${fields[name]}\n`).join('');
  const signer = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
  signer.update(text);
  return {
    ...fields,
    TopicArn: fields.TopicArn ?? TOPIC,
    SignatureVersion: version,
    Signature: signer.sign(privateKey, 'base64'),
    SigningCertURL: fields.SigningCertURL ?? CERT_URL,
    UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=x',
  };
}

function sesNotification(privateKey: string, message: object, version: '1' | '2' = '1', extra: Record<string, string> = {}) {
  return snsMessage(privateKey, { Type: 'Notification', MessageId: 'b1b7d3a4-0000-0000-0000-000000000001', TopicArn: TOPIC, Message: JSON.stringify(message), Timestamp: '2026-12-01T10:00:00.000Z', ...extra }, version);
}

// SES's documented notification shape (https://docs.aws.amazon.com/ses/latest/dg/notification-examples.html).
function sesMail(messageIdHeader: string, to: string, extra: object = {}) {
  return {
    timestamp: '2026-12-01T09:59:00.000Z',
    source: 'shop@example.com',
    sourceArn: 'arn:aws:ses:us-east-1:123456789012:identity/example.com',
    sourceIp: '127.0.3.0',
    sendingAccountId: '123456789012',
    messageId: '0100018b-ses-id-000000',
    destination: [to],
    headersTruncated: false,
    headers: [{ name: 'From', value: 'Shop <shop@example.com>' }, { name: 'To', value: to }, { name: 'Message-ID', value: messageIdHeader }],
    commonHeaders: { from: ['Shop <shop@example.com>'], to: [to], messageId: messageIdHeader, subject: 'Hi' },
    ...extra,
  };
}
const sesBounce = (mail: object, bounceType = 'Permanent') => ({
  notificationType: 'Bounce',
  bounce: {
    bounceType,
    bounceSubType: 'General',
    bouncedRecipients: [{ emailAddress: 'x@example.com', action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
    timestamp: '2026-12-01T10:00:00.000Z',
    feedbackId: '0100018b-feedback-000000',
    reportingMTA: 'dsn; a8-70.smtp-out.amazonses.com',
  },
  mail,
});

async function messageRow(id: string) {
  const [row] = await select<{ status: string; error: string | null }>(testDb(), 'SELECT status, error FROM messages WHERE id = ?', [id]);
  return row!;
}
const suppressionsOf = (accountId: string) => select<{ address: string; reason: string; source: string }>(testDb(), 'SELECT address, reason, source FROM suppressions WHERE account_id = ?', [accountId]);
const subscription = async (contactId: string) =>
  (await select<{ email_subscription_status: string }>(testDb(), 'SELECT email_subscription_status FROM contacts WHERE id = ?', [contactId]))[0]!.email_subscription_status;

describe('email provider webhooks', function () {
  this.timeout(30_000);
  const settings = bounceSettings();
  const cleanups: Array<() => Promise<void>> = [];
  let sns: { key: string; cert: string };
  let sendgrid: { privateKey: KeyObject; publicKey: string };
  const fetched: string[] = [];
  const confirmed: string[] = [];
  let certificateFails = false;

  before(() => {
    sns = makeCertificate();
    const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    sendgrid = { privateKey: pair.privateKey, publicKey: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64') };
  });
  beforeEach(() => {
    fetched.length = 0;
    confirmed.length = 0;
    certificateFails = false;
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function app(emailWebhooks: { sesTopicArns: string[]; sendgridPublicKey?: string } = { sesTopicArns: [TOPIC], sendgridPublicKey: sendgrid.publicKey }) {
    return createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000, emailWebhooks },
      logger: silentLogger,
      channels: settings,
      emailProviders: {
        fetchCertificate: async (url) => {
          fetched.push(url);
          if (certificateFails) throw new Error('unreachable');
          return sns.cert;
        },
        confirmSubscription: async (url) => void confirmed.push(url),
      },
    });
  }
  // SNS posts its JSON as text/plain.
  const postSes = (server: ReturnType<typeof app>, body: unknown) =>
    request(server).post('/webhooks/email/ses').set('content-type', 'text/plain; charset=UTF-8').set('x-amz-sns-message-type', 'Notification').send(typeof body === 'string' ? body : JSON.stringify(body));

  describe('POST /webhooks/email/ses', () => {
    it('records a Permanent bounce (SignatureVersion 1) found by the Message-ID: bounced, suppressed; the certificate fetched once', async () => {
      const sent = await sentEmail(cleanups, settings);
      const server = app();
      const response = await postSes(server, sesNotification(sns.key, sesBounce(sesMail(sent.messageIdHeader, sent.to))));
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.deep.equal({ received: 1, matched: 1, unknown: 0, changed: 1 });
      expect(await messageRow(sent.messageId)).to.include({ status: 'bounced' });
      expect((await messageRow(sent.messageId)).error).to.match(/^bounced: Permanent General 5\.1\.1 smtp; 550 5\.1\.1 user unknown/);
      expect(await suppressionsOf(sent.run.accountId)).to.deep.equal([{ address: sent.to, reason: 'hard_bounce', source: `message:${sent.messageId}` }]);
      // Again: nothing changes, and the certificate is not fetched again.
      const again = await postSes(server, sesNotification(sns.key, sesBounce(sesMail(sent.messageIdHeader, sent.to))));
      expect(again.body).to.deep.include({ matched: 1, changed: 0 });
      expect(fetched).to.deep.equal([CERT_URL]);
    });

    it('records a complaint (SignatureVersion 2) found by the VERP envelope sender: complained, suppressed, unsubscribed', async () => {
      const sent = await sentEmail(cleanups, settings);
      const mail = sesMail('<not-ours@example.com>', sent.to, { source: sent.envelopeFrom, messageId: 'another-ses-id' });
      const complaint = { notificationType: 'Complaint', complaint: { complainedRecipients: [{ emailAddress: sent.to }], timestamp: '2026-12-01T10:00:00.000Z', feedbackId: 'f-1', complaintFeedbackType: 'abuse' }, mail };
      const response = await postSes(app(), sesNotification(sns.key, complaint, '2'));
      expect(response.status, response.text).to.equal(200);
      expect(await messageRow(sent.messageId)).to.include({ status: 'complained' });
      expect(await suppressionsOf(sent.run.accountId)).to.deep.equal([{ address: sent.to, reason: 'complaint', source: `message:${sent.messageId}` }]);
      expect(await subscription(sent.run.contact.id)).to.equal('unsubscribed');
    });

    it('records a Delivery as delivered, and counts a Transient bounce without a change', async () => {
      const sent = await sentEmail(cleanups, settings);
      const server = app();
      await postSes(server, sesNotification(sns.key, sesBounce(sesMail(sent.messageIdHeader, sent.to), 'Transient')));
      expect(await messageRow(sent.messageId)).to.include({ status: 'sent' });
      const delivery = { notificationType: 'Delivery', delivery: { timestamp: '2026-12-01T10:00:01.000Z', recipients: [sent.to], smtpResponse: '250 ok' }, mail: sesMail(sent.messageIdHeader, sent.to) };
      expect((await postSes(server, sesNotification(sns.key, delivery))).body).to.deep.include({ matched: 1, changed: 1 });
      expect(await messageRow(sent.messageId)).to.include({ status: 'delivered' });
      expect(await suppressionsOf(sent.run.accountId)).to.deep.equal([]);
    });

    it('answers 200 and changes nothing for a message that is not ours', async () => {
      const response = await postSes(app(), sesNotification(sns.key, sesBounce(sesMail('<someone-else@example.org>', 'x@example.com'))));
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ received: 1, matched: 0, unknown: 1, changed: 0 });
    });

    it('answers 401 for a bad signature, an altered message, or a certificate URL that is not an SNS host, and fetches nothing of another host', async () => {
      const sent = await sentEmail(cleanups, settings);
      const server = app();
      const good = sesNotification(sns.key, sesBounce(sesMail(sent.messageIdHeader, sent.to)));
      const altered: Record<string, string> = { ...good, Message: good.Message!.replace('Permanent', 'Permanent ') };
      const otherKey = makeCertificate().key;
      for (const body of [
        altered,
        { ...good, Signature: Buffer.from('nope').toString('base64') },
        sesNotification(otherKey, sesBounce(sesMail(sent.messageIdHeader, sent.to))),
        sesNotification(sns.key, sesBounce(sesMail(sent.messageIdHeader, sent.to)), '1', { SigningCertURL: 'https://sns.us-east-1.amazonaws.com.evil.example/cert.pem' }),
        sesNotification(sns.key, sesBounce(sesMail(sent.messageIdHeader, sent.to)), '1', { SigningCertURL: 'http://sns.us-east-1.amazonaws.com/cert.pem' }),
        // An S3 bucket named sns would be served here.
        sesNotification(sns.key, sesBounce(sesMail(sent.messageIdHeader, sent.to)), '1', { SigningCertURL: 'https://sns.s3.amazonaws.com/cert.pem' }),
        { ...good, SignatureVersion: '3' },
      ]) {
        const response = await postSes(server, body);
        expect(response.status, JSON.stringify(body.SigningCertURL)).to.equal(401);
        expect(response.body).to.include({ code: 'invalid_signature' });
      }
      expect(fetched.every((url) => url === CERT_URL)).to.equal(true);
      expect(await messageRow(sent.messageId)).to.include({ status: 'sent' });
    });

    it('answers 403 for a topic that is not configured, however well signed, and fetches no certificate for it', async () => {
      const body = sesNotification(sns.key, sesBounce(sesMail('<x@example.com>', 'x@example.com')), '1', { TopicArn: 'arn:aws:sns:us-east-1:999999999999:someone-elses' });
      const response = await postSes(app(), body);
      expect(response.status).to.equal(403);
      expect(response.body).to.include({ code: 'forbidden' });
      expect(fetched).to.deep.equal([]);
    });

    it('confirms a subscription by fetching its SubscribeURL, only on an SNS host', async () => {
      const subscribeUrl = `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=abc`;
      const fields = { Type: 'SubscriptionConfirmation', MessageId: 'm-1', Token: 'abc', TopicArn: TOPIC, Message: 'You have chosen to subscribe...', SubscribeURL: subscribeUrl, Timestamp: '2026-12-01T10:00:00.000Z' };
      const response = await postSes(app(), snsMessage(sns.key, fields));
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.deep.equal({ confirmed: true });
      expect(confirmed).to.deep.equal([subscribeUrl]);

      const elsewhere = await postSes(app(), snsMessage(sns.key, { ...fields, SubscribeURL: 'https://169.254.169.254/latest/meta-data/' }));
      expect(elsewhere.status).to.equal(400);
      expect(elsewhere.body.details).to.deep.equal([{ path: 'SubscribeURL', message: 'SubscribeURL must be https on sns.<region>.amazonaws.com' }]);
      expect(confirmed).to.have.length(1);
    });

    it('answers 503 when the signing certificate cannot be fetched (SNS sends it again)', async () => {
      certificateFails = true;
      const response = await postSes(app(), sesNotification(sns.key, sesBounce(sesMail('<x@example.com>', 'x@example.com'))));
      expect(response.status).to.equal(503);
      expect(response.headers['retry-after']).to.equal('30');
    });

    it('answers 400 for a body that is not JSON or not an SNS message, naming what is wrong, and 404 when not configured', async () => {
      expect((await postSes(app(), '{not json')).body).to.include({ code: 'malformed_json' });
      const shape = await postSes(app(), { Type: 'Notification' });
      expect(shape.status).to.equal(400);
      expect(shape.body.details[0].path).to.equal('Type');
      const notJson = await postSes(app(), snsMessage(sns.key, { Type: 'Notification', MessageId: 'm', TopicArn: TOPIC, Message: 'plain text', Timestamp: '2026-12-01T10:00:00.000Z' }));
      expect(notJson.status).to.equal(400);
      expect(notJson.body.details[0].path).to.equal('Message');
      const off = await postSes(app({ sesTopicArns: [] }), sesNotification(sns.key, {}));
      expect(off.status).to.equal(404);
    });
  });

  describe('POST /webhooks/email/sendgrid', () => {
    const postSendgrid = (server: ReturnType<typeof app>, events: unknown, options: { key?: KeyObject; timestamp?: string; signature?: string | null } = {}) => {
      const body = typeof events === 'string' ? events : JSON.stringify(events);
      const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000));
      const signature = options.signature === undefined ? sign('sha256', Buffer.from(timestamp + body), options.key ?? sendgrid.privateKey).toString('base64') : options.signature;
      const req = request(server).post('/webhooks/email/sendgrid').set('content-type', 'application/json').set('x-twilio-email-event-webhook-timestamp', timestamp);
      if (signature !== null) req.set('x-twilio-email-event-webhook-signature', signature);
      return req.send(body);
    };
    // SendGrid's documented event shapes.
    const event = (type: string, sent: { messageIdHeader: string; to: string }, extra: object = {}) => ({
      email: sent.to,
      timestamp: 1764583200,
      'smtp-id': sent.messageIdHeader,
      event: type,
      category: ['cat facts'],
      sg_event_id: `sg_event_id-${type}`,
      sg_message_id: 'sg_message_id.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0',
      ...extra,
    });

    it('records bounce, spamreport, delivered and dropped events, each for its message', async () => {
      const bounced = await sentEmail(cleanups, settings);
      const complained = await sentEmail(cleanups, settings);
      const delivered = await sentEmail(cleanups, settings);
      const dropped = await sentEmail(cleanups, settings);
      const response = await postSendgrid(app(), [
        event('bounce', bounced, { reason: '500 unknown recipient', status: '5.0.0', type: 'bounce' }),
        event('spamreport', complained),
        event('delivered', delivered, { response: '250 OK' }),
        event('dropped', dropped, { reason: 'Bounced Address', status: '5.0.0' }),
        event('open', delivered, { useragent: 'x' }),
      ]);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.deep.equal({ received: 4, matched: 4, unknown: 0, changed: 4 });
      expect(await messageRow(bounced.messageId)).to.deep.equal({ status: 'bounced', error: 'bounced: 5.0.0 500 unknown recipient' });
      expect(await messageRow(complained.messageId)).to.include({ status: 'complained' });
      expect(await subscription(complained.run.contact.id)).to.equal('unsubscribed');
      expect(await messageRow(delivered.messageId)).to.include({ status: 'delivered' });
      expect(await messageRow(dropped.messageId)).to.deep.equal({ status: 'bounced', error: 'dropped: 5.0.0 Bounced Address' });
      expect(await suppressionsOf(bounced.run.accountId)).to.deep.equal([{ address: bounced.to, reason: 'hard_bounce', source: `message:${bounced.messageId}` }]);
      expect(await suppressionsOf(complained.run.accountId)).to.deep.equal([{ address: complained.to, reason: 'complaint', source: `message:${complained.messageId}` }]);
      expect(await suppressionsOf(dropped.run.accountId)).to.deep.equal([{ address: dropped.to, reason: 'hard_bounce', source: `message:${dropped.messageId}` }]);
      // Each as the contact's email.bounced activity (docs/activities.md "Engagement signals"),
      // once: SendGrid's retry of the same post records nothing more. Its timestamp, older than the
      // retention, gives way to the time received.
      expect((await postSendgrid(app(), [event('bounce', bounced, { reason: '500 unknown recipient', status: '5.0.0', type: 'bounce' })])).status).to.equal(200);
      const bouncedOf = async (contactId: string) =>
        (await select<{ id: string; properties: string; occurred_at: unknown }>(testDb(), "SELECT id, properties, occurred_at FROM activities WHERE contact_id = ? AND name = 'email.bounced'", [contactId])).map(
          (row) => ({ id: row.id, type: (JSON.parse(row.properties) as { type: string }).type, recent: Date.now() - toDate(row.occurred_at).getTime() < 3_600_000 }),
        );
      expect(await bouncedOf(bounced.run.contact.id)).to.deep.equal([{ id: `email.bounced:${bounced.messageId}`, type: 'hard', recent: true }]);
      expect(await bouncedOf(complained.run.contact.id)).to.deep.equal([{ id: `email.bounced:${complained.messageId}:complaint`, type: 'complaint', recent: true }]);
      expect(await bouncedOf(dropped.run.contact.id)).to.deep.equal([{ id: `email.bounced:${dropped.messageId}`, type: 'hard', recent: true }]);
      expect(await bouncedOf(delivered.run.contact.id)).to.deep.equal([]);
    });

    it('counts a blocked bounce and an unknown message, and changes nothing for them', async () => {
      const sent = await sentEmail(cleanups, settings);
      const response = await postSendgrid(app(), [
        event('bounce', sent, { type: 'blocked', status: '4.0.0', reason: 'try later' }),
        event('bounce', { messageIdHeader: '<someone-else@example.org>', to: 'x@example.org' }, { type: 'bounce', status: '5.0.0' }),
      ]);
      expect(response.body).to.deep.equal({ received: 2, matched: 1, unknown: 1, changed: 0 });
      expect(await messageRow(sent.messageId)).to.include({ status: 'sent' });
    });

    it('answers 401 for a missing or bad signature, another key, or an altered body; nothing changes', async () => {
      const sent = await sentEmail(cleanups, settings);
      const events = [event('bounce', sent, { status: '5.0.0', type: 'bounce' })];
      const server = app();
      const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
      for (const options of [{ signature: null }, { signature: 'bm9wZQ==' }, { key: other }]) {
        const response = await postSendgrid(server, events, options);
        expect(response.status).to.equal(401);
        expect(response.body).to.include({ code: 'invalid_signature' });
      }
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = sign('sha256', Buffer.from(timestamp + JSON.stringify(events)), sendgrid.privateKey).toString('base64');
      const altered = await postSendgrid(server, JSON.stringify(events).replace('5.0.0', '5.0.1'), { timestamp, signature });
      expect(altered.status).to.equal(401);
      expect(await messageRow(sent.messageId)).to.include({ status: 'sent' });
    });

    it('answers 400 for a signed body that is not an array of events, and 404 when not configured', async () => {
      const response = await postSendgrid(app(), { event: 'bounce' });
      expect(response.status).to.equal(400);
      expect(response.body.details).to.deep.equal([{ path: 'body', message: 'The body must be an array of SendGrid events (at most 10,000)' }]);
      expect((await postSendgrid(app(), '[oops')).body).to.include({ code: 'malformed_json' });
      expect((await postSendgrid(app({ sesTopicArns: [TOPIC] }), [])).status).to.equal(404);
    });
  });
});
