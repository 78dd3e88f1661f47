import { randomBytes } from 'node:crypto';
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { forShare, select } from '../../db/sql/statements';
import { ConflictError, SENDER_REQUIRED, ValidationError, type IssueDetail } from '../../errors/app-errors';
import type { Entry, Goal, SendingWindow, Step, StepInput } from '../../schemas/sequence-definition';
import { plainLiquid } from '../messages/liquid';
import type { ChannelSettings } from '../channels/channel-settings';
import type { SendingRules } from '../channels/sending-domains';
import { domainOf, isVerified } from '../channels/sender-domains';
import { checkDuration } from '../runs/schedule/durations';
import { checkWindow } from '../runs/schedule/sending-window';
import { isValidTimeZone } from '../runs/schedule/zones';
import { normalizeId } from '../ids';
import { describeLiquidError, problemText, templateProblems } from '../messages/templates';

// The rules of a sequence definition that read across its fields (docs/sequences.md
// "Definitions"). The zod schemas have checked the shape; this checks the meaning, and every
// problem names the step it is in. A definition that breaks one is a 400 and nothing is stored.

// Gives every step without an id one that no other step has; checks the steps. Answers the
// steps as they are stored.
export function checkSteps(steps: readonly StepInput[]): Step[] {
  const problems: IssueDetail[] = [];
  const seen = new Map<string, number>();
  steps.forEach((step, index) => {
    if (step.id === undefined) return;
    if (seen.has(step.id)) problems.push(issue(index, 'id', `Step id "${step.id}" is used by step ${seen.get(step.id)! + 1} too`));
    else seen.set(step.id, index);
  });
  // The id first, as every answer shows a step.
  const stored = steps.map(({ id, ...rest }) => ({ id: id ?? generatedId(seen), ...rest }) as Step);
  const name = stepNames(stored, steps);

  stored.forEach((step, index) => {
    const at = (field: string, message: string) => problems.push(issue(index, field, `${capitalized(name(index))}: ${message}`));
    switch (step.type) {
      case 'wait':
        if ((step.duration === undefined) === (step.until === undefined)) at('duration', 'give exactly one of duration and until');
        else if (step.duration !== undefined) {
          const checked = checkDuration(step.duration);
          if (!checked.ok) at('duration', checked.message);
        }
        break;
      case 'tag':
        if ((step.add?.length ?? 0) + (step.remove?.length ?? 0) === 0) at('add', 'give at least one tag to add or remove');
        break;
      case 'branch':
        for (const field of ['then', 'else'] as const) {
          if (!seen.has(step[field])) at(field, `"${step[field]}" is not a step of this sequence`);
        }
        break;
      case 'wait_for': {
        const checked = checkDuration(step.timeout);
        if (!checked.ok) at('timeout', checked.message);
        for (const field of ['next', 'onTimeout'] as const) {
          const target = step[field];
          if (target !== undefined && !seen.has(target)) at(field, `"${target}" is not a step of this sequence`);
        }
        if (step.next === undefined && index === stored.length - 1) at('next', 'the last step needs a `next`: a matched run has no following step to go to');
        for (const [path, value] of Object.entries(step.match ?? {})) {
          const problem = typeof value === 'string' ? matchTemplateProblem(value) : null;
          if (problem) at(`match.${path}`, `match.${path} does not parse: ${problem}`);
        }
        break;
      }
      case 'split': {
        const variants = new Map<string, number>();
        step.variants.forEach((variant, place) => {
          if (variants.has(variant.id)) at(`variants.${place}.id`, `variant "${variant.id}" is named twice`);
          variants.set(variant.id, place);
          if (!seen.has(variant.next)) at(`variants.${place}.next`, `"${variant.next}" is not a step of this sequence`);
        });
        break;
      }
      case 'webhook':
        if (!normalizeId(step.endpointId)) at('endpointId', `"${step.endpointId}" is not a webhook endpoint of the account`);
        break;
      // Templates are parsed when they are saved: a mistake is found now, with its line, not
      // when the first contact reaches the step.
      case 'email':
      case 'whatsapp':
        for (const problem of templateProblems(step)) at(problem.path, `${problem.path} does not parse: ${problemText(problem)}`);
        break;
    }
  });
  if (problems.length === 0) problems.push(...waitlessCycles(stored, name));
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
  return stored;
}

