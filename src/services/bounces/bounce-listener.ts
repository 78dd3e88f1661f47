import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Database } from '../../db/database';
import type { Logger } from '../../logging/logger';
import type { ActivitySettings } from '../activities/activity-settings';
import type { MessageMetrics } from '../messages/message-metrics';
import { readRecipient, type Recipient } from './bounce-addresses';
import type { FeedbackMetrics } from './feedback-metrics';
import { parseReport } from './parse-report';
import { recordFeedback, type Feedback, type FeedbackSource } from './record-feedback';
import { feedbackOf, isComplaint, messageOfReport } from './report-feedback';

// The inbound SMTP listener (docs/channels.md "The bounce domain and the listener"), started by
// `npm start` and `npm run worker` when BOUNCE_SMTP_PORT is set (BOUNCE_SMTP_HOST, default
// 127.0.0.1: an MX on port 25 in front of it, or a firewall that opens it, is the operator's).
// - RCPT: `bounce+<token>@<bounce domain>` with a token we signed, any other address at the
//   bounce domain (feedback loops, postmaster), and the unsubscribe mailbox with a token we
//   signed. A token that does not verify: 550 5.1.1, before any data, and counted (forged). Any
//   other domain: 550 5.7.1; the listener relays nothing.
// - DATA: at most MAX_MESSAGE_BYTES (SIZE is advertised; more is 552 and nothing is read).
//   Parsed (parse-report.ts) and recorded (record-feedback.ts); what names no message of ours,
//   or says nothing we use (an auto-reply, garbage), is accepted, dropped and counted, so that
//   a sender does not try again. A database that fails is a 451: the sender tries again later.
// - No AUTH, no STARTTLS: it takes reports for its own domains only and sends nothing.

export const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;
const MAX_RECIPIENTS = 20;
const MAX_CLIENTS = 50;

export interface BounceListenerOptions {
  db: Database;
  host: string;
  port: number;
  // SecretsKey.bounce: the tokens' HMAC key.
  key: Buffer;
  bounceDomain?: string;
  unsubscribeMailbox?: string;
  now?: () => Date;
  logger?: Logger;
  metrics?: FeedbackMetrics;
  messageMetrics?: MessageMetrics;
  // The intake's settings: bounces and complaints are recorded as activities (record-feedback.ts).
  activities?: ActivitySettings;
  maxBytes?: number;
  // Idle connections are closed after this long (smtp-server's socketTimeout).
  socketTimeoutMs?: number;
}

export interface BounceListener {
  port: number;
  address: string;
  close(): Promise<void>;
}

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

export async function startBounceListener(options: BounceListenerOptions): Promise<BounceListener> {
  const { db, logger, metrics } = options;
  const now = options.now ?? (() => new Date());
  const maxBytes = options.maxBytes ?? MAX_MESSAGE_BYTES;
  const settings = { key: options.key, bounceDomain: options.bounceDomain, unsubscribeMailbox: options.unsubscribeMailbox };
  const count = (source: string, kind: string, outcome: string) => metrics?.feedback.inc({ source, kind, outcome });

  const server = new SMTPServer({
    name: options.bounceDomain ?? options.unsubscribeMailbox?.split('@')[1],
    banner: 'reports only',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideSTARTTLS: true,
    size: maxBytes,
    maxClients: MAX_CLIENTS,
    socketTimeout: options.socketTimeoutMs ?? 60_000,
    closeTimeout: 3_000,
    logger: false,
    onRcptTo(address, session, callback) {
      const recipient = readRecipient(settings, address.address);
      if (recipient.kind === 'foreign') return callback(smtpError(550, '5.7.1 Relaying denied: this server takes reports for its own domains only'));
      if (recipient.kind === 'forged') {
        count('smtp', 'forged', 'refused');
        return callback(smtpError(550, '5.1.1 No such recipient'));
      }
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(smtpError(452, '4.5.3 Too many recipients'));
      callback();
    },
    onData(stream, session, callback) {
      void readData(stream).then(
        async (raw) => {
          if (!raw) return callback(smtpError(552, `5.3.4 Message too big: at most ${maxBytes} bytes`));
          try {
            await handle(raw, session);
            callback(null, 'Report received');
          } catch (error) {
            logger?.warn({ err: error }, 'bounce listener: recording a report failed');
            callback(smtpError(451, '4.3.0 Try again later'));
          }
        },
        () => callback(smtpError(451, '4.3.0 Try again later')),
      );
    },
  });
  // A client that misbehaves at the socket level (a reset, a TLS probe) is its problem only.
  server.on('error', (error) => logger?.debug({ err: error }, 'bounce listener: connection error'));

  function readData(stream: SMTPServerDataStream): Promise<Buffer | null> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= maxBytes) chunks.push(chunk);
      });
      stream.on('end', () => resolve(stream.sizeExceeded || size > maxBytes ? null : Buffer.concat(chunks)));
      stream.on('error', reject);
    });
  }

  async function handle(raw: Buffer, session: SMTPServerSession): Promise<void> {
    const recipients = session.envelope.rcptTo.map((rcpt) => readRecipient(settings, rcpt.address));
    const at = now();
    const bySource = new Map<FeedbackSource, Feedback[]>();
    const add = (source: FeedbackSource, item: Feedback) => bySource.set(source, [...(bySource.get(source) ?? []), item]);
    const unsubscribes = recipients.filter((r): r is Extract<Recipient, { kind: 'unsubscribe' }> => r.kind === 'unsubscribe');
    // A mail to the unsubscribe mailbox unsubscribes, whatever it says (RFC 2369).
    for (const recipient of unsubscribes) add('mailbox', { kind: 'unsubscribe', messageId: recipient.messageId, at });
    const reports = recipients.filter((r) => r.kind === 'bounce' || r.kind === 'report');
    if (reports.length > 0) {
      const report = await parseReport(raw);
      const source: FeedbackSource = report.type === 'arf' ? 'arf' : 'dsn';
      let used = false;
      for (const recipient of reports) {
        const messageId = recipient.kind === 'bounce' ? recipient.messageId : isComplaint(report) ? await messageOfReport(db, settings, report) : null;
        const item = messageId ? feedbackOf(messageId, report, at) : null;
        if (!item) continue;
        used = true;
        add(source, item);
      }
      if (!used) count(source, report.type === 'other' ? 'unreadable' : report.type, 'dropped');
    }
    for (const [source, items] of bySource) {
      await recordFeedback(db, items, { now: at, source, metrics, messageMetrics: options.messageMetrics, activities: options.activities });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    address: `${options.host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
