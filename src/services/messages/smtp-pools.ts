import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { SmtpAttempt, untilAborted, type SmtpStageTimeouts } from './smtp-attempt';
import type { ChannelSettings } from '../channels/channel-settings';
import { guardedSmtpSocket } from '../channels/relay-policy';

// One pooled nodemailer transport per SMTP URL (the account's relay, or SMTP_URL), made on first
// use and kept: connections are reused across messages and accounts that share a relay. Every
// wait is bounded (docs/channels.md "Sending email"): the TCP connect, the server's greeting,
// any silence on the socket after it, and the reply to the final dot (dataMs: RFC 5321 gives it
// 10 minutes, and a send cut sooner may be delivered and sent again), each send by stage
// (smtp-attempt.ts), so a server that accepts and never answers costs a send those seconds,
// never a stuck send. `smtp://` upgrades with STARTTLS when the server offers it; `smtps://` is
// TLS from the start (nodemailer reads both from the URL).
//
// These pools work on the thread that holds them: smtp-transports.ts holds them in a worker
// thread of their own (smtp-thread-worker.ts) when the machine has more than one core, else here.

export interface SmtpTimeouts {
  connectionMs: number;
  greetingMs: number;
  socketMs: number;
  // The wait for the reply to the final dot (SMTP_DATA_TIMEOUT_MS); without it, socketMs (a
  // test send from the dashboard: a person waits for its answer).
  dataMs?: number;
}

export const DEFAULT_SMTP_TIMEOUTS: SmtpTimeouts = { connectionMs: 10_000, greetingMs: 10_000, socketMs: 30_000 };
export const DEFAULT_SMTP_DATA_TIMEOUT_MS = 600_000;

// The longest one send can take, every stage at its bound: a send's lease outlasts it.
export function smtpAttemptBoundMs(timeouts: SmtpTimeouts): number {
  return timeouts.connectionMs + timeouts.greetingMs + 2 * timeouts.socketMs + (timeouts.dataMs ?? timeouts.socketMs);
}

// Who may be connected to: accounts' relays (every URL but the operator's SMTP_URL) connect
// through the address policy's guarded lookup (src/services/channels/relay-policy.ts).
export type SmtpRelays = Pick<ChannelSettings, 'smtpUrl' | 'allowPrivateRelays'>;

// A relay's pool: a few connections, each reused for this many messages.
export const SMTP_POOL = { maxConnections: 5, maxMessages: 100 };
const MAX_TRANSPORTS = 200;

export class SmtpPools {
  private readonly transports = new Map<string, Transporter<SMTPPool.SentMessageInfo>>();
  // Each send under way, by the signal its message carries (the 'stream' plugin finds it so).
  private readonly attempts = new WeakMap<AbortSignal, SmtpAttempt>();
  private readonly timeouts: SmtpStageTimeouts;

  constructor(
    timeouts: SmtpTimeouts = DEFAULT_SMTP_TIMEOUTS,
    private readonly relays?: SmtpRelays,
  ) {
    this.timeouts = { ...timeouts, dataMs: timeouts.dataMs ?? timeouts.socketMs };
  }

  get(smtpUrl: string): Transporter<SMTPPool.SentMessageInfo> {
    const known = this.transports.get(smtpUrl);
    if (known) return known;
    // A bound on relays kept open: the oldest closes (its sends under way finish first).
    if (this.transports.size >= MAX_TRANSPORTS) {
      const [oldestUrl, oldest] = this.transports.entries().next().value!;
      this.transports.delete(oldestUrl);
      oldest.close();
    }
    const url = new URL(smtpUrl);
    const transport = nodemailer.createTransport({
      pool: true,
      ...SMTP_POOL,
      host: url.hostname,
      port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
      secure: url.protocol === 'smtps:',
      auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
      // STARTTLS when offered; a test or a local relay may use a self-signed certificate only
      // when its URL says so (?tls.rejectUnauthorized=false is nodemailer's own spelling).
      tls: url.searchParams.get('tls.rejectUnauthorized') === 'false' ? { rejectUnauthorized: false } : undefined,
      connectionTimeout: this.timeouts.connectionMs,
      greetingTimeout: this.timeouts.greetingMs,
      // The longest silence of any stage: each send's own stages are cut sooner (smtp-attempt.ts).
      socketTimeout: Math.max(this.timeouts.socketMs, this.timeouts.dataMs),
      ...(this.relays && smtpUrl !== this.relays.smtpUrl ? { getSocket: guardedSmtpSocket(this.relays.allowPrivateRelays ?? false) } : {}),
    } as SMTPPool.Options);
    // nodemailer's plugin step for the composed message: its send watches the message's stream.
    transport.use('stream', (mail, done) => {
      const signal = (mail.data as { signal?: AbortSignal }).signal;
      if (signal) this.attempts.get(signal)?.watch(mail.message as unknown as Parameters<SmtpAttempt['watch']>[0]);
      done();
    });
    this.transports.set(smtpUrl, transport);
    return transport;
  }

  // Sends one message within its stages' bounds; `stop` (the service stopping) cuts it short. A
  // failure carries whether its outcome is unknown (isUnknownOutcome: after the final dot).
  async send(smtpUrl: string, mail: SendMailOptions, stop?: AbortSignal): Promise<SMTPPool.SentMessageInfo> {
    const attempt = new SmtpAttempt(this.timeouts, stop);
    this.attempts.set(attempt.signal, attempt);
    try {
      return await untilAborted(this.get(smtpUrl).sendMail({ ...mail, signal: attempt.signal } as SendMailOptions), attempt.signal);
    } catch (error) {
      throw attempt.explain(error);
    } finally {
      attempt.done();
    }
  }

  // Whether the relay takes a connection and, where it asks, the login (a paused channel's probe).
  verify(smtpUrl: string): Promise<boolean> {
    return this.get(smtpUrl).verify();
  }

  close(): void {
    for (const transport of this.transports.values()) transport.close();
    this.transports.clear();
  }
}
