import { availableParallelism } from 'node:os';
import type { SendMailOptions } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { SmtpPools, type SmtpRelays, type SmtpTimeouts, DEFAULT_SMTP_TIMEOUTS } from './smtp-pools';
import { SmtpThread } from './smtp-thread';
import { classifySmtpFailure, smtpFailureOf, type SendFailureVerdict } from './send-failures';

// Where the service's emails leave it: one pooled nodemailer transport per SMTP URL (the
// account's relay, or SMTP_URL), every wait bounded by stage (smtp-pools.ts, smtp-attempt.ts).
// With more than one core the pools, the composition of each message (MIME, DKIM) and the SMTP
// conversations run on a worker thread of their own (smtp-thread.ts): the same pools and
// bounds, and the service's thread never holds a relay's reply. On one core, here.

export { DEFAULT_SMTP_DATA_TIMEOUT_MS, DEFAULT_SMTP_TIMEOUTS, SMTP_POOL, smtpAttemptBoundMs, type SmtpRelays, type SmtpTimeouts } from './smtp-pools';

export interface SmtpTransportsOptions {
  // On a thread of their own (default: when the machine has more than one core).
  thread?: boolean;
}

export class SmtpTransports {
  private readonly pools: SmtpPools | undefined;
  private readonly thread: SmtpThread | undefined;

  constructor(timeouts: SmtpTimeouts = DEFAULT_SMTP_TIMEOUTS, relays?: SmtpRelays, options: SmtpTransportsOptions = {}) {
    if (options.thread ?? availableParallelism() > 1) this.thread = new SmtpThread(timeouts, relays);
    else this.pools = new SmtpPools(timeouts, relays);
  }

  get threaded(): boolean {
    return this.thread !== undefined;
  }

  // Sends one message within its stages' bounds; `stop` (the service stopping) cuts it short. A
  // failure carries whether its outcome is unknown (isUnknownOutcome: after the final dot).
  send(smtpUrl: string, mail: SendMailOptions, stop?: AbortSignal): Promise<SMTPPool.SentMessageInfo> {
    return this.thread ? this.thread.send(smtpUrl, mail, stop) : this.pools!.send(smtpUrl, mail, stop);
  }

  // Whether the relay takes a connection (and the login): a paused channel's probe.
  verify(smtpUrl: string): Promise<boolean> {
    return this.thread ? this.thread.verify(smtpUrl) : this.pools!.verify(smtpUrl);
  }

  close(): void {
    this.thread?.close();
    this.pools?.close();
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
