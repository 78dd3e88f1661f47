import autocannon from 'autocannon';
import { cpuMs } from './servers';

// One measured run: autocannon (in the driver's process) against one server, with the
// server's CPU time read from /proc around it.

export interface NextRequest {
  path: string;
  body?: string;
}

export interface LoadPlan {
  base: string;
  apiKey: string;
  method: 'GET' | 'POST';
  connections: number;
  // Either a number of requests (every one completes, so CPU per request is exact) or seconds.
  amount?: number;
  seconds?: number;
  next: () => NextRequest;
  expectStatus: number;
  // Reads each body (costs the driver time: only for slow endpoints). False counts as wrong.
  checkBody?: (body: string) => boolean;
}

export interface LoadResult {
  ok: number; // responses with the expected status (and body, when checked)
  wrong: number; // other statuses, wrong bodies, socket errors, timeouts
  seconds: number;
  perSecond: number;
  cpuMsPerRequest: number;
  p50: number; // ms
  p99: number;
}

export async function runLoad(plan: LoadPlan, pid: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let ok = 0;
  let wrongStatus = 0;
  let wrongBody = 0;
  const request: autocannon.Request = {
    method: plan.method,
    setupRequest: (req) => ({ ...req, ...plan.next() }),
  };
  if (plan.checkBody) {
    const check = plan.checkBody;
    request.onResponse = (status, body) => {
      if (status === plan.expectStatus && !check(body)) wrongBody += 1;
    };
  }
  const cpuBefore = cpuMs(pid);
  const started = performance.now();
  let lastResponseAt = started;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: plan.base,
        connections: plan.connections,
        ...(plan.amount ? { amount: plan.amount } : { duration: plan.seconds ?? 1 }),
        headers: { 'x-api-key': plan.apiKey, 'content-type': 'application/json' },
        requests: [request],
        timeout: 60,
        // autocannon notices the end of a run at its next sample: keep that wait short.
        sampleInt: 50,
      },
      (error, finished) => (error ? reject(error) : resolve(finished)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      lastResponseAt = performance.now();
      if (statusCode === plan.expectStatus) {
        ok += 1;
        latencies.push(responseTime);
      } else {
        wrongStatus += 1;
      }
    });
  });
  const cpu = cpuMs(pid) - cpuBefore;
  // Up to the last answer: the run's own time, without autocannon's wait for its next sample.
  const seconds = (lastResponseAt - started) / 1000;
  const wrong = wrongStatus + wrongBody + result.errors + result.timeouts;
  const good = ok - wrongBody;
  latencies.sort((a, b) => a - b);
  return {
    ok: good,
    wrong,
    seconds,
    perSecond: good / seconds,
    // Every response cost the server its work, right or wrong.
    cpuMsPerRequest: cpu / Math.max(1, ok + wrongStatus),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}
