import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../../src/routers/app-router';
import { matchInWords, type Step } from '../sequences/step-words';

// The run page's data, as dashboard.runs.get answers it (src/services/sequences/run-page.ts).
export type RunPageData = inferRouterOutputs<AppRouter>['dashboard']['runs']['get'];
export type RunDetail = RunPageData['run'];
export type Execution = RunDetail['executions'][number];
export type SentMessage = NonNullable<Execution['message']>;

export const ACTIVE_RUN = new Set(['pending', 'running', 'paused']);

const WAITING: Record<string, string> = {
  wait: 'Waiting',
  window: 'Waiting for the sending window',
  sequence_paused: 'Waiting for the sequence to be active again',
  channel_paused: 'Waiting for its channel to resume (the sender side failed: see the banner on the sequence page)',
  frequency_cap: "Waiting for the contact's frequency cap to allow its message",
};

type Standing = Pick<RunDetail, 'retry' | 'status' | 'currentStepId' | 'waitingFor'> & Partial<Pick<RunDetail, 'awaiting'>>;

// Where the run stands, in a sentence; null when its status says it all. A run at a wait_for
// step says what it waits for: the activity and the values it must carry (the page adds until
// when: its timeout).
export function standingInWords(run: Standing, steps: readonly Step[] = []): string | null {
  if (run.retry) return null;
  if (run.status === 'paused') return `Paused at step ${run.currentStepId ?? '—'}.`;
  if (!ACTIVE_RUN.has(run.status)) return null;
  if (run.waitingFor === 'activity') {
    const step = steps.find((s) => s.id === run.currentStepId);
    if (step?.type !== 'wait_for') return `Waiting for an activity at step ${run.currentStepId}`;
    // The values as rendered for this run when the server says them (cartId = "c1"), else the step's.
    const rendered = run.awaiting?.match ? Object.entries(run.awaiting.match).map(([path, value]) => `${path} = ${JSON.stringify(value)}`).join(', ') : null;
    const match = rendered ? `with ${rendered}` : matchInWords(step.match);
    return `Waiting for activity ${step.activity}${match ? ` ${match}` : ''} at step ${step.id}`;
  }
  if (run.waitingFor && WAITING[run.waitingFor]) return `${WAITING[run.waitingFor]} at step ${run.currentStepId}`;
  return run.currentStepId ? `At step ${run.currentStepId}, due now.` : null;
}

// What an execution did, beyond its outcome: a branch's way, a wait_for's outcome (the activity
// that moved the run, by id, or its timeout), a split's variant, a receiver's answer. `steps` are
// the run's version's, to name where a matched wait_for went (its `next`, or the following step).
export function executionDetailInWords(execution: Pick<Execution, 'stepId' | 'detail'>, steps: readonly Step[] = []): string | null {
  const detail = execution.detail ?? {};
  if (typeof detail.took === 'string') return `${detail.took === 'then' ? 'The condition held' : 'The condition did not hold'}: on to ${String(detail.to)}`;
  if (detail.outcome === 'matched') {
    const place = steps.findIndex((s) => s.id === execution.stepId);
    const step = steps[place];
    const to = step?.type === 'wait_for' ? (step.next ?? steps[place + 1]?.id) : undefined;
    return `Activity ${String(detail.activity ?? '')} ${String(detail.activityId ?? '')} came${to ? `: on to ${to}` : ''}`.replace(/\s+/g, ' ');
  }
  if (detail.outcome === 'timed_out') {
    const step = steps.find((s) => s.id === execution.stepId);
    return step?.type === 'wait_for' ? `Timed out: no ${step.activity} came in time; on to ${step.onTimeout}` : 'Timed out';
  }
  if (typeof detail.variant === 'string') return `Took variant ${detail.variant}${typeof detail.to === 'string' ? `: on to ${detail.to}` : ''}`;
  if (typeof detail.responseStatus === 'number') return `Answered ${detail.responseStatus}${typeof detail.durationMs === 'number' ? ` in ${detail.durationMs} ms` : ''}`;
  return null;
}
