import { expect } from 'chai';
import type { Express } from 'express';
import { select } from '../../src/db/sql/statements';
import { addSuppressionList } from '../../src/services/suppressions/suppression-operations';
import { buildUser, dashboardApp, mutate, query, signInCookie } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';

// dashboard.suppressions.*: the API's rules, by session, within the signed-in account; what a
// person adds has the source user:<id>.

const input = (value: unknown) => `?input=${encodeURIComponent(JSON.stringify(value))}`;

describe('dashboard suppressions procedures', () => {
  let app: Express;
  let cookie: string;
  let user: Awaited<ReturnType<typeof buildUser>>;

  beforeEach(async () => {
    app = dashboardApp();
    user = await buildUser();
    cookie = await signInCookie(app, user.email);
  });

  const rows = (accountId: string) => select<{ address: string; source: string }>(testDb(), 'SELECT address, source FROM suppressions WHERE account_id = ? ORDER BY address', [accountId]);

  it('adds with the user as source, lists with the filters, and removes', async () => {
    const added = await mutate(app, 'dashboard.suppressions.add', { suppressions: [{ channel: 'email', address: 'Ada@Example.com', reason: 'complaint' }] }, cookie);
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    expect(added.body.result.data).to.deep.equal({ summary: { total: 1, added: 1, existing: 0 } });
    expect(await rows(user.accountId)).to.deep.equal([{ address: 'ada@example.com', source: `user:${user.id}` }]);
    const listed = await query(app, `dashboard.suppressions.list${input({ address: 'ADA@example.com', reason: 'complaint' })}`, cookie);
    expect(listed.body.result.data.suppressions.map((s: { address: string }) => s.address)).to.deep.equal(['ada@example.com']);
    const removed = await mutate(app, 'dashboard.suppressions.remove', { channel: 'email', address: 'ada@example.com' }, cookie);
    expect(removed.body.result.data.suppression).to.deep.include({ address: 'ada@example.com', reason: 'complaint' });
    expect(await rows(user.accountId)).to.deep.equal([]);
    const again = await mutate(app, 'dashboard.suppressions.remove', { channel: 'email', address: 'ada@example.com' }, cookie);
    expect(again.status).to.equal(404);
  });

  it('refuses a bad item at its path and writes nothing', async () => {
    const res = await mutate(app, 'dashboard.suppressions.add', { suppressions: [{ channel: 'whatsapp', address: '0151 1285 5001' }] }, cookie);
    expect(res.status).to.equal(400);
    expect(res.body.error.data.details.map((d: { path: string }) => d.path)).to.deep.equal(['suppressions.0.address']);
    expect(await rows(user.accountId)).to.deep.equal([]);
  });

  it('sees only the signed-in account\'s list, and nothing without a session or by API key', async () => {
    const other = await buildTenant();
    await addSuppressionList(testDb(), { accountId: other.accountId, suppressions: [{ channel: 'email', address: 'theirs@example.com' }], source: 'cli' });
    const listed = await query(app, `dashboard.suppressions.list${input({})}`, cookie);
    expect(listed.body.result.data.suppressions).to.deep.equal([]);
    expect((await mutate(app, 'dashboard.suppressions.remove', { channel: 'email', address: 'theirs@example.com' }, cookie)).status).to.equal(404);
    expect((await query(app, `dashboard.suppressions.list${input({})}`)).status).to.equal(401);
    expect((await mutate(app, 'dashboard.suppressions.add', { suppressions: [{ channel: 'email', address: 'x@example.com' }] })).status).to.equal(401);
    const byKey = await query(app, `dashboard.suppressions.list${input({})}`).set('x-api-key', other.key);
    expect(byKey.status).to.equal(401);
    expect(await rows(other.accountId)).to.deep.equal([{ address: 'theirs@example.com', source: 'cli' }]);
  });
});
