import { performance } from 'node:perf_hooks';
import type request from 'supertest';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// A request and how long its answer took, in ms.
export async function timed(test: request.Test): Promise<{ res: request.Response; ms: number }> {
  const started = performance.now();
  const res = await test;
  return { res, ms: performance.now() - started };
}
