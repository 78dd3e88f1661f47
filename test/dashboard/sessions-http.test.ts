import { expect } from 'chai';
import request from 'supertest';
import { toDate } from '../../src/db/sql/rows';
import { select } from '../../src/db/sql/statements';
import { setMaxActiveRuns } from '../../src/services/accounts';
import { createUser, disableUser } from '../../src/services/dashboard/users';
import { SIGN_IN_FAILED } from '../../src/routers/dashboard/auth';
import { SIGN_IN_LIMITED } from '../../src/http/sign-in-limit';
import { createCaller, createCallerContext } from '../../src/routers/caller';
import { createApp } from '../../src/app';
import { KEY_NOT_ACCEPTED } from '../../src/http/dashboard-api';
import { api, testApp } from '../support/app';
import { bufferLogger } from '../support/log-buffer';
import { testDb } from '../support/db';
import { buildApiKey, buildTenant } from '../support/factories';
import { buildUser, dashboardApp, mutate, ORIGIN, PASSWORD, query, signInCookie } from '../support/dashboard';

// The dashboard's procedures over HTTP: sessions by cookie, kept apart from API keys in both
// directions, CSRF refusals, sign-in failures and their limit, expiry and sign-out.

describe('dashboard sessions over HTTP', () => {
  describe('sign-in', () => {
    it('sets an HttpOnly, SameSite=Lax session cookie holding a token whose hash only is stored', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const res = await mutate(app, 'dashboard.auth.signIn', { email: user.email.toUpperCase(), password: PASSWORD });
      expect(res.status).to.equal(200);
      expect(res.body.result.data).to.deep.equal({ email: user.email });
      const [cookie] = res.headers['set-cookie'] as unknown as string[];
      expect(cookie).to.match(/^svc_session=[A-Za-z0-9_-]{43}; Path=\/; Expires=/);
      expect(cookie).to.include('HttpOnly').and.include('SameSite=Lax').and.not.include('Secure');
      const token = cookie.split(';')[0].split('=')[1];
      const stored = await select<{ token_hash: string }>(testDb(), 'SELECT token_hash FROM user_sessions', []);
      expect(stored).to.have.length(1);
      expect(stored[0].token_hash).to.match(/^[0-9a-f]{64}$/).and.not.equal(token);
      const [row] = await select<{ last_login_at: unknown }>(testDb(), 'SELECT last_login_at FROM users WHERE id = ?', [user.id]);
      expect(row.last_login_at).to.not.equal(null);
    });

    it('marks the cookie Secure when served over https behind a trusted proxy', async () => {
      const app = dashboardApp({ trustProxy: true });
      const user = await buildUser();
      const res = await mutate(app, 'dashboard.auth.signIn', { email: user.email, password: PASSWORD }).set('x-forwarded-proto', 'https');
      expect(res.status).to.equal(200);
      expect((res.headers['set-cookie'] as unknown as string[])[0]).to.include('Secure');
    });

    it('answers an unknown email and a wrong password with the same 401 message, and no cookie', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const unknown = await mutate(app, 'dashboard.auth.signIn', { email: 'nobody@example.com', password: PASSWORD });
      const wrong = await mutate(app, 'dashboard.auth.signIn', { email: user.email, password: 'not the password' });
      for (const res of [unknown, wrong]) {
        expect(res.status).to.equal(401);
        expect(res.body.error.message).to.equal(SIGN_IN_FAILED);
        expect(res.headers['set-cookie']).to.equal(undefined);
      }
    });

    it('refuses a disabled user and a user who has not set a password, with the same message', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      await disableUser(testDb(), { id: user.id });
      const { user: newcomer } = await createUser(testDb(), { accountId: user.accountId, email: 'new@example.com' });
      for (const email of [user.email, newcomer.email]) {
        const res = await mutate(app, 'dashboard.auth.signIn', { email, password: PASSWORD });
        expect(res.status).to.equal(401);
        expect(res.body.error.message).to.equal(SIGN_IN_FAILED);
      }
    });

    it('limits failures per IP to 10 in 15 minutes; successes do not count', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      for (let i = 0; i < 3; i += 1) await signInCookie(app, user.email);
      for (let i = 0; i < 10; i += 1) {
        const res = await mutate(app, 'dashboard.auth.signIn', { email: `nobody${i}@example.com`, password: 'wrong password' });
        expect(res.status, `attempt ${i + 1}`).to.equal(401);
      }
      const limited = await mutate(app, 'dashboard.auth.signIn', { email: user.email, password: PASSWORD });
      expect(limited.status).to.equal(429);
      expect(limited.body.error.message).to.equal(SIGN_IN_LIMITED);
      expect(limited.headers['retry-after']).to.match(/^\d+$/);
      expect(Number(limited.headers['retry-after'])).to.be.within(800, 900);
      expect(limited.headers['set-cookie']).to.equal(undefined);
    });

    it('limits failures per email to 10 in 15 minutes, from any number of addresses', async () => {
      const app = dashboardApp({ trustProxy: true });
      const user = await buildUser();
      for (let i = 0; i < 10; i += 1) {
        const res = await mutate(app, 'dashboard.auth.signIn', { email: user.email, password: `wrong password ${i}` }).set('x-forwarded-for', `203.0.113.${i}`);
        expect(res.status).to.equal(401);
      }
      const limited = await mutate(app, 'dashboard.auth.signIn', { email: ` ${user.email.toUpperCase()}`, password: PASSWORD }).set('x-forwarded-for', '198.51.100.7');
      expect(limited.status).to.equal(429);
      // Another person, from one of those addresses, is not affected.
      const other = await buildUser();
      const fine = await mutate(app, 'dashboard.auth.signIn', { email: other.email, password: PASSWORD }).set('x-forwarded-for', '203.0.113.1');
      expect(fine.status).to.equal(200);
    });
  });

  describe('a session and an API key never stand in for each other', () => {
    it('a session cookie does not authorise /api/v1 or the key procedures on /trpc', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const cookie = await signInCookie(app, user.email);
      const rest = await request(app).get('/api/v1/contacts/by-email/a%40example.com').set('cookie', cookie);
      expect(rest.status).to.equal(401);
      expect(rest.body).to.include({ error: 'Missing x-api-key header', code: 'missing_api_key' });
      const upsert = await request(app).post('/api/v1/contacts/upsert').set('cookie', cookie).set('origin', ORIGIN).send({ email: 'a@example.com' });
      expect(upsert.status).to.equal(401);
      const trpc = await mutate(app, 'contacts.upsert', { email: 'a@example.com' }, cookie);
      expect(trpc.status).to.equal(401);
      const [{ n }] = await select<{ n: unknown }>(testDb(), 'SELECT COUNT(*) AS n FROM contacts', []);
      expect(Number(n)).to.equal(0);
    });

    it('an API key does not reach a dashboard procedure, over HTTP or in-process', async () => {
      const app = dashboardApp();
      const { key } = await buildTenant();
      const list = await query(app, 'dashboard.keys.list').set('x-api-key', key);
      expect(list.status).to.equal(401);
      expect(list.body.error.message).to.equal(KEY_NOT_ACCEPTED);
      const me = await query(app, 'dashboard.auth.me').set('x-api-key', key);
      expect(me.status).to.equal(401);
      const create = await mutate(app, 'dashboard.keys.create', { name: 'sneaky' }).set('x-api-key', key);
      expect(create.status).to.equal(401);
      const caller = createCaller(createCallerContext({ db: testDb(), apiKey: key }));
      let refused: unknown;
      await caller.dashboard.keys.list().catch((error: unknown) => (refused = error));
      expect((refused as { code?: string }).code).to.equal('UNAUTHORIZED');
      const [{ n }] = await select<{ n: unknown }>(testDb(), "SELECT COUNT(*) AS n FROM api_keys WHERE name = 'sneaky'", []);
      expect(Number(n)).to.equal(0);
    });

    it('keeps the dashboard procedures out of the public OpenAPI document', async () => {
      const res = await request(testApp()).get('/api/v1/openapi.json');
      expect(JSON.stringify(res.body)).to.not.include('dashboard');
    });
  });

  describe('CSRF', () => {
    it('refuses a mutation without the same Origin, or without a JSON body, and writes nothing', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const cookie = await signInCookie(app, user.email);
      const noOrigin = await request(app).post('/trpc/dashboard.keys.create').set('cookie', cookie).set('content-type', 'application/json').send('{"name":"x"}');
      const otherOrigin = await mutate(app, 'dashboard.keys.create', { name: 'x' }, cookie).set('origin', 'https://evil.example');
      const formPost = await request(app)
        .post('/trpc/dashboard.keys.create')
        .set('cookie', cookie)
        .set('origin', ORIGIN)
        .set('content-type', 'text/plain')
        .send('{"name":"x"}');
      expect([noOrigin.status, otherOrigin.status, formPost.status]).to.deep.equal([403, 403, 415]);
      expect(otherOrigin.body.error.message).to.equal('Cross-site request refused');
      const [{ n }] = await select<{ n: unknown }>(testDb(), 'SELECT COUNT(*) AS n FROM api_keys', []);
      expect(Number(n)).to.equal(0);
      const signOut = await mutate(app, 'dashboard.auth.signOut', {}, cookie).set('origin', 'https://evil.example');
      expect(signOut.status).to.equal(403);
      expect((await query(app, 'dashboard.keys.list', cookie)).status).to.equal(200);
    });

    it("compares the Origin with the request's own host when PUBLIC_BASE_URL is unset", async () => {
      const user = await buildUser();
      const agent = request(testApp());
      const res = await agent
        .post('/trpc/dashboard.auth.signIn')
        .set('host', 'localhost:3000')
        .set('origin', 'http://localhost:3000')
        .set('content-type', 'application/json')
        .send(JSON.stringify({ email: user.email, password: PASSWORD }));
      expect(res.status).to.equal(200);
    });
  });

  describe('expiry and sign-out', () => {
    it('ends a session after 12 hours unused', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const cookie = await signInCookie(app, user.email);
      expect((await query(app, 'dashboard.keys.list', cookie)).status).to.equal(200);
      await testDb().sequelize.query('UPDATE user_sessions SET idle_expires_at = ?', { replacements: [new Date(Date.now() - 1000)] });
      const res = await query(app, 'dashboard.keys.list', cookie);
      expect(res.status).to.equal(401);
      expect((await query(app, 'dashboard.auth.me', cookie)).body.result.data).to.equal(null);
    });

    it('ends a session 30 days after sign-in however busy, and slides the idle expiry within that', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const cookie = await signInCookie(app, user.email);
      const [before] = await select<{ idle_expires_at: unknown; expires_at: unknown }>(testDb(), 'SELECT idle_expires_at, expires_at FROM user_sessions', []);
      const gap = toDate(before.expires_at).getTime() - toDate(before.idle_expires_at).getTime();
      expect(gap).to.be.closeTo((30 * 24 - 12) * 3_600_000, 5_000);
      await testDb().sequelize.query('UPDATE user_sessions SET idle_expires_at = ?', { replacements: [new Date(Date.now() + 60_000)] });
      expect((await query(app, 'dashboard.keys.list', cookie)).status).to.equal(200);
      const [slid] = await select<{ idle_expires_at: unknown }>(testDb(), 'SELECT idle_expires_at FROM user_sessions', []);
      expect(toDate(slid.idle_expires_at).getTime()).to.be.greaterThan(Date.now() + 11 * 3_600_000);
      await testDb().sequelize.query('UPDATE user_sessions SET expires_at = ?', { replacements: [new Date(Date.now() - 1000)] });
      expect((await query(app, 'dashboard.keys.list', cookie)).status).to.equal(401);
    });

    it('revokes the session on sign-out and clears the cookie', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const cookie = await signInCookie(app, user.email);
      const out = await mutate(app, 'dashboard.auth.signOut', {}, cookie);
      expect(out.status).to.equal(200);
      expect((out.headers['set-cookie'] as unknown as string[])[0]).to.match(/^svc_session=; Path=\/; Expires=Thu, 01 Jan 1970/);
      expect((await query(app, 'dashboard.keys.list', cookie)).status).to.equal(401);
      const [{ n }] = await select<{ n: unknown }>(testDb(), 'SELECT COUNT(*) AS n FROM user_sessions', []);
      expect(Number(n)).to.equal(0);
    });

    it('revokes every session of a user who is disabled', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const first = await signInCookie(app, user.email);
      const second = await signInCookie(app, user.email);
      await disableUser(testDb(), { id: user.id });
      expect((await query(app, 'dashboard.keys.list', first)).status).to.equal(401);
      expect((await query(app, 'dashboard.keys.list', second)).status).to.equal(401);
    });
  });

  describe('keys through the dashboard', () => {
    it('creates, lists and disables keys of the signed-in account only; the REST API sees the change', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const other = await buildTenant();
      const cookie = await signInCookie(app, user.email);
      const created = await mutate(app, 'dashboard.keys.create', { name: 'Shop plugin', kind: 'integration', expiresAt: null }, cookie);
      expect(created.status).to.equal(200);
      const key = created.body.result.data;
      expect(key.key).to.match(/^svc_[0-9a-f]{40}$/);
      expect(key).to.include({ name: 'Shop plugin', kind: 'integration', active: true, accountId: user.accountId });
      expect((await api(key.key).post('/contacts/upsert').send({ email: 'ada@example.com' })).status).to.equal(201);

      const list = await query(app, 'dashboard.keys.list', cookie);
      expect(list.body.result.data.map((k: { name: string }) => k.name)).to.deep.equal(['Shop plugin']);
      expect(JSON.stringify(list.body)).to.not.include(key.key);

      const foreign = await mutate(app, 'dashboard.keys.setActive', { id: other.keyId, active: false }, cookie);
      expect(foreign.status).to.equal(404);
      expect((await api(other.key).get('/contacts/by-email/nobody%40example.com')).status).to.equal(404);

      const disabled = await mutate(app, 'dashboard.keys.setActive', { id: key.id, active: false }, cookie);
      expect(disabled.body.result.data.active).to.equal(false);
      const refused = await api(key.key).post('/contacts/upsert').send({ email: 'ada@example.com' });
      expect(refused.status).to.equal(401);
      expect(refused.body).to.include({ error: 'API key is inactive', code: 'api_key_inactive' });
    });

    it('shows the service\'s field errors for a bad key, and writes nothing', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      const cookie = await signInCookie(app, user.email);
      const res = await mutate(app, 'dashboard.keys.create', { name: '  ', kind: 'admin', expiresAt: '2000-01-01T00:00:00Z' }, cookie);
      expect(res.status).to.equal(400);
      const paths = (res.body.error.data.details as Array<{ path: string }>).map((d) => d.path).sort();
      expect(paths).to.deep.equal(['expiresAt', 'kind', 'name']);
      const [{ n }] = await select<{ n: unknown }>(testDb(), 'SELECT COUNT(*) AS n FROM api_keys', []);
      expect(Number(n)).to.equal(0);
    });

    it('shows the account with its active-run limit and usage', async () => {
      const app = dashboardApp();
      const user = await buildUser();
      await setMaxActiveRuns(testDb(), { id: user.accountId, maxActiveRuns: 50 });
      const cookie = await signInCookie(app, user.email);
      const res = await query(app, 'dashboard.account.get', cookie);
      expect(res.body.result.data).to.include({ id: user.accountId, maxActiveRuns: 50, activeRuns: 0 });
    });
  });

  describe('logs', () => {
    it('never carry a setup token, a session token or a password', async () => {
      const logs = bufferLogger('debug');
      const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1000, publicOrigin: ORIGIN }, logger: logs.logger });
      const account = await buildTenant();
      const { setupToken } = await createUser(testDb(), { accountId: account.accountId, email: 'ada@example.com' });
      await request(app).get(`/dashboard/setup?token=${setupToken}`).expect(200);
      await mutate(app, 'dashboard.auth.setup', { token: setupToken, password: PASSWORD }).expect(200);
      await mutate(app, 'dashboard.auth.signIn', { email: 'ada@example.com', password: 'wrong password!' }).expect(401);
      const cookie = await signInCookie(app, 'ada@example.com');
      await query(app, 'dashboard.keys.list', cookie).expect(200);
      const text = logs.text();
      for (const secret of [setupToken, cookie.split('=')[1], PASSWORD, 'wrong password!']) expect(text).to.not.include(secret);
      const routes = logs.records().map((r) => r.route);
      expect(routes).to.include('/dashboard').and.include('/trpc/dashboard.auth.signIn').and.include('/trpc/dashboard.keys.list');
    });
  });

  describe('the page', () => {
    it('serves the app at /dashboard and at its client routes, and 404s a missing asset', async () => {
      for (const path of ['/dashboard', '/dashboard/', '/dashboard/settings/developer/api-keys', '/dashboard/setup?token=x']) {
        const res = await request(testApp()).get(path);
        expect(res.status, path).to.equal(200);
        expect(res.text, path).to.include('<div id="root"></div>');
        expect(res.headers['content-security-policy']).to.include("default-src 'self'");
      }
      expect((await request(testApp()).get('/dashboard/assets/nope.js')).status).to.equal(404);
    });
  });
});
