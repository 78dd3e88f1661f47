import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ChannelPauseBanners } from '../../components/channel-pause-banner';
import { ErrorBanner } from '../../components/error-banner';
import { ItemPage } from '../../components/item-page';
import { usePageTitle } from '../../components/page-title';
import { None } from '../../components/none';
import { Pager } from '../../components/pager';
import { QueryState } from '../../components/query-state';
import { SelectField } from '../../components/select-field';
import { Table } from '../../components/table';
import { useCursorPages } from '../../components/use-cursor-pages';
import { When } from '../../components/when';
import { Link } from '../../router';
import { fieldErrors, trpc } from '../../trpc';
import { DeletePanel } from './delete-panel';
import { RunCells } from './run-cells';
import { RunStatus } from './run-status';
import { SEQUENCE_STATUSES, type SequenceStatus } from './sequence-statuses';
import { AnalyticsPanel } from './analytics-panel';
import { BuilderPanel } from './builder/builder-panel';
import { EntryForm, GoalForm } from './builder/entry-goal-forms';
import { ExitRulesForm, SendingWindowForm } from './builder/rules-forms';
import { VersionsPanel } from './builder/versions-panel';
import './sequences.css';

type Sequence = NonNullable<ReturnType<typeof useSequence>['data']>['sequence'];

const RUN_FILTER = [
  ['', 'Any'],
  ['pending', 'Pending'],
  ['running', 'Running'],
  ['paused', 'Paused'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
] as const;
type RunFilter = (typeof RUN_FILTER)[number][0];
const RUN_COLUMNS = ['Contact', 'Status', 'Started', 'Ended', 'Step', 'Run'];

function useSequence(id: string) {
  return useQuery(trpc.dashboard.sequences.get.queryOptions({ id }));
}

const LIST = { to: '/sequences', label: 'Sequences' };

export function SequencePage({ id }: { id: string }) {
  const query = useSequence(id);
  // Headed and titled by its name, archived or not, as a contact's page is by the contact's.
  usePageTitle(query.data?.sequence.name);
  return (
    <ItemPage query={query} loading="Loading the sequence…" list={LIST} crumb={({ sequence }) => sequence.name}>
      {({ sequence }) => (
        <>
          <ChannelPauseBanners sequenceId={sequence.id} />
          <Facts sequence={sequence} />
          {/* The steps first, where a marketer builds them; then how it goes and its settings. */}
          <BuilderPanel sequence={sequence} />
          <StatusPanel sequence={sequence} key={sequence.status} />
          <AnalyticsPanel sequence={sequence} />
          <div className="panels">
            <ExitRulesForm sequence={sequence} />
            <SendingWindowForm sequence={sequence} />
          </div>
          <div className="panels">
            <EntryForm sequence={sequence} />
            <GoalForm sequence={sequence} />
          </div>
          <VersionsPanel sequence={sequence} />
          <RunsPanel sequence={sequence} />
          <DeletePanel sequence={sequence} />
        </>
      )}
    </ItemPage>
  );
}

function Facts({ sequence }: { sequence: Sequence }) {
  return (
    <dl className="facts sequence-facts">
      <div>
        <dt>Name</dt>
        <dd>{sequence.name}</dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd>
          <RunStatus status={sequence.status} />
        </dd>
      </div>
      <div>
        <dt>Active runs</dt>
        <dd>{sequence.activeRuns.toLocaleString('en')}</dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd>
          <When iso={sequence.createdAt} />
        </dd>
      </div>
    </dl>
  );
}

function StatusPanel({ sequence }: { sequence: Sequence }) {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<SequenceStatus>(sequence.status);
  const change = useMutation(
    trpc.dashboard.sequences.setStatus.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.pathKey() }),
    }),
  );
  const errors = fieldErrors(change.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate({ id: sequence.id, status });
  };
  return (
    <section className="panel" aria-labelledby="status-heading">
      <h2 id="status-heading">Change status</h2>
      <form className="inline-form" onSubmit={submit} noValidate>
        <ErrorBanner error={change.error} />
        <SelectField label="New status" options={SEQUENCE_STATUSES} value={status} error={errors.status} onChange={(e) => setStatus(e.target.value as SequenceStatus)} />
        <button type="submit" disabled={change.isPending || status === sequence.status}>
          Change status
        </button>
      </form>
      <p className="hint">
        Only an active sequence accepts enrollments; runs already started go on in any status. An archived sequence leaves the Sequences list.
      </p>
    </section>
  );
}

function RunsPanel({ sequence }: { sequence: Sequence }) {
  const [status, setStatus] = useState<RunFilter>('');
  const pages = useCursorPages(status);
  const runs = useQuery({
    ...trpc.dashboard.sequences.runs.queryOptions({ id: sequence.id, limit: 25, cursor: pages.cursor, status: status || undefined }),
    placeholderData: keepPreviousData,
  });
  const ids = runs.data?.runs.map((run) => run.contactId) ?? [];
  const emails = useQuery({ ...trpc.dashboard.contacts.emails.queryOptions({ ids }), enabled: ids.length > 0, placeholderData: keepPreviousData });
  return (
    <section className="panel" aria-labelledby="runs-heading">
      <h2 id="runs-heading">Runs</h2>
      <SelectField label="Run status" options={RUN_FILTER} value={status} onChange={(e) => setStatus(e.target.value as RunFilter)} />
      <QueryState query={runs} loading="Loading runs…" isEmpty={(data) => data.runs.length === 0} empty={status ? 'No runs in this status.' : 'No runs yet.'}>
        {(data) => (
          <>
            <Table caption="Runs of this sequence, newest first" columns={RUN_COLUMNS}>
              {data.runs.map((run) => {
                const contact = emails.data?.emails[run.contactId] ?? `Contact ${run.contactId.slice(0, 8)}…`;
                return (
                  <tr key={run.id}>
                    <th scope="row">
                      <Link to={`/contacts/${run.contactId}`}>{contact}</Link>
                    </th>
                    <RunCells run={run} />
                    <StepCell run={run} currentVersion={sequence.version} />
                    <td>
                      {/* One click to the run's timeline, not three through its contact's page. */}
                      <Link to={`/runs/${run.id}`}>
                        Open the run<span className="visually-hidden"> of {contact}</span>
                      </Link>
                    </td>
                  </tr>
                );
              })}
            </Table>
            <Pager pages={pages} nextCursor={data.nextCursor} label="Runs" />
          </>
        )}
      </QueryState>
    </section>
  );
}

type ListedRun = { status: string; version: number | null; currentStepId: string | null; reason: string | null };

// Where the run is (its version too when it is not the current one); for a run the service
// ended, the step it stopped at and why.
function StepCell({ run, currentVersion }: { run: ListedRun; currentVersion: number | null }) {
  const ended = run.status === 'failed' || run.status === 'cancelled';
  const step = run.currentStepId && <code>{run.currentStepId}</code>;
  return (
    <td className="step-cell">
      {step && (ended ? <span className="sub">Stopped at {step}</span> : step)}
      {step && run.version !== null && run.version !== currentVersion && <span className="sub">version {run.version}</span>}
      {ended && run.reason && <span className={`sub reason ${run.status}`}>{run.reason}</span>}
      {!step && !(ended && run.reason) && <None />}
    </td>
  );
}
