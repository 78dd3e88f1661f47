import type { Readable } from 'node:stream';

// The bounds of one SMTP send, by stage (docs/channels.md "Sending email"). nodemailer has one
// bound for every silence after the greeting (socketTimeout), while RFC 5321 §4.5.3.2.6 gives the
// reply to the final dot 10 minutes and every other reply far less. So nodemailer's own silence
// bound is set to the longest wait (smtp-transports.ts), and each send carries an AbortSignal,
// cut here by stage (nodemailer's pool closes the connection of a message whose signal aborts):
//   - until a pooled connection is ready for it (the pool's queue, the connection, the greeting,
//     EHLO, STARTTLS, AUTH): connectionMs + greetingMs + socketMs;
//   - then until the final dot is written (MAIL FROM, RCPT TO, DATA, the body): socketMs;
//   - then the reply to the final dot: dataMs.
// The stages are seen through the message's stream: nodemailer asks for it once the connection
// is ready, and it ends as the final dot is written. A stop (the caller's signal) cuts any stage.
//
// What a failure after the final dot means is not known: the server may have the message (it
// took the data and its reply was lost, or late). That is an unknown outcome, said on the error
// (isUnknownOutcome); a reply with a code after the dot (4xx, 5xx) is a known one.

export interface SmtpStageTimeouts {
  connectionMs: number;
  greetingMs: number;
  socketMs: number;
  dataMs: number;
}

type Stage = 'connecting' | 'envelope' | 'reply';

export class SmtpAttempt {
  private readonly controller = new AbortController();
  private stage: Stage = 'connecting';
  private cutBy: { kind: 'timeout' | 'stop'; stage: Stage; ms: number } | null = null;
  private timer: NodeJS.Timeout | undefined;
  private readonly onStop = () => this.cut('stop', 0);

  constructor(
    private readonly timeouts: SmtpStageTimeouts,
    private readonly stop?: AbortSignal,
  ) {
    this.arm(timeouts.connectionMs + timeouts.greetingMs + timeouts.socketMs);
    if (stop?.aborted) this.onStop();
    else stop?.addEventListener('abort', this.onStop, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  // The message about to be composed (a nodemailer 'stream' plugin hands it here): its stream
  // is asked for when a connection is ready, and ends with the final dot.
  watch(message: { createReadStream: (...args: never[]) => Readable }): void {
    const createReadStream = message.createReadStream.bind(message);
    message.createReadStream = (...args: never[]) => {
      this.enter('envelope', this.timeouts.socketMs);
      const stream = createReadStream(...args);
      stream.once('end', () => this.enter('reply', this.timeouts.dataMs));
      return stream;
    };
  }

  // The error a failed send answers: nodemailer's, or ours when a bound or a stop cut it, with
  // whether its outcome is unknown.
  explain(error: unknown): Error {
    const cut = this.cutBy;
    const failure: Error & { code?: string; command?: string; responseCode?: number; unknownOutcome?: boolean } =
      cut && cut.kind === 'timeout'
        ? Object.assign(new Error(cut.stage === 'reply' ? `no answer to the final dot within ${cut.ms} ms` : `no answer within ${cut.ms} ms`), {
            code: 'ETIMEDOUT',
            command: cut.stage === 'reply' ? 'DATA' : 'CONN',
            ownWords: true,
          })
        : cut
          ? Object.assign(new Error('aborted: the service is stopping'), { code: 'EABORT', ownWords: true })
          : error instanceof Error
            ? error
            : new Error(String(error));
    failure.unknownOutcome = this.stage === 'reply' && typeof (error as { responseCode?: unknown })?.responseCode !== 'number';
    return failure;
  }

  // The send ended (answered or failed): its timer and listener go.
  done(): void {
    clearTimeout(this.timer);
    this.stop?.removeEventListener('abort', this.onStop);
  }

  private enter(stage: Stage, ms: number): void {
    if (this.cutBy || this.stage === 'reply') return;
    this.stage = stage;
    this.arm(ms);
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    const stage = this.stage;
    this.timer = setTimeout(() => this.cut('timeout', ms, stage), ms);
  }

  private cut(kind: 'timeout' | 'stop', ms: number, stage: Stage = this.stage): void {
    if (this.cutBy) return;
    this.cutBy = { kind, stage, ms };
    clearTimeout(this.timer);
    this.controller.abort(new Error(kind === 'stop' ? 'aborted: the service is stopping' : `no answer within ${ms} ms`));
  }
}

// A failure after the final dot with no reply (a timeout, a lost connection, a stop): the
// server may have the message.
export function isUnknownOutcome(error: unknown): boolean {
  return (error as { unknownOutcome?: unknown } | null)?.unknownOutcome === true;
}

// A stop cuts the wait short even where the work itself takes no signal.
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
