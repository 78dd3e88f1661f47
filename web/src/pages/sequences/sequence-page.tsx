import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Pager } from '../../components/pager';
import { SelectField } from '../../components/select-field';
import { useCursorPages } from '../../components/use-cursor-pages';
import { When } from '../../components/when';
import { Link } from '../../router';
import { errorMessage, fieldErrors, trpc } from '../../trpc';
import { RunStatus } from './run-status';
import { SEQUENCE_STATUSES, type SequenceStatus } from './sequences-list';

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

function useSequence(id: string) {
  return useQuery(trpc.dashboard.sequences.get.queryOptions({ id }));
}

export function SequencePage({ id }: { id: string }) {
  const sequence = useSequence(id);
  if (sequence.isPending) return <p role="status">Loading the sequence…</p>;
  if (sequence.isError) {
    return (
      <>
        <p role="alert" className="banner error">
          {errorMessage(sequence.error)}
        </p>
        <Link to="/sequences">Back to sequences</Link>
      </>
    );
  }
  const s = sequence.data.sequence;
  return (
    <>
      <p className="crumbs">
        <Link to="/sequences">Sequences</Link> / {s.name}
      </p>
      <div className="panels">
        <dl className="facts">
          <div>
            <dt>Name</dt>
            <dd>{s.name}</dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd>
              <RunStatus status={s.status} />
            </dd>
          </div>
          <div>
            <dt>Active runs</dt>
            <dd>{s.activeRuns.toLocaleString('en')}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>
              <When iso={s.createdAt} />
            </dd>
          </div>
        </dl>
        <StatusPanel sequence={s} key={s.status} />
      </div>
      <RunsPanel sequence={s} />
    </>
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
        {change.isError && (
          <p className="banner error" role="alert">
            {errorMessage(change.error)}
          </p>
        )}
        <SelectField label="New status" options={SEQUENCE_STATUSES} value={status} error={errors.status} onChange={(e) => setStatus(e.target.value as SequenceStatus)} />
        <button type="submit" disabled={change.isPending || status === sequence.status}>
          Change status
        </button>
      </form>
      <p className="hint">Only an active sequence accepts enrollments; runs already started go on in any status.</p>
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
      {runs.isPending && <p role="status">Loading runs…</p>}
      {runs.isError && (
        <p role="alert" className="banner error">
          {errorMessage(runs.error)}
        </p>
      )}
      {runs.isSuccess && runs.data.runs.length === 0 && <p className="empty">{status ? 'No runs in this status.' : 'No runs yet.'}</p>}
      {runs.isSuccess && runs.data.runs.length > 0 && (
        <>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Runs of this sequence, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Contact</th>
                  <th scope="col">Status</th>
                  <th scope="col">Started</th>
                  <th scope="col">Ended</th>
                </tr>
              </thead>
              <tbody>
                {runs.data.runs.map((run) => (
                  <tr key={run.id}>
                    <th scope="row">
                      <Link to={`/contacts/${run.contactId}`}>{emails.data?.emails[run.contactId] ?? `Contact ${run.contactId.slice(0, 8)}…`}</Link>
                    </th>
                    <td>
                      <RunStatus status={run.status} />
                    </td>
                    <td>
                      <When iso={run.startedAt} />
                    </td>
                    <td>
                      <When iso={run.completedAt} none="—" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager pages={pages} nextCursor={runs.data.nextCursor} label="Runs" />
        </>
      )}
    </section>
  );
}
