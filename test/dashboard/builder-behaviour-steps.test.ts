import { expect } from 'chai';
import { executionDetailInWords, standingInWords } from '../../web/src/pages/runs/run-data';
import { claimsError } from '../../web/src/pages/sequences/builder/error-claims';
import { cleaned } from '../../web/src/pages/sequences/builder/model';
import { entryProblems, goalProblems, stepsProblems } from '../../web/src/pages/sequences/builder/validate';
import { diffVersions } from '../../web/src/pages/sequences/builder/version-diff';
import { stepInWords } from '../../web/src/pages/sequences/step-words';

// The dashboard's pure parts for issue 36's steps and settings: wait_for and split steps and a
// branch on the trigger in words, the client's checks before a save (the API's messages at the
// API's paths), the version diff's words for their fields, and a run's wait and outcomes.

const waitFor = {
  id: 'wait-checkout',
  type: 'wait_for',
  activity: 'checkout_completed',
  match: { cartId: '{{ trigger.properties.cartId }}' },
  timeout: 'PT3H',
  next: 'done',
  onTimeout: 'remind',
} as const;
const remind = { id: 'remind', type: 'email', subject: 'Your cart', html: '<p>Still there</p>', category: 'transactional' } as const;
const done = { id: 'done', type: 'exit' } as const;
const split = {
  id: 'ab',
  type: 'split',
  variants: [
    { id: 'a', weight: 3, next: 'remind' },
    { id: 'b', weight: 1, next: 'done' },
  ],
} as const;

describe('the builder\'s words and checks for wait_for, split, trigger conditions, entry and goal', () => {
  it('says a wait_for, a split, a trigger condition and a category in words, without the raw template', () => {
    expect(stepInWords(waitFor as never, { window: null })).to.equal(
      "Wait up to 3 hours for activity checkout_completed with cartId = the trigger's cartId; then done, on timeout remind",
    );
    expect(stepInWords(split as never, { window: null })).to.equal('Split: a 75% to remind, b 25% to done');
    expect(stepInWords({ id: 'b', type: 'branch', if: { property: 'total', gte: 50 }, then: 'a', else: 'c' } as never, { window: null })).to.equal(
      "If the trigger's property total is at least 50 go to a, else c",
    );
    expect(stepInWords(remind as never, { window: null })).to.equal('Email "Your cart" (transactional)');
  });

  it('refuses in the page what the API would, at the same paths: targets, durations, variant names, the last wait_for', () => {
    const steps = [
      { ...waitFor, timeout: '3 hours', onTimeout: 'ghost' },
      { ...split, variants: [{ id: 'a', weight: 1, next: 'done' }, { id: 'a', weight: 1, next: 'nowhere' }] },
      done,
      { id: 'last', type: 'wait_for', activity: 'x', timeout: 'P1D', onTimeout: 'done' },
    ];
    expect(stepsProblems(steps)).to.deep.equal({
      'steps.0.timeout': 'Step "wait-checkout": "3 hours" is not an ISO 8601 duration (e.g. PT2H, P3D)',
      'steps.0.onTimeout': 'Step "wait-checkout": "ghost" is not a step of this sequence',
      'steps.1.variants.1.id': 'Step "ab": variant "a" is named twice',
      'steps.1.variants.1.next': 'Step "ab": "nowhere" is not a step of this sequence',
      'steps.3.next': 'Step "last": the last step needs a `next`: a matched run has no following step to go to',
    });
    // The schemas' own rules come first: one variant is too few.
    expect(stepsProblems([{ ...split, variants: [split.variants[0]] }, remind, done])).to.have.property('steps.0.variants', 'Give at least two variants');
    expect(stepsProblems([waitFor, remind, done])).to.deep.equal({});
    expect(entryProblems({ activity: 'cart_abandoned', reentry: { after: 'thirty days' } })).to.have.keys('entry.reentry.after');
    expect(entryProblems({ activity: 'cart_abandoned', reentry: 'sometimes' })).to.have.keys('entry.reentry');
    expect(goalProblems({ activity: 'order_placed', within: 'PT' })).to.have.keys('goal.within');
    expect(goalProblems(null)).to.deep.equal({});
    // A wait_for's empty next and match are left out: the following step, any activity.
    expect(cleaned({ ...waitFor, next: '', match: {} } as never)).to.deep.equal({ id: 'wait-checkout', type: 'wait_for', activity: 'checkout_completed', timeout: 'PT3H', onTimeout: 'remind' });
    for (const path of ['match.cartId', 'timeout', 'onTimeout', 'next', 'activity']) expect(claimsError(waitFor as never, path), path).to.equal(true);
    for (const path of ['variants', 'variants.1.weight', 'variants.0.next']) expect(claimsError(split as never, path), path).to.equal(true);
    expect(claimsError(remind as never, 'category')).to.equal(true);
  });

  it('describes in the version diff what changed in a wait_for, a split and a category', () => {
    const after = [
      { ...waitFor, timeout: 'P1D', match: { cartId: '{{ trigger.properties.cartId }}', total: 50 }, next: undefined },
      { ...remind, category: undefined },
      { ...split, variants: [{ id: 'a', weight: 1, next: 'remind' }, { id: 'c', weight: 1, next: 'done' }] },
      done,
    ].map((step) => JSON.parse(JSON.stringify(step)));
    const diff = diffVersions([waitFor, remind, split, done] as never, after);
    expect(diff.changed.map((change) => [change.id, change.details])).to.deep.equal([
      ['wait-checkout', ['match total added: 50', 'when it comes: done → the following step', 'timeout 3 hours → 1 day']],
      ['remind', ['category transactional → marketing']],
      ['ab', ['variant a: 75% → 50%', 'variant c added: 50% to done', 'variant b removed']],
    ]);
  });

  it('says what a run waits for, which activity moved it or that it timed out, and a split\'s variant', () => {
    const steps = [split, waitFor, remind, done] as never[];
    expect(standingInWords({ status: 'running', retry: null, currentStepId: 'wait-checkout', waitingFor: 'activity' }, steps)).to.equal(
      "Waiting for activity checkout_completed with cartId = the trigger's cartId at step wait-checkout",
    );
    expect(executionDetailInWords({ stepId: 'wait-checkout', detail: { outcome: 'matched', activityId: 'f00d', activity: 'checkout_completed' } }, steps)).to.equal(
      'Activity checkout_completed f00d came: on to done',
    );
    expect(executionDetailInWords({ stepId: 'wait-checkout', detail: { outcome: 'timed_out' } }, steps)).to.equal('Timed out: no checkout_completed came in time; on to remind');
    expect(executionDetailInWords({ stepId: 'ab', detail: { variant: 'b', to: 'done' } }, steps)).to.equal('Took variant b: on to done');
  });
});
