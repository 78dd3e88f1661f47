import { useQuery } from '@tanstack/react-query';
import { ErrorBanner } from '../../components/error-banner';
import { trpc } from '../../trpc';
import { entryInWords, exitRulesInWords, goalInWords, stepInWords, windowInWords, type Sequence, type Step } from './step-words';

type Position = { version: number | null; stepId: string | null; activeRuns: number };

// The sequence's current steps in order, what each does in words and how many active runs are
// at it now; the runs still on older versions apart; then the rules that apply to every run.
export function StepsPanel({ sequence }: { sequence: Sequence }) {
  const steps = sequence.steps as Step[];
  const positions = useQuery(trpc.dashboard.sequences.positions.queryOptions({ id: sequence.id }));
  const hasWebhook = steps.some((step) => step.type === 'webhook');
  const webhooks = useQuery({ ...trpc.dashboard.webhooks.list.queryOptions(), enabled: hasWebhook });
  const webhookUrl = (id: string) => webhooks.data?.webhooks.find((webhook) => webhook.id === id)?.url;
  const all = positions.data?.positions ?? [];
  const atStep = (stepId: string) => all.find((p) => p.version === sequence.version && p.stepId === stepId)?.activeRuns ?? 0;
  const stepIds = new Set(steps.map((step) => step.id));
  // Runs of a sequence without steps have no position to show: the facts count them.
  const elsewhere = all.filter((p) => !(p.version === sequence.version && p.stepId !== null && stepIds.has(p.stepId)) && !(p.version === null && sequence.version === null));
  return (
    <section className="panel" aria-labelledby="steps-heading">
      <h2 id="steps-heading">Steps</h2>
      {steps.length === 0 ? (
        <p>No steps: the runner moves this sequence&apos;s runs from outside, through the API.</p>
      ) : (
        <>
          <p className="meta">
            Version {sequence.version}, {steps.length} {steps.length === 1 ? 'step' : 'steps'}, with the active runs at each now.
          </p>
          <ol className="steps">
            {steps.map((step, i) => (
              <li key={step.id}>
                <span className="step-number" aria-hidden="true">
                  {i + 1}
                </span>
                <span className="step-body">
                  <code className="step-id">{step.id}</code>
                  <span className="step-what">{stepInWords(step, { window: sequence.sendingWindow, webhookUrl })}</span>
                  {step.type === 'webhook' && webhookUrl(step.endpointId) && <span className="step-detail">Endpoint {step.endpointId}</span>}
                </span>
                <RunCount count={positions.isSuccess ? atStep(step.id) : undefined} />
              </li>
            ))}
          </ol>
        </>
      )}
      <ErrorBanner error={positions.error} />
      {elsewhere.length > 0 && (
        <>
          <h3>Active runs on other versions</h3>
          <ul className="steps elsewhere">
            {elsewhere.map((p) => (
              <li key={`${p.version}:${p.stepId}`}>
                <span className="step-body">
                  <span className="step-what">
                    <PositionInWords position={p} />
                  </span>
                </span>
                <RunCount count={p.activeRuns} />
              </li>
            ))}
          </ul>
        </>
      )}
      <dl className="facts rules">
        <div>
          <dt>Entry</dt>
          <dd>{entryInWords(sequence.entry)}</dd>
        </div>
        {sequence.goal && (
          <div>
            <dt>Goal</dt>
            <dd>{goalInWords(sequence.goal)}</dd>
          </div>
        )}
        <div>
          <dt>Exit rules</dt>
          <dd>{exitRulesInWords(sequence.exitWhen)}</dd>
        </div>
        {(steps.length > 0 || sequence.sendingWindow) && (
          <div>
            <dt>Sending window</dt>
            <dd>{windowInWords(sequence.sendingWindow)}</dd>
          </div>
        )}
      </dl>
    </section>
  );
}

function PositionInWords({ position }: { position: Position }) {
  const version = position.version === null ? 'Without a version (moved from outside)' : `Version ${position.version}`;
  if (position.stepId === null) return <>{version}</>;
  return (
    <>
      {version}, at step <code>{position.stepId}</code>
    </>
  );
}

function RunCount({ count }: { count: number | undefined }) {
  if (count === undefined) return <span className="step-runs none">Counting…</span>;
  return <span className={count === 0 ? 'step-runs none' : 'step-runs'}>{count === 0 ? 'No active runs' : `${count.toLocaleString('en')} active ${count === 1 ? 'run' : 'runs'}`}</span>;
}
