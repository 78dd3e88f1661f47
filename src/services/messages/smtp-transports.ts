import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { classifySmtpFailure, smtpFailureOf, type SendFailureVerdict } from './send-failures';

// One pooled nodemailer transport per SMTP URL (the account's relay, or SMTP_URL), made on first
// use and kept: connections are reused across messages and accounts that share a relay. Every
// wait is bounded (docs/channels.md "Sending email"): the TCP connect, the server's greeting,
// and any silence on the socket after it, so a server that accepts and never answers costs a
// send those seconds, then a retry, never a stuck send. `smtp://` upgrades with STARTTLS when
// the server offers it; `smtps://` is TLS from the start (nodemailer reads both from the URL).

export interface SmtpTimeouts {
  connectionMs: number;
  greetingMs: number;
  socketMs: number;
}

export const DEFAULT_SMTP_TIMEOUTS: SmtpTimeouts = { connectionMs: 10_000, greetingMs: 10_000, socketMs: 30_000 };

// A relay's pool: a few connections, each reused for this many messages.
export const SMTP_POOL = { maxConnections: 5, maxMessages: 100 };
const MAX_TRANSPORTS = 200;

export class SmtpTransports {
  private readonly transports = new Map<string, Transporter<SMTPPool.SentMessageInfo>>();

  constructor(private readonly timeouts: SmtpTimeouts = DEFAULT_SMTP_TIMEOUTS) {}

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
      socketTimeout: this.timeouts.socketMs,
    } as SMTPPool.Options);
    this.transports.set(smtpUrl, transport);
    return transport;
  }

  send(smtpUrl: string, mail: SendMailOptions): Promise<SMTPPool.SentMessageInfo> {
    return this.get(smtpUrl).sendMail(mail);
  }

  close(): void {
    for (const transport of this.transports.values()) transport.close();
    this.transports.clear();
  }
}

// What a failed send comes to (send-failures.ts): a hard bounce, a rejection, soft (tried again
// later with the same Message-ID), or the sender's (the channel pauses). Its reason is in our
// words, with the codes, never the server's text.
export type SmtpVerdict = SendFailureVerdict;

// The server's queue id from its 250 answer ("250 2.0.0 Ok: queued as 4F2A1B"), else the
// Message-ID it was sent with.
export function providerIdOf(info: { response?: string; messageId?: string }): string | null {
  const queued = /queued as ([A-Za-z0-9._-]+)/i.exec(info.response ?? '') ?? /\b250\b[^<]*<([^>]+)>/.exec(info.response ?? '');
  return queued?.[1] ?? info.messageId ?? null;
}

export function smtpErrorVerdict(error: unknown): SmtpVerdict {
  return classifySmtpFailure(smtpFailureOf(error));
}
