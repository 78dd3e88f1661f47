// Run as a child process by test/services/webhooks/send-request-timeout.test.ts:
//   node --expose-gc --import tsx test/support/send-under-gc.ts <url> <timeoutMs> <requests> [stopAfterMs]
// Sends <requests> webhook requests at once, as the dispatcher and the engine do (with their
// stopping signal, aborted after stopAfterMs if given), while the process allocates and forces a full GC every
// few milliseconds, and prints the outcomes as one JSON line. It loads nothing but
// send-request.ts (no database, no native module), so it runs on every Node the service does.
// Says `sending` when the requests begin. It exits by itself: a request or timer still pending
// keeps it alive, which the test sees.
import { sendRequest } from '../../src/services/webhooks/send-request';

const [url, timeoutArg, requestsArg, stopAfterArg] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (!url || !gc) throw new Error('usage: node --expose-gc --import tsx send-under-gc.ts <url> <timeoutMs> <requests> [stopAfterMs]');

let retained: unknown[] = [];
const load = setInterval(() => {
  // Garbage of every age, then a full collection: what a busy process does to weakly held objects.
  retained = Array.from({ length: 50_000 }, (_, i) => ({ i, s: `x${i}` }));
  gc();
}, 5);

const stopping = new AbortController();
process.stdout.write('sending\n');
const started = performance.now();
if (stopAfterArg) setTimeout(() => stopping.abort(), Number(stopAfterArg));
void Promise.all(
  Array.from({ length: Number(requestsArg ?? 1) }, () =>
    sendRequest(url, { 'webhook-id': 'msg_gc' }, '{"gc":true}', { timeoutMs: Number(timeoutArg), allowInsecure: true, signal: stopping.signal }),
  ),
).then((outcomes) => {
  clearInterval(load);
  retained = [];
  process.stdout.write(`${JSON.stringify({ outcomes, elapsedMs: Math.round(performance.now() - started) })}\n`);
});
