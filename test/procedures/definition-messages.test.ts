import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { issueDetails } from '../../src/trpc/errors';
import { caller } from '../support/app';
import { buildTenant } from '../support/factories';
import { definitionRows } from '../support/sequence-definitions';
import { badRequest, trpcRejection } from '../support/trpc';

// A bad definition's 400 names the problem in words the caller can act on (docs/sequences.md):
// the shapes a condition or an exit rule may take, the branch that closes a cycle, a step by
// the id the caller gave or else by its place and type, a weekday given twice. Each message is
// checked exactly.

type CreateInput = Parameters<ReturnType<typeof caller>['sequences']['create']>[0];

const CONDITION_SHAPES =
  'A condition is one of { "tag": "…" }, { "field": "…", "equals": any JSON }, { "field": "…", "exists": true or false }, ' +
  '{ "channel": "email" or "whatsapp", "status": "subscribed" or "unsubscribed" } or, on the run\'s trigger, { "property": "…" } with one of ' +
  'equals, in, exists, gt, gte, lt or lte';
const EXIT_RULE_SHAPES = 'An exit rule is { "tag": "…" } or { "unsubscribed": "email" or "whatsapp" }';

// The problems a definition is refused for (BAD_REQUEST, nothing stored), and its message.
async function refused(definition: Record<string, unknown>) {
  const { key } = await buildTenant();
  const before = await definitionRows();
  const error = await trpcRejection(caller(key).sequences.create({ name: 'Bad', ...definition } as CreateInput));
  expect(error.code).to.equal('BAD_REQUEST');
  expect(await definitionRows()).to.deep.equal(before);
  return { details: issueDetails(error)!, error: error.message };
}

// The first problem: its path and message.
async function firstProblem(definition: Record<string, unknown>) {
  return (await refused(definition)).details[0]!;
}

const exit = { id: 'end', type: 'exit' };

