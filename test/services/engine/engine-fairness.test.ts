import { expect } from 'chai';
import { claimDueRuns } from '../../../src/services/engine/run-queue';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { engineAt } from './support';

// The claim is fair to every account (docs/sequences.md "How runs move"): one account's burst
// of due runs does not hold back another account's due runs by more than about one pass.

// An account whose one-step sequence has `count` runs due now (enrolled in one call).
async function accountWithDueRuns(count: number) {
  const { key, accountId } = await buildTenant();
  const { sequence } = await caller(key).sequences.create({ name: 'Burst', status: 'active', steps: [{ id: 'mark', type: 'tag', add: ['done'] }] });
  const contacts = [];
  for (let i = 0; i < count; i += 1) contacts.push(await buildContact(accountId));
  await caller(key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((contact) => contact.id) });
  const statuses = async () => (await caller(key).sequences.runs({ id: sequence.id, limit: 100 })).runs.map((run) => run.status);
  return { accountId, statuses };
}

const completed = (statuses: string[]) => statuses.filter((status) => status === 'completed').length;

describe('sequence engine: fair to every account', () => {
  it("takes another account's few due runs in the first pass beside a burst of one account, and keeps the batch full", async () => {
    // A's burst is due first: in due order alone, B would wait three passes.
    const burst = await accountWithDueRuns(30);
    const few = await accountWithDueRuns(3);
    const { engine } = engineAt(Date.now() + 1, { batchSize: 10 });

    expect(await engine.runOnce()).to.equal(10);
    expect(await few.statuses()).to.deep.equal(['completed', 'completed', 'completed']);
    // What B could not use went to A.
    expect(completed(await burst.statuses())).to.equal(7);

    await engine.runUntilIdle();
    expect(completed(await burst.statuses())).to.equal(30);
  });

  it('shares a batch between two bursts, round-robin', async () => {
    const first = await accountWithDueRuns(20);
    const second = await accountWithDueRuns(20);
    const { engine } = engineAt(Date.now() + 1, { batchSize: 10 });

    expect(await engine.runOnce()).to.equal(10);
    expect(completed(await first.statuses())).to.equal(5);
    expect(completed(await second.statuses())).to.equal(5);
  });

  it('looks at a slice of the accounts per pass and moves on: every account with due runs is claimed within a round of slices', async () => {
    const burst = await accountWithDueRuns(20);
    const others = [];
    for (let i = 0; i < 4; i += 1) others.push(await accountWithDueRuns(1));
    const now = new Date(Date.now() + 1);
    const claimed = new Set<string>();
    let cursor = '';
    // Five accounts, two looked at per claim: three claims cover them all.
    for (let pass = 0; pass < 3; pass += 1) {
      const claim = await claimDueRuns(testDb(), now, { limit: 4, leaseMs: 60_000, cursor, sliceAccounts: 2 });
      expect(claim.runs).to.have.length(4);
      claim.runs.forEach((run) => claimed.add(run.accountId));
      cursor = claim.cursor;
    }
    expect([...claimed].sort()).to.deep.equal([burst.accountId, ...others.map((other) => other.accountId)].sort());
  });
});
