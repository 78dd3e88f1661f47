import { When } from '../../components/when';
import { PartsText, safeParts } from '../sequences/step-text';
import type { Step } from '../sequences/step-words';
import type { TemplatePart } from '../sequences/template-words';
import { RunStatus } from '../sequences/run-status';
import { MessageAsSent } from './message-as-sent';
import { executionDetailInWords, type RunPageData } from './run-data';
import './runs.css';

const OUTCOME: Record<string, string> = { running: 'pending', paused: 'expired', succeeded: 'active', failed: 'failed', skipped: 'disabled' };

// The step under way of a paused run is not going on: it says Paused, as the run's badge does.
function executionStatus(execution: { status: string }, run: { status: string }): string {
  return execution.status === 'running' && run.status === 'paused' ? 'paused' : execution.status;
}

// What a step does, in words; a webhook step by its endpoint's URL, or saying that the endpoint
// is gone (its calls then fail at once).
function stepWords(step: Step | undefined, endpoints: RunPageData['endpoints']): { parts: TemplatePart[]; gone: boolean } {
  if (!step) return { parts: [{ text: 'A step of an older version' }], gone: false };
  if (step.type === 'webhook') {
    const url = endpoints[step.endpointId.toLowerCase()];
    return url ? { parts: [{ text: `POST to ${url}` }], gone: false } : { parts: [{ text: `POST to webhook endpoint ${step.endpointId}, which no longer exists` }], gone: true };
  }
  return { parts: safeParts(step, { window: null }), gone: false };
}

// A run's timeline: every step execution, oldest first, each with its time, outcome and reason,
// and the message its visit sent, shown once. A run that is retrying says so above it.
export function RunTimeline({ data, headingLevel = 2 }: { data: RunPageData; headingLevel?: 2 | 3 }) {
  const { run } = data;
  const steps = new Map((data.steps as Step[]).map((step) => [step.id, step]));
  const shown = new Set<string>();
  // A message's failure is said once, in its Delivery line: its step's reason and the run's
  // end, when they only repeat it, are left out.
  const said: string[] = [];
  const repeats = (reason: string | null) => reason !== null && said.some((text) => reason.includes(text));
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  return (
    <div className="timeline-wrap">
      {run.retry && (
        <div className="banner warning retrying" role="status">
          <strong>Retrying step {run.currentStepId}</strong>: {run.retry.attempts} failed attempt{run.retry.attempts === 1 ? '' : 's'}. Last error:{' '}
          <span className="mono">{run.retry.lastError ?? 'unknown'}</span>.{' '}
          {run.retry.nextAttemptAt ? (
            <>
              Next attempt <When iso={run.retry.nextAttemptAt} />.
            </>
          ) : run.status === 'paused' ? (
            'The next attempt waits for the run to be resumed.'
          ) : run.waitingFor === 'sequence_paused' ? (
            'The next attempt waits for the sequence to be active again.'
          ) : run.waitingFor === 'channel_paused' ? (
            'The next attempt waits for its channel to resume (see the banner on the sequence page).'
          ) : (
            'An attempt is under way.'
          )}
        </div>
      )}
      <Heading className="visually-hidden">Steps taken</Heading>
      {run.executions.length === 0 ? (
        <p className="empty">No step has been carried out yet{run.dueAt ? '' : '.'}{run.dueAt && <> : the first is due <When iso={run.dueAt} />.</>}</p>
      ) : (
        <ol className="timeline">
          {run.executions.map((execution, i) => {
            const words = stepWords(steps.get(execution.stepId), data.endpoints);
            const message = execution.message && !shown.has(execution.message.id) ? execution.message : null;
            if (message) shown.add(message.id);
            if (message?.status === 'failed' && message.error) said.push(message.error);
            const reason = repeats(execution.reason) ? null : execution.reason;
            const detail = executionDetailInWords(execution, data.steps as Step[]);
            const status = executionStatus(execution, run);
            return (
              <li key={`${execution.stepId}-${i}`} className={`event ${status}`}>
                <div className="event-head">
                  <span className="step-id">{execution.stepId}</span>
                  <span className={`badge ${OUTCOME[status] ?? 'disabled'}`}>{status[0].toUpperCase() + status.slice(1)}</span>
                  {execution.attempt > 1 && <span className="meta">attempt {execution.attempt}</span>}
                  <span className="meta event-time">
                    <When iso={execution.startedAt} />
                    {execution.endsAt && (
                      <>
                        {' '}
                        – waits until <When iso={execution.endsAt} />
                      </>
                    )}
                  </span>
                </div>
                <p className={`event-what${words.gone ? ' gone' : ''}`}>
                  <PartsText parts={words.parts} />
                </p>
                {reason && <p className="event-reason">{reason}</p>}
                {detail && <p className="meta">{detail}</p>}
                {message && <MessageAsSent message={message} content={data.contents[message.id]} />}
              </li>
            );
          })}
        </ol>
      )}
      {!['pending', 'running', 'paused'].includes(run.status) && (
        <p className="timeline-end">
          <RunStatus status={run.status} /> <When iso={run.completedAt} />
          {run.reason && !repeats(run.reason) && <span className="event-reason"> {run.reason}</span>}
        </p>
      )}
    </div>
  );
}
