import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTransport } from 'nodemailer';
import { select } from '../../../src/db/sql/statements';
import type { ChannelSettings } from '../../../src/services/channels/channel-settings';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { startSmtpServer } from '../../support/smtp-server';
import { engineAt, enrolledRun } from '../engine/support';

// An email step sent for real (the engine, a real SMTP server) with a bounce domain: what the
// server read as its envelope sender and Message-ID, for the tests that send reports back.

export const BOUNCE_DOMAIN = 'bounces.example.net';
export const UNSUBSCRIBE_MAILBOX = 'unsubscribe@bounces.example.net';

export async function sentEmail(cleanups: Array<() => Promise<void>>, settings: ChannelSettings = bounceSettings()) {
  const server = await startSmtpServer();
  const withRelay = { ...settings, smtpUrl: server.url };
  const { engine, advance } = engineAt(Date.now() + 1, { messages: { settings: withRelay, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
  cleanups.push(() => server.close(), () => engine.stop(50));
  const run = await enrolledRun([{ id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p>' }]);
  advance(1_000);
  await engine.runUntilIdle();
  const mail = server.received.at(-1)!;
  const [message] = await select<{ id: string }>(testDb(), 'SELECT id FROM messages WHERE run_id = ?', [run.runId]);
  const mailto = /<mailto:([^?>]+)/.exec(mail.raw.replace(/\r?\n[ \t]+/g, ' '))?.[1] ?? null;
  return { run, messageId: message!.id, envelopeFrom: mail.envelope.from, messageIdHeader: mail.parsed.messageId!, to: mail.envelope.to[0]!, mailto };
}

export function bounceSettings(overrides: Partial<ChannelSettings> = {}): ChannelSettings {
  return channelSettings({ emailFrom: 'Shop <shop@example.com>', bounceDomain: BOUNCE_DOMAIN, unsubscribeMailbox: UNSUBSCRIBE_MAILBOX, ...overrides });
}

// Sends a raw report to the listener with nodemailer, from the null sender as MTAs send DSNs.
export async function sendReport(port: number, to: string, raw: string | Buffer) {
  const transport = createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, connectionTimeout: 2_000, greetingTimeout: 2_000, socketTimeout: 5_000 });
  try {
    return await transport.sendMail({ envelope: { from: '', to: [to] }, raw });
  } finally {
    transport.close();
  }
}

export function dsn(options: { to: string; action?: string; status?: string; diagnostic?: string; originalMessageId?: string }) {
  const { action = 'failed', status = '5.1.1', diagnostic = 'smtp; 550 5.1.1 <x>: No such user' } = options;
  return [
    'From: Mail Delivery System <MAILER-DAEMON@mx.receiver.example>',
    `To: ${options.to}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Message-ID: <dsn-1@mx.receiver.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="BOUNDARY"',
    '',
    '--BOUNDARY',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'Your message could not be delivered. Status: 2.0.0 (this line is not the report).',
    '',
    '--BOUNDARY',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.receiver.example',
    'Arrival-Date: Tue, 1 Dec 2026 10:00:00 +0000',
    '',
    'Final-Recipient: rfc822; ada@receiver.example',
    'Original-Recipient: rfc822;ada@receiver.example',
    `Action: ${action}`,
    `Status: ${status}`,
    'Remote-MTA: dns; mx.receiver.example',
    `Diagnostic-Code: ${diagnostic}`,
    '',
    '--BOUNDARY',
    'Content-Type: text/rfc822-headers',
    '',
    ...(options.originalMessageId ? [`Message-ID: ${options.originalMessageId}`] : []),
    'From: Shop <shop@example.com>',
    'Subject: Hi',
    '',
    '--BOUNDARY--',
    '',
  ].join('\r\n');
}

export function arf(options: { to: string; feedbackType?: string; originalMailFrom?: string; originalMessageId?: string; inline?: boolean }) {
  return [
    'From: Feedback Loop <fbl@isp.example>',
    `To: ${options.to}`,
    'Subject: Abuse report',
    'Message-ID: <arf-1@isp.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"',
    '',
    '--ARF',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is an email abuse report for an email message received from IP 192.0.2.1.',
    '',
    '--ARF',
    'Content-Type: message/feedback-report',
    '',
    `Feedback-Type: ${options.feedbackType ?? 'abuse'}`,
    'User-Agent: SomeGenerator/1.0',
    'Version: 1',
    ...(options.originalMailFrom ? [`Original-Mail-From: <${options.originalMailFrom}>`] : []),
    'Arrival-Date: Tue, 1 Dec 2026 10:00:00 +0000',
    'Source-IP: 192.0.2.1',
    '',
    '--ARF',
    'Content-Type: message/rfc822',
    ...(options.inline ? ['Content-Disposition: inline'] : []),
    '',
    ...(options.originalMessageId ? [`Message-ID: ${options.originalMessageId}`] : []),
    'From: Shop <shop@example.com>',
    'To: ada@receiver.example',
    'Subject: Hi',
    '',
    'Hi',
    '',
    '--ARF--',
    '',
  ].join('\r\n');
}
