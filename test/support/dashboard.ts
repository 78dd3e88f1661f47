import type { Express } from 'express';
import request from 'supertest';
import { createApp, type AppDeps } from '../../src/app';
import type { ChannelSettings } from '../../src/services/channels/channel-settings';
import { completeSetup, createUser } from '../../src/services/dashboard/users';
import { silentLogger } from './app';
import { testDb } from './db';
import { buildAccount, buildApiKey } from './factories';

export const ORIGIN = 'http://dashboard.test';
export const PASSWORD = 'correct horse battery';

let counter = 0;

// A dashboard user who has used their setup link: ready to sign in with PASSWORD.
export async function buildUser(accountId?: string, options: { email?: string; password?: string } = {}) {
  const account = accountId ?? (await buildAccount()).id;
  const email = options.email ?? `person-${Date.now().toString(36)}${(counter += 1)}@example.com`;
  const { user, setupToken } = await createUser(testDb(), { accountId: account, email });
  await completeSetup(testDb(), { token: setupToken, password: options.password ?? PASSWORD });
  return { ...user, accountId: account, password: options.password ?? PASSWORD };
}

// An app of its own (its own sign-in counters), whose dashboard expects Origin ORIGIN.
export function dashboardApp(options: { trustProxy?: boolean; channels?: ChannelSettings; testSends?: AppDeps['testSends'] } = {}): Express {
  return createApp({
    db: testDb(),
    config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000, publicOrigin: ORIGIN, trustProxy: options.trustProxy },
    logger: silentLogger,
    channels: options.channels,
    testSends: options.testSends,
  });
}

// A tRPC mutation as the dashboard sends it: JSON body, same Origin, the session cookie if any.
export function mutate(app: Express, path: string, input: unknown, cookie?: string) {
  const test = request(app).post(`/trpc/${path}`).set('origin', ORIGIN).set('content-type', 'application/json');
  if (cookie) test.set('cookie', cookie);
  return test.send(JSON.stringify(input ?? {}));
}

export function query(app: Express, path: string, cookie?: string) {
  const test = request(app).get(`/trpc/${path}`);
  if (cookie) test.set('cookie', cookie);
  return test;
}

// Signs in and returns the session cookie as a browser would send it back.
export async function signInCookie(app: Express, email: string, password = PASSWORD): Promise<string> {
  const res = await mutate(app, 'dashboard.auth.signIn', { email, password });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  return setCookie[0].split(';')[0];
}

// An account as a browser test starts from: its dashboard user (ready to sign in) and an API
// key, to set up and check what the page shows through the REST API.
export async function buildDashboardTenant(name = 'Acme Ltd') {
  const account = await buildAccount({ name });
  const user = await buildUser(account.id);
  const { key } = await buildApiKey(account.id);
  return { account, user, key };
}
