import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Dialog } from '../../components/dialog';
import { Field } from '../../components/field';
import { Pager } from '../../components/pager';
import { SelectField } from '../../components/select-field';
import { useCursorPages } from '../../components/use-cursor-pages';
import { When } from '../../components/when';
import { Link, navigate } from '../../router';
import { errorMessage, fieldErrors, trpc } from '../../trpc';
import { RunStatus } from './run-status';

export const SEQUENCE_STATUSES = [
  ['draft', 'Draft'],
  ['active', 'Active'],
  ['paused', 'Paused'],
  ['archived', 'Archived'],
] as const;
export type SequenceStatus = (typeof SEQUENCE_STATUSES)[number][0];

export function SequencesPage() {
  const [status, setStatus] = useState<SequenceStatus | ''>('');
  const [creating, setCreating] = useState(false);
  const pages = useCursorPages(status);
  const sequences = useQuery({
    ...trpc.dashboard.sequences.list.queryOptions({ limit: 25, cursor: pages.cursor, status: status || undefined }),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <div className="toolbar">
        <SelectField
          label="Show sequences"
          options={[['', 'In any status'], ...SEQUENCE_STATUSES]}
          value={status}
          onChange={(e) => setStatus(e.target.value as SequenceStatus | '')}
        />
        <button type="button" onClick={() => setCreating(true)}>
          Create sequence
        </button>
      </div>
      {sequences.isPending && <p role="status">Loading sequences…</p>}
      {sequences.isError && (
        <p role="alert" className="banner error">
          {errorMessage(sequences.error)}
        </p>
      )}
      {sequences.isSuccess && sequences.data.sequences.length === 0 && (
        <p className="empty">{status ? 'No sequences in this status.' : 'No sequences yet. Create one to enroll contacts in it.'}</p>
      )}
      {sequences.isSuccess && sequences.data.sequences.length > 0 && (
        <>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Sequences, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="number">Active runs</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {sequences.data.sequences.map((sequence) => (
                  <tr key={sequence.id}>
                    <th scope="row">
                      <Link to={`/sequences/${sequence.id}`}>{sequence.name}</Link>
                    </th>
                    <td>
                      <RunStatus status={sequence.status} />
                    </td>
                    <td className="number">{sequence.activeRuns.toLocaleString('en')}</td>
                    <td>
                      <When iso={sequence.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager pages={pages} nextCursor={sequences.data.nextCursor} label="Sequences" />
        </>
      )}
      <CreateSequenceDialog open={creating} onClose={() => setCreating(false)} />
    </>
  );
}

function CreateSequenceDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [status, setStatus] = useState<SequenceStatus>('draft');
  const create = useMutation(
    trpc.dashboard.sequences.create.mutationOptions({
      onSuccess: ({ sequence }) => {
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.list.queryKey() });
        setName('');
        setStatus('draft');
        create.reset();
        onClose();
        navigate(`/sequences/${sequence.id}`);
      },
    }),
  );
  const errors = fieldErrors(create.error);
  const close = () => {
    create.reset();
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ name, status });
  };
  return (
    <Dialog open={open} title="Create a sequence" onClose={close}>
      <form onSubmit={submit} noValidate>
        {create.isError && (
          <p className="banner error" role="alert">
            {errorMessage(create.error)}
          </p>
        )}
        <Field label="Name" required maxLength={255} value={name} error={errors.name} onChange={(e) => setName(e.target.value)} data-autofocus />
        <SelectField
          label="Status"
          options={SEQUENCE_STATUSES}
          value={status}
          error={errors.status}
          onChange={(e) => setStatus(e.target.value as SequenceStatus)}
        />
        <p className="hint">Only an active sequence accepts enrollments.</p>
        <div className="actions">
          <button type="button" className="secondary" onClick={close}>
            Cancel
          </button>
          <button type="submit" disabled={create.isPending}>
            Create sequence
          </button>
        </div>
      </form>
    </Dialog>
  );
}
