import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SendMailOptions } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type { SmtpRelays, SmtpTimeouts } from './smtp-pools';
import { errorFrom, type SmtpThreadData, type SmtpThreadReply, type SmtpThreadRequest } from './smtp-thread-protocol';

// The relays' pools on a worker thread of their own (smtp-thread-worker.ts), started on the first
// send and kept: nodemailer composes each message (MIME, the DKIM signature) and holds each SMTP
// conversation there, so a reply is read when it arrives, not when the service's thread is done
// with a batch's statements (bench:engine's email case: issue 35). The pools, their sizes and
// every stage's bound are the same as on the service's thread (smtp-pools.ts); a send's `stop`
// crosses as a message. Only what structured clone carries crosses: buildEmail()'s messages do.
//
// A thread that dies (it should not) fails the sends it held with an unknown outcome (the relay
// may have them: sent again once with the same Message-ID, then `unconfirmed`, as after a lost
// reply), and the next send starts another.

interface Pending {
  resolve: (reply: SmtpThreadReply & { ok: true }) => void;
  reject: (error: Error) => void;
  // A send, whose outcome is unknown if the thread dies under it (a verify is only refused).
  send: boolean;
}

interface Running {
  worker: Worker;
  pending: Map<number, Pending>;
}

export class SmtpThread {
  private running: Running | undefined;
  private nextId = 1;
  private readonly data: SmtpThreadData;

  constructor(timeouts: SmtpTimeouts, relays?: SmtpRelays) {
    // Only the two fields the pools read: the channel settings hold keys that stay here.
    this.data = { timeouts, ...(relays && { relays: { smtpUrl: relays.smtpUrl, allowPrivateRelays: relays.allowPrivateRelays } }) };
  }

  async send(smtpUrl: string, mail: SendMailOptions, stop?: AbortSignal): Promise<SMTPPool.SentMessageInfo> {
    const id = this.nextId++;
    const onStop = () => this.post({ type: 'abort', id });
    const answered = this.ask({ type: 'send', id, smtpUrl, mail }, true);
    if (stop?.aborted) onStop();
    else stop?.addEventListener('abort', onStop, { once: true });
    try {
      return (await answered).info!;
    } finally {
      stop?.removeEventListener('abort', onStop);
    }
  }

  async verify(smtpUrl: string): Promise<boolean> {
    const id = this.nextId++;
    return (await this.ask({ type: 'verify', id, smtpUrl }, false)).verified === true;
  }

  // The pools close (their sends under way answer first, as on the service's thread); the
  // thread ends when the last has answered. The next send starts another.
  close(): void {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    running.worker.postMessage({ type: 'close' } satisfies SmtpThreadRequest);
  }

  private ask(request: SmtpThreadRequest & { id: number }, send: boolean): Promise<SmtpThreadReply & { ok: true }> {
    const running = this.running ?? this.start();
    return new Promise((resolve, reject) => {
      // The thread holds the process only while it has something to answer.
      if (running.pending.size === 0) running.worker.ref();
      running.pending.set(request.id, { resolve, reject, send });
      try {
        running.worker.postMessage(request);
      } catch (error) {
        // A message that cannot be cloned (a stream for an attachment): nothing was sent.
        this.settle(running, request.id);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  private post(request: SmtpThreadRequest): void {
    this.running?.worker.postMessage(request);
  }

  private start(): Running {
    const running: Running = { worker: spawnWorker(this.data), pending: new Map() };
    running.worker.unref();
    running.worker.on('message', (reply: SmtpThreadReply) => {
      const pending = this.settle(running, reply.id);
      if (!pending) return;
      if (reply.ok) pending.resolve(reply);
      else pending.reject(errorFrom(reply.error));
    });
    const ended = (why: string) => {
      if (this.running === running) this.running = undefined;
      for (const [id, pending] of [...running.pending]) {
        this.settle(running, id);
        pending.reject(Object.assign(new Error(`the SMTP thread ended: ${why}`), { code: 'ETHREAD', ownWords: true, unknownOutcome: pending.send }));
      }
    };
    running.worker.on('error', (error) => ended(error.message));
    running.worker.on('exit', (code) => ended(`exit code ${code}`));
    this.running = running;
    return running;
  }

  private settle(running: Running, id: number): Pending | undefined {
    const pending = running.pending.get(id);
    if (!pending) return undefined;
    running.pending.delete(id);
    if (running.pending.size === 0) running.worker.unref();
    return pending;
  }
}

// dist/ runs the compiled worker; the TypeScript sources (tests, benches under tsx) register
// tsx's loader in the thread first (a worker does not take the parent's loader for a .ts file).
function spawnWorker(workerData: SmtpThreadData): Worker {
  if (!__filename.endsWith('.ts')) return new Worker(path.join(__dirname, 'smtp-thread-worker.js'), { workerData });
  const source = path.join(__dirname, 'smtp-thread-worker.ts');
  return new Worker(`require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(source)});`, { eval: true, workerData });
}