// A wait_for's match value is a Liquid template: one that does not parse is found when it is
// saved, as a message's are.
function matchTemplateProblem(source: string): string | null {
  try {
    plainLiquid.parse(source);
    return null;
  } catch (error) {
    return problemText(describeLiquidError(error));
  }
}

// The durations of a sequence's entry (reentry.after) and goal (within), which the schema has
// only as strings.
export function checkEntryAndGoal(input: { entry?: Entry | null; goal?: Goal | null }): void {
  const problems: IssueDetail[] = [];
  const after = input.entry && typeof input.entry.reentry === 'object' ? input.entry.reentry.after : undefined;
  if (after !== undefined) {
    const checked = checkDuration(after);
    if (!checked.ok) problems.push({ path: 'entry.reentry.after', message: `entry.reentry.after: ${checked.message}` });
  }
  if (input.goal?.within !== undefined) {
    const checked = checkDuration(input.goal.within);
    if (!checked.ok) problems.push({ path: 'goal.within', message: `goal.within: ${checked.message}` });
  }
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
}

export function checkSendingWindow(window: SendingWindow): void {
  if (!isValidTimeZone(window.timeZone)) {
    throw windowError('timeZone', `"${window.timeZone}" is not an IANA time zone (e.g. Europe/Paris)`);
  }
  const checked = checkWindow(window);
  if (!checked.ok) throw windowError(checked.path, checked.message);
}

// A webhook step names an endpoint of the caller's account: one statement for all of them. In a
// transaction, the endpoints are share-locked until it commits, so a concurrent delete of one
// either waits for this write and then sees it (409), or goes first and this one finds the
// endpoint gone (src/services/sequences/endpoint-users.ts).
// given: the steps as sent (ids missing where the service made them), to name each step as the
// caller knows it.
export async function checkWebhookEndpoints(
  db: Database,
  accountId: string,
  steps: readonly Step[],
  transaction?: Transaction,
  given: readonly StepInput[] = steps,
): Promise<void> {
  const webhooks = steps.flatMap((step, index) => (step.type === 'webhook' ? [{ step, index }] : []));
  if (webhooks.length === 0) return;
  const ids = [...new Set(webhooks.map(({ step }) => normalizeId(step.endpointId)!))];
  const found = await select<{ id: string }>(
    db,
    `SELECT id FROM webhook_endpoints WHERE account_id = ? AND id IN (?)${transaction ? forShare(db) : ''}`,
    [accountId, ids],
    transaction,
  );
  const known = new Set(found.map((row) => row.id));
  const problems = webhooks
    .filter(({ step }) => !known.has(normalizeId(step.endpointId)!))
    .map(({ step, index }) => issue(index, 'endpointId', `${capitalized(stepNames(steps, given)(index))}: "${step.endpointId}" is not a webhook endpoint of the account`));
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
}

// Through the server's shared relay (the account has no relay of its own), an email step's
// `from` must be in one of the account's verified sending domains (or the server's own): a 400
// naming the step's field, not a message that fails at send time. An account's own relay may
// send any From; a From that the account's DKIM domain does not align with is sent unsigned
// (src/services/channels/senders.ts, signingFor).
export function checkStepSenders(steps: readonly Step[], sender: SendingRules, given: readonly StepInput[] = steps): void {
  if (!sender.sharedRelay) return;
  const problems = steps.flatMap((step, index) =>
    step.type === 'email' && step.from && !isVerified(domainOf(step.from) ?? '', sender.verifiedDomains)
      ? [issue(index, 'from', `${capitalized(stepNames(steps, given)(index))}: ${domainOf(step.from)} is not a verified sending domain of the account (POST /channels/email/domains)`)]
      : [],
  );
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
}

// An active sequence sends: an email step with no From of its own, in an account with no sender
// and a server with no EMAIL_FROM, would fail every run that reaches it. Saving such steps
// active, or activating them, is a 409 naming each such step's From; a draft or paused
// sequence may have them while its sender is being set up.
export function requireSenders(steps: readonly Step[], sender: SendingRules, given: readonly StepInput[] = steps): void {
  if (sender.defaultFrom) return;
  const problems = steps.flatMap((step, index) => (step.type === 'email' && !step.from ? [issue(index, 'from', `${capitalized(stepNames(steps, given)(index))} ${SENDER_REQUIRED}`)] : []));
  if (problems.length > 0) throw new ConflictError(problems[0]!.message, 'sender_required', problems);
}

