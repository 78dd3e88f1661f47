import { expect } from 'chai';
import type { Express } from 'express';
import { setSequenceStatus } from '../../src/services/sequences/sequence-admin';
import { testDb } from '../support/db';
import { buildSequence } from '../support/factories';
import { buildUser, dashboardApp, query, signInCookie } from '../support/dashboard';

// dashboard.sequences.names (issue 37, item 15): the names of a page of runs' sequences, in any
// status, within the signed-in account only.

function names(app: Express, ids: string[], cookie?: string) {
  return query(app, `dashboard.sequences.names?input=${encodeURIComponent(JSON.stringify({ ids }))}`, cookie);
}

describe('dashboard.sequences.names', () => {
  it("names the account's sequences, archived ones too; another account's, unknown ids and non-ids are left out", async () => {
    const app = dashboardApp();
    const user = await buildUser();
    const cookie = await signInCookie(app, user.email);
    const active = await buildSequence(user.accountId, 'active');
    const archived = await buildSequence(user.accountId, 'active');
    await setSequenceStatus(testDb(), { accountId: user.accountId, id: archived.id, status: 'archived' });
    const theirs = await buildSequence((await buildUser()).accountId, 'active');
    const res = await names(app, [active.id, archived.id, theirs.id, '00000000-0000-4000-8000-000000000000', 'not-an-id'], cookie);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.result.data.names).to.deep.equal({ [active.id]: active.name, [archived.id]: archived.name });
    expect((await names(app, [active.id])).status, 'no session').to.equal(401);
  });
});
