import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { Pager } from '../../components/pager';
import { QueryState } from '../../components/query-state';
import { SelectField } from '../../components/select-field';
import { Table } from '../../components/table';
import { useCursorPages } from '../../components/use-cursor-pages';
import { When } from '../../components/when';
import { Link, navigate } from '../../router';
import { fieldErrors, trpc } from '../../trpc';
import { RunStatus } from './run-status';

export const SEQUENCE_STATUSES = [
  ['draft', 'Draft'],
  ['active', 'Active'],
  ['paused', 'Paused'],
  ['archived', 'Archived'],
] as const;
export type SequenceStatus = (typeof SEQUENCE_STATUSES)[number][0];
const COLUMNS = ['Name', 'Status', { label: 'Active runs', className: 'number' }, 'Created'];

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
          options={[['', 'All but archived'], ...SEQUENCE_STATUSES]}
          value={status}
          onChange={(e) => setStatus(e.target.value as SequenceStatus | '')}
        />
        <button type="button" onClick={() => setCreating(true)}>
          Create sequence
        </button>
      </div>
      <QueryState
        query={sequences}
        loading="Loading sequences…"
        isEmpty={(data) => data.sequences.length === 0}
        empty={
          status
            ? 'No sequences in this status.'
            : 'No sequences yet, but for any archived ones (choose Archived above to see those). Create one to enroll contacts in it.'
        }
      >
        {(data) => (
          <>
            <Table caption="Sequences, newest first" columns={COLUMNS}>
              {data.sequences.map((sequence) => (
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
            </Table>
            <Pager pages={pages} nextCursor={data.nextCursor} label="Sequences" />
          </>
        )}
      </QueryState>
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
  return (
    <FormDialog open={open} title="Create a sequence" submit="Create sequence" action={create} onSubmit={() => create.mutate({ name, status })} onClose={onClose}>
      <Field label="Name" required maxLength={255} value={name} error={errors.name} onChange={(e) => setName(e.target.value)} data-autofocus />
      <SelectField label="Status" options={SEQUENCE_STATUSES} value={status} error={errors.status} onChange={(e) => setStatus(e.target.value as SequenceStatus)} />
      <p className="hint">Only an active sequence accepts enrollments.</p>
    </FormDialog>
  );
}