// A step is named as the caller knows it: by its id if the caller gave it ('step "welcome"',
// or '"welcome"' in a list of steps), else by its place and type ("step 3 (tag)"), never by an
// id the service made up.
interface StepNames {
  (index: number): string;
  short(index: number): string;
}

function stepNames(stored: readonly Step[], given: readonly StepInput[]): StepNames {
  const generated = (index: number) => given[index]?.id === undefined;
  const byPlace = (index: number) => `step ${index + 1} (${stored[index]!.type})`;
  const name = (index: number) => (generated(index) ? byPlace(index) : `step "${stored[index]!.id}"`);
  name.short = (index: number) => (generated(index) ? byPlace(index) : `"${stored[index]!.id}"`);
  return name;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function issue(index: number, field: string, message: string): IssueDetail {
  return { path: `steps.${index}.${field}`, message };
}

function windowError(field: string, message: string): ValidationError {
  const path = `sendingWindow.${field}`;
  return new ValidationError(`${path}: ${message}`, [{ path, message }]);
}

function generatedId(taken: Map<string, number>): string {
  for (;;) {
    const id = `step-${randomBytes(4).toString('hex')}`;
    if (!taken.has(id)) {
      taken.set(id, -1);
      return id;
    }
  }
}

// Where a run can go from each step: the next one, a branch's two targets, nowhere after an
// exit (or after the last step).
export function successors(steps: readonly Step[], index: number): string[] {
  const step = steps[index]!;
  if (step.type === 'exit') return [];
  if (step.type === 'branch') return [step.then, step.else];
  if (step.type === 'split') return step.variants.map((variant) => variant.next);
  if (step.type === 'wait_for') return [step.next ?? steps[index + 1]?.id, step.onTimeout].filter((id): id is string => id !== undefined);
  const next = steps[index + 1];
  return next ? [next.id] : [];
}

// The field of a branch or a split that jumps to `target` (only they go anywhere but forward).
function jumpField(step: Step, target: string): string {
  if (step.type === 'split') return `variants.${step.variants.findIndex((variant) => variant.next === target)}.next`;
  if (step.type === 'branch') return step.then === target ? 'then' : 'else';
  return 'id';
}

// A loop the engine could go round without ever sleeping (branch back to an earlier step with
// no wait on the way) would spin a run as fast as the engine claims it. Every cycle must pass
// through a wait: so with the waits taken out, what is left has no cycle. The error points at
// the branch that closes the cycle: the one that jumps back (to its own place or an earlier
// one), which every cycle has, since only a branch goes anywhere but forward.
function waitlessCycles(steps: readonly Step[], name: StepNames): IssueDetail[] {
  const indexOf = new Map(steps.map((step, index) => [step.id, index]));
  const state = new Array<'new' | 'open' | 'done'>(steps.length).fill('new');
  const path: number[] = [];
  const visit = (index: number): number[] | null => {
    // A wait_for waits too: for its activity, or its timeout (at least a second).
    if (steps[index]!.type === 'wait' || steps[index]!.type === 'wait_for') return null;
    if (state[index] === 'open') return path.slice(path.indexOf(index));
    if (state[index] === 'done') return null;
    state[index] = 'open';
    path.push(index);
    for (const next of successors(steps, index)) {
      const cycle = visit(indexOf.get(next)!);
      if (cycle) return cycle;
    }
    path.pop();
    state[index] = 'done';
    return null;
  };
  for (let index = 0; index < steps.length; index += 1) {
    const cycle = visit(index);
    if (cycle) {
      // Read from its earliest step, the order a run goes round it.
      const start = cycle.indexOf(Math.min(...cycle));
      const round = [...cycle.slice(start), ...cycle.slice(0, start)];
      const loop = [...round, round[0]!];
      const back = round.findIndex((from, i) => loop[i + 1]! <= from);
      const [from, to] = [loop[back]!, loop[back + 1]!];
      const field = jumpField(steps[from]!, steps[to]!.id);
      const target = from === to ? 'itself' : name(to);
      const names = loop.map((i) => name.short(i)).join(' -> ');
      const words = field.startsWith('variants.') ? `its variant "${(steps[from] as Extract<Step, { type: 'split' }>).variants[Number(field.split('.')[1])]!.id}"` : `its ${field}`;
      return [
        issue(from, field, `${capitalized(name(from))}: ${words} goes back to ${target}, closing the cycle ${names} with no wait step on it`),
      ];
    }
  }
  return [];
}
