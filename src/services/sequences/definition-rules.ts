import { randomBytes } from 'node:crypto';
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { forShare, select } from '../../db/sql/statements';
import { ValidationError, type IssueDetail } from '../../errors/app-errors';
import type { SendingWindow, Step, StepInput } from '../../schemas/sequence-definition';
import { checkDuration } from '../engine/schedule/durations';
import { checkWindow } from '../engine/schedule/sending-window';
import { isValidTimeZone } from '../engine/schedule/zones';
import { normalizeId } from '../ids';

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

  stored.forEach((step, index) => {
    // A step is named as the caller knows it: by its id if it gave one, else by its place.
    const name = steps[index]!.id === undefined ? `Step ${index + 1}` : `Step "${step.id}"`;
    const at = (field: string, message: string) => problems.push(issue(index, field, `${name}: ${message}`));
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
      case 'webhook':
        if (!normalizeId(step.endpointId)) at('endpointId', `"${step.endpointId}" is not a webhook endpoint of the account`);
        break;
    }
  });
  if (problems.length === 0) problems.push(...waitlessCycles(stored));
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
  return stored;
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
export async function checkWebhookEndpoints(
  db: Database,
  accountId: string,
  steps: readonly Step[],
  transaction?: Transaction,
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
    .map(({ step, index }) => issue(index, 'endpointId', `Step "${step.id}": "${step.endpointId}" is not a webhook endpoint of the account`));
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
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
  const next = steps[index + 1];
  return next ? [next.id] : [];
}

// A loop the engine could go round without ever sleeping (branch back to an earlier step with
// no wait on the way) would spin a run as fast as the engine claims it. Every cycle must pass
// through a wait: so with the waits taken out, what is left has no cycle.
function waitlessCycles(steps: readonly Step[]): IssueDetail[] {
  const indexOf = new Map(steps.map((step, index) => [step.id, index]));
  const state = new Array<'new' | 'open' | 'done'>(steps.length).fill('new');
  const path: number[] = [];
  const visit = (index: number): number[] | null => {
    if (steps[index]!.type === 'wait') return null;
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
      const ids = [...cycle, cycle[0]!].map((i) => steps[i]!.id).join(' -> ');
      const first = Math.min(...cycle);
      return [issue(first, 'type', `Step "${steps[first]!.id}": the cycle ${ids} has no wait step on it`)];
    }
  }
  return [];
}
