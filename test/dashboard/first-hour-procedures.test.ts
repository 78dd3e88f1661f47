import { expect } from 'chai';
import type { Express } from 'express';
import { select } from '../../src/db/sql/statements';
import { MIN_PASSWORD_LENGTH } from '../../src/services/dashboard/passwords';
import { createUser, SETUP_LINK_INVALID } from '../../src/services/dashboard/users';
import { testDb } from '../support/db';
import { buildAccount, buildContact, buildSequence, buildTenant } from '../support/factories';
import { buildUser, dashboardApp, mutate, query, signInCookie } from '../support/dashboard';

// The procedures behind the dashboard's newcomer items over HTTP: new contact, enroll, the
// capped count and the setup link's facts; bad input is a 400 that writes nothing, and
// another account's things stay out of reach.

function get(app: Express, path: string, input: unknown, cookie?: string) {
  return query(app, `${path}?input=${encodeURIComponent(JSON.stringify(input))}`, cookie);
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  const [{ n }] = await select<{ n: unknown }>(testDb(), sql, values);
  return Number(n);
}

describe('dashboard procedures for a newcomer\'s first hour', () => {
  let app: Express;
  let cookie: string;
  let accountId: string;

  beforeEach(async () => {
    app = dashboardApp();
    const account = await buildAccount({ maxActiveRuns: 2 });
    const user = await buildUser(account.id);
    accountId = user.accountId;
    cookie = await signInCookie(app, user.email);
  });

  it('contacts.create: creates with the API\'s rules, names each bad field in details, and refuses a taken email', async () => {
    const bad = await mutate(app, 'dashboard.contacts.create', { email: 'nope', tags: ['ok', 'x'.repeat(65)] }, cookie);
    expect(bad.status).to.equal(400);
    expect(bad.body.error.data.details.map((d: { path: string }) => d.path).sort()).to.deep.equal(['email', 'tags.1']);
    expect(await count('SELECT COUNT(*) AS n FROM contacts WHERE account_id = ?', [accountId])).to.equal(0);

    const made = await mutate(app, 'dashboard.contacts.create', { email: 'grace@example.com', firstName: 'Grace', tags: ['navy'] }, cookie);
    expect(made.status).to.equal(200);
    expect(made.body.result.data.contact).to.include({ email: 'grace@example.com', firstName: 'Grace' });
    const again = await mutate(app, 'dashboard.contacts.create', { email: 'GRACE@example.com' }, cookie);
    expect(again.status).to.equal(409);
    expect(await count('SELECT COUNT(*) AS n FROM contacts WHERE account_id = ?', [accountId])).to.equal(1);
  });

  it('sequences.enroll: enrolls, skips, fails with reasons; refuses a draft sequence and bad ids, writing nothing', async () => {
    const sequence = await buildSequence(accountId, 'active');
    const draft = await buildSequence(accountId, 'draft');
    const [a, b, c] = [await buildContact(accountId), await buildContact(accountId), await buildContact(accountId)];
    const theirs = await buildContact((await buildTenant()).accountId);

    const badIds = await mutate(app, 'dashboard.sequences.enroll', { id: sequence.id, contactIds: ['not-a-uuid'] }, cookie);
    expect(badIds.status).to.equal(400);
    expect(badIds.body.error.data.details[0].path).to.equal('contactIds.0');
    const none = await mutate(app, 'dashboard.sequences.enroll', { id: sequence.id, contactIds: [] }, cookie);
    expect(none.status).to.equal(400);
    const inactive = await mutate(app, 'dashboard.sequences.enroll', { id: draft.id, contactIds: [a.id] }, cookie);
    expect(inactive.status).to.be.within(400, 499);
    expect(await count('SELECT COUNT(*) AS n FROM sequence_runs', [])).to.equal(0);

    const first = await mutate(app, 'dashboard.sequences.enroll', { id: sequence.id, contactIds: [a.id] }, cookie);
    expect(first.status).to.equal(200);
    expect(first.body.result.data.summary).to.include({ successful: 1, skipped: 0, failed: 0 });
    const rest = await mutate(app, 'dashboard.sequences.enroll', { id: sequence.id, contactIds: [a.id, b.id, c.id, theirs.id] }, cookie);
    const summary = rest.body.result.data.summary;
    expect(summary).to.include({ successful: 1, skipped: 1, failed: 2 });
    expect(summary.failures.map((f: { reason: string }) => f.reason).sort()).to.deep.equal(['not_found', 'sequence_limit_reached']);
    expect(summary.failures.find((f: { reason: string }) => f.reason === 'not_found').contactId).to.equal(theirs.id);
  });

  it('contacts.count: counts with the list\'s filters in this account only, and refuses a bad filter', async () => {
    await buildContact(accountId, { email: 'ada@example.com', tags: ['vip'] });
    await buildContact(accountId, { email: 'bob@example.com' });
    await buildContact((await buildTenant()).accountId, { email: 'ada@example.com', tags: ['vip'] });
    const all = await get(app, 'dashboard.contacts.count', {}, cookie);
    expect(all.status).to.equal(200);
    expect(all.body.result.data).to.deep.equal({ count: 2, capped: false });
    expect((await get(app, 'dashboard.contacts.count', { tag: 'vip' }, cookie)).body.result.data).to.deep.equal({ count: 1, capped: false });
    const bad = await get(app, 'dashboard.contacts.count', { emailSubscriptionStatus: 'maybe' }, cookie);
    expect(bad.status).to.equal(400);
    expect(bad.body.error.data.details[0].path).to.equal('emailSubscriptionStatus');
    expect((await get(app, 'dashboard.contacts.count', {})).status).to.equal(401);
  });

  it('auth.setupInfo: whose link it is and the password rule, without spending it; a dead link is refused', async () => {
    const { setupToken } = await createUser(testDb(), { accountId, email: 'new.person@example.com' });
    const info = await get(app, 'dashboard.auth.setupInfo', { token: setupToken });
    expect(info.status).to.equal(200);
    expect(info.body.result.data).to.deep.equal({ email: 'new.person@example.com', minPasswordLength: MIN_PASSWORD_LENGTH, maxPasswordLength: 256 });
    // Still usable: reading it spent nothing.
    const set = await mutate(app, 'dashboard.auth.setup', { token: setupToken, password: 'x'.repeat(MIN_PASSWORD_LENGTH) });
    expect(set.status).to.equal(200);
    const spent = await get(app, 'dashboard.auth.setupInfo', { token: setupToken });
    expect(spent.status).to.equal(400);
    expect(spent.body.error.message).to.equal(SETUP_LINK_INVALID);
    expect((await get(app, 'dashboard.auth.setupInfo', { token: 'garbage' })).status).to.equal(400);
  });
});
