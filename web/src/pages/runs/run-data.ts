import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../../src/routers/app-router';

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
};

// Where the run stands, in a sentence; null when its status says it all.
export function standingInWords(run: RunDetail): string | null {
  if (run.retry) return null;
  if (run.status === 'paused') return `Paused at step ${run.currentStepId ?? '—'}.`;
  if (!ACTIVE_RUN.has(run.status)) return null;
  if (run.waitingFor && WAITING[run.waitingFor]) return `${WAITING[run.waitingFor]} at step ${run.currentStepId}`;
  return run.currentStepId ? `At step ${run.currentStepId}, due now.` : null;
}