describe('messages of a bad definition (procedures)', () => {
  it('names the condition shapes allowed when a branch\'s if has none of them', async () => {
    const steps = [{ id: 'b', type: 'branch', if: { colour: 'red' }, then: 'end', else: 'end' }, exit];
    expect(await firstProblem({ steps })).to.deep.equal({ path: 'steps.0.if', message: `${CONDITION_SHAPES}; got an object with "colour"` });
    const both = [{ id: 'b', type: 'branch', if: { field: 'plan', equals: 'pro', exists: true }, then: 'end', else: 'end' }, exit];
    expect(await firstProblem({ steps: both })).to.deep.equal({ path: 'steps.0.if', message: `${CONDITION_SHAPES}; got an object with "field", "equals", "exists"` });
    const text = [{ id: 'b', type: 'branch', if: 'vip', then: 'end', else: 'end' }, exit];
    expect(await firstProblem({ steps: text })).to.deep.equal({ path: 'steps.0.if', message: `${CONDITION_SHAPES}; got a string` });
  });

  it('names the exit rule shapes allowed', async () => {
    expect(await firstProblem({ exitWhen: [{ tag: 'purchased' }, { bounced: 'email' }] })).to.deep.equal({
      path: 'exitWhen.1',
      message: `${EXIT_RULE_SHAPES}; got an object with "bounced"`,
    });
    expect(await firstProblem({ exitWhen: [{ unsubscribed: 'sms' }] })).to.deep.equal({ path: 'exitWhen.0', message: `${EXIT_RULE_SHAPES}; got an object with "unsubscribed"` });
  });

  it('keeps the shape\'s own message when the keys fit one shape and a value does not', async () => {
    const steps = [{ id: 'b', type: 'branch', if: { tag: '' }, then: 'end', else: 'end' }, exit];
    expect(await firstProblem({ steps })).to.deep.equal({ path: 'steps.0.if.tag', message: 'A tag must not be empty' });
  });

  describe('a cycle with no wait', () => {
    it('points at the branch that jumps back, by its then, with the cycle in the order a run goes round it', async () => {
      const steps = [{ id: 'a', type: 'tag', add: ['x'] }, { id: 'b', type: 'branch', if: { tag: 'vip' }, then: 'a', else: 'end' }, exit];
      expect(await refused({ steps })).to.deep.equal({
        details: [{ path: 'steps.1.then', message: 'Step "b": its then goes back to step "a", closing the cycle "a" -> "b" -> "a" with no wait step on it' }],
        error: 'Step "b": its then goes back to step "a", closing the cycle "a" -> "b" -> "a" with no wait step on it',
      });
    });

    it('points at the else when that is the way back', async () => {
      const steps = [{ id: 'top', type: 'tag', add: ['x'] }, { id: 'check', type: 'branch', if: { tag: 'vip' }, then: 'end', else: 'top' }, exit];
      expect(await firstProblem({ steps })).to.deep.equal({
        path: 'steps.1.else',
        message: 'Step "check": its else goes back to step "top", closing the cycle "top" -> "check" -> "top" with no wait step on it',
      });
    });

    it('points at the branch going back even when the search enters the cycle from a later step', async () => {
      const steps = [
        { id: 'start', type: 'branch', if: { tag: 'vip' }, then: 'loop-check', else: 'end' },
        { id: 'body', type: 'tag', add: ['x'] },
        { id: 'loop-check', type: 'branch', if: { tag: 'done' }, then: 'end', else: 'body' },
        exit,
      ];
      expect(await firstProblem({ steps })).to.deep.equal({
        path: 'steps.2.else',
        message: 'Step "loop-check": its else goes back to step "body", closing the cycle "body" -> "loop-check" -> "body" with no wait step on it',
      });
    });

    it('names a step without an id in the cycle by its place and type', async () => {
      const steps = [
        { id: 'a', type: 'tag', add: ['x'] },
        { type: 'update', customFields: { seen: true } },
        { id: 'b', type: 'branch', if: { tag: 'vip' }, then: 'a', else: 'end' },
        exit,
      ];
      expect(await firstProblem({ steps })).to.deep.equal({
        path: 'steps.2.then',
        message: 'Step "b": its then goes back to step "a", closing the cycle "a" -> step 2 (update) -> "b" -> "a" with no wait step on it',
      });
    });

    it('says "itself" for a branch to itself', async () => {
      const steps = [{ id: 'b', type: 'branch', if: { tag: 'vip' }, then: 'end', else: 'b' }, exit];
      expect(await firstProblem({ steps })).to.deep.equal({
        path: 'steps.0.else',
        message: 'Step "b": its else goes back to itself, closing the cycle "b" -> "b" with no wait step on it',
      });
    });
  });

  describe('a step without an id is named by its place and type, never by the id the service made', () => {
    it('in a step\'s own rule', async () => {
      expect(await firstProblem({ steps: [{ id: 'w', type: 'wait', duration: 'PT1H' }, { type: 'tag' }] })).to.deep.equal({
        path: 'steps.1.add',
        message: 'Step 2 (tag): give at least one tag to add or remove',
      });
      expect(await firstProblem({ steps: [{ type: 'wait' }] })).to.deep.equal({ path: 'steps.0.duration', message: 'Step 1 (wait): give exactly one of duration and until' });
      // A step with an id is named by it.
      expect(await firstProblem({ steps: [{ id: 'w', type: 'wait' }] })).to.deep.equal({ path: 'steps.0.duration', message: 'Step "w": give exactly one of duration and until' });
    });

    it('in a webhook endpoint that is not the account\'s', async () => {
      const endpointId = randomUUID();
      expect(await firstProblem({ steps: [{ id: 't', type: 'tag', add: ['x'] }, { type: 'webhook', endpointId }] })).to.deep.equal({
        path: 'steps.1.endpointId',
        message: `Step 2 (webhook): "${endpointId}" is not a webhook endpoint of the account`,
      });
      expect(await firstProblem({ steps: [{ id: 'notify', type: 'webhook', endpointId }] })).to.deep.equal({
        path: 'steps.0.endpointId',
        message: `Step "notify": "${endpointId}" is not a webhook endpoint of the account`,
      });
    });
  });

  it('refuses a weekday given twice, in a window and in a wait until', async () => {
    const twice = '"sat" is listed twice: name each weekday once';
    const { key } = await buildTenant();
    const error = await badRequest(
      caller(key).sequences.create({ name: 'Bad', sendingWindow: { timeZone: 'UTC', weekdays: ['sat', 'sat'] } } as CreateInput),
      'sendingWindow.weekdays.1',
    );
    expect(issueDetails(error)).to.deep.equal([{ path: 'sendingWindow.weekdays.1', message: twice }]);
    expect(await firstProblem({ steps: [{ type: 'wait', until: { time: '09:00', weekdays: ['fri', 'sat', 'sun', 'sat'] } }] })).to.deep.equal({
      path: 'steps.0.until.weekdays.3',
      message: twice,
    });
    // Each day once is fine.
    const { sequence } = await caller(key).sequences.create({ name: 'Weekend', sendingWindow: { timeZone: 'UTC', weekdays: ['sat', 'sun'] } } as CreateInput);
    expect(sequence.sendingWindow).to.deep.equal({ timeZone: 'UTC', weekdays: ['sat', 'sun'] });
  });
});
