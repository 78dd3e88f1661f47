import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logging/logger';
import { createCaller, createCallerContext } from '../../src/routers/caller';
import { testDb } from './db';

export const silentLogger = createLogger('silent');

let app: Express | undefined;

// Contact imports' files, out of the repository's data/ folder.
export const TEST_IMPORTS_DIR = path.join(os.tmpdir(), `svc-test-imports-${process.pid}`);

// The app as production builds it, on the test database; a high rate limit unless a suite
// that tests limits builds its own.
export function testApp(): Express {
  app ??= createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger, imports: { dir: TEST_IMPORTS_DIR } });
  return app;
}

// supertest with the key already set: api(key).post('/contacts').send({...})
export function api(key?: string) {
  const agent = request(testApp());
  const withKey = <T extends request.Test>(test: T): T => (key ? (test.set('x-api-key', key) as T) : test);
  return {
    get: (path: string) => withKey(agent.get(`/api/v1${path}`)),
    post: (path: string) => withKey(agent.post(`/api/v1${path}`)),
    put: (path: string) => withKey(agent.put(`/api/v1${path}`)),
    patch: (path: string) => withKey(agent.patch(`/api/v1${path}`)),
    delete: (path: string) => withKey(agent.delete(`/api/v1${path}`)),
  };
}

// The procedures in-process (tRPC's createCaller), authenticated by key as over HTTP.
export function caller(key?: string) {
  return createCaller(createCallerContext({ db: testDb(), apiKey: key }));
}
