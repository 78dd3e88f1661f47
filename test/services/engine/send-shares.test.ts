import { expect } from 'chai';
import { groupKey, shareOut, type ShareInput } from '../../../src/services/engine/outbound/send-shares';
import type { SendGroup } from '../../../src/services/runs/outbox';
import { RateBuckets } from '../../../src/services/engine/outbound/rate-buckets';

// How a dispatcher's look shares its request slots out (src/services/engine/outbound/
// send-shares.ts) and the rate per account and channel (rate-buckets.ts): pure functions of what
// the dispatcher knows.

const now = 1_800_000_000_000;
const group = (accountId: string, target: string, dueAt = now): SendGroup => ({ accountId, channel: 'webhook', target, dueAt: new Date(dueAt) });

function share(groups: SendGroup[], overrides: Partial<ShareInput> = {}) {
  return shareOut({
    groups,
    now,
    cursor: undefined,
    free: 100,
    perTarget: 10,
    inFlight: () => 0,
    tokens: () => 1_000,
    nextTokenAt: () => now,
    ...overrides,
  });
}

describe('sharing out request slots', () => {
  it('round-robin over the (account, target) groups with due sends, starting after the one served last', () => {
    const groups = [group('b', 'y'), group('a', 'x'), group('c', 'z')];
    const first = share(groups, { free: 2 });
    expect(first.picks.map((pick) => [pick.group.accountId, pick.limit])).to.deep.equal([['a', 1], ['b', 1]]);
    const second = share(groups, { free: 2, cursor: first.cursor });
    expect(second.picks.map((pick) => pick.group.accountId)).to.deep.equal(['c', 'a']);
  });

  it('gives each group an even share of the free slots, within its target\'s own free slots', () => {
    const result = share([group('a', 'x'), group('b', 'y')], { free: 12, perTarget: 10, inFlight: (key) => (key === groupKey(group('a', 'x')) ? 8 : 0) });
    expect(result.picks.map((pick) => [pick.group.accountId, pick.limit])).to.deep.equal([['a', 2], ['b', 6]]);
  });

  it('passes over a target whose slots a hanging receiver holds, and waits for no time on its account (a slot coming free wakes it)', () => {
    const result = share([group('a', 'x'), group('b', 'y')], { inFlight: (key) => (key === groupKey(group('a', 'x')) ? 10 : 0) });
    expect(result.picks.map((pick) => pick.group.accountId)).to.deep.equal(['b']);
    expect(result.wakeAt).to.equal(null);
  });

  it("passes over an account whose rate is spent, until its next token; a group due later wakes the dispatcher at its due time", () => {
    const result = share([group('a', 'x'), group('b', 'y', now + 5_000)], { tokens: (g) => (g.accountId === 'a' ? 0 : 5), nextTokenAt: () => now + 250 });
    expect(result.picks).to.deep.equal([]);
    expect(result.wakeAt).to.equal(now + 250);
    expect(share([group('b', 'y', now + 5_000)]).wakeAt).to.equal(now + 5_000);
  });
});

describe('the rate per account and channel', () => {
  it('starts at most perSecond a second, one second\'s worth at once, refilled as time goes by', () => {
    let clock = now;
    const buckets = new RateBuckets(() => 2, () => clock);
    expect(buckets.available('a', 'webhook')).to.equal(2);
    buckets.take('a', 'webhook', 2);
    expect(buckets.available('a', 'webhook')).to.equal(0);
    expect(buckets.available('b', 'webhook')).to.equal(2);
    expect(buckets.nextAt('a', 'webhook')).to.equal(now + 500);
    clock += 500;
    expect(buckets.available('a', 'webhook')).to.equal(1);
    clock += 60_000;
    expect(buckets.available('a', 'webhook')).to.equal(2);
    buckets.take('a', 'webhook', 1);
    buckets.giveBack('a', 'webhook', 5);
    expect(buckets.available('a', 'webhook')).to.equal(2);
  });
});
