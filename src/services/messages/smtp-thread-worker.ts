import { parentPort, workerData } from 'node:worker_threads';
import { SmtpPools } from './smtp-pools';
import { errorFields, type SmtpThreadData, type SmtpThreadReply, type SmtpThreadRequest } from './smtp-thread-protocol';

// The SMTP thread (smtp-thread.ts): the relays' pools, the composition of each message (MIME,
// DKIM) and the SMTP conversations, each send within its stages' bounds (smtp-attempt.ts), on
// a thread of their own, so the service's thread (claims, statements) never holds a reply.

const port = parentPort!;
const { timeouts, relays } = workerData as SmtpThreadData;
const pools = new SmtpPools(timeouts, relays);
const stops = new Map<number, AbortController>();
let closing = false;

function reply(message: SmtpThreadReply): void {
  port.postMessage(message);
}

// Closed, and the last send answered: nothing holds the thread, it ends.
function endIfClosed(): void {
  if (closing && stops.size === 0) port.close();
}

port.on('message', (request: SmtpThreadRequest) => {
  switch (request.type) {
    case 'send': {
      const stop = new AbortController();
      stops.set(request.id, stop);
      pools
        .send(request.smtpUrl, request.mail, stop.signal)
        .then(
          (info) => reply({ id: request.id, ok: true, info }),
          (error: unknown) => reply({ id: request.id, ok: false, error: errorFields(error) }),
        )
        .finally(() => {
          stops.delete(request.id);
          endIfClosed();
        });
      return;
    }
    case 'verify':
      pools.verify(request.smtpUrl).then(
        (verified) => reply({ id: request.id, ok: true, verified }),
        (error: unknown) => reply({ id: request.id, ok: false, error: errorFields(error) }),
      );
      return;
    case 'abort':
      stops.get(request.id)?.abort();
      return;
    case 'close':
      closing = true;
      pools.close();
      endIfClosed();
      return;
  }
});
