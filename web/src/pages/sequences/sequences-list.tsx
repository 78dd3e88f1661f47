import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { None } from '../../components/none';
import { Pager } from '../../components/pager';
import { QueryState } from '../../components/query-state';
import { SelectField } from '../../components/select-field';
import { Table } from '../../components/table';
import { useCursorPages } from '../../components/use-cursor-pages';
import { When } from '../../components/when';
import { Link, navigate } from '../../router';
import { fieldErrors, trpc } from '../../trpc';
import { EXAMPLE_SEQUENCE } from './example-sequence';
import { RunStatus } from './run-status';
import { SEQUENCE_STATUSES, type SequenceStatus } from './sequence-statuses';
import './sequences.css';

export { SEQUENCE_STATUSES, type SequenceStatus } from './sequence-statuses';

// The figures' headings wrap (two short lines) and the actions keep to their buttons' width:
// the whole table, Actions included, fits beside the menu at 1280 px.
const COLUMNS = [
  'Name',
  'Status',
  { label: 'Version', className: 'number' },
  { label: 'Active runs', className: 'number wrap-heading' },
  { label: 'Completed, 7 days', className: 'number wrap-heading' },
  { label: 'Messages sent, 7 days', className: 'number wrap-heading' },
  'Created',
  { label: 'Actions', className: 'actions-cell' },
];

type Listed = { id: string; name: string; status: SequenceStatus };

// What a row offers, by status: the statuses the list can move a sequence to.
const ROW_ACTIONS: Record<SequenceStatus, ReadonlyArray<readonly [label: string, to: SequenceStatus]>> = {
  draft: [['Activate', 'active'], ['Archive', 'archived']],
  active: [['Pause', 'paused'], ['Archive', 'archived']],
  paused: [['Resume', 'active'], ['Archive', 'archived']],
  archived: [['Restore as paused', 'paused']],
};

export function SequencesPage() {
  const [status, setStatus] = useState<SequenceStatus | ''>('');
  const [creating, setCreating] = useState(false);
  const [archiving, setArchiving] = useState<Listed | null>(null);
  const pages = useCursorPages(status);
  const queryClient = useQueryClient();
  const sequences = useQuery({
    ...trpc.dashboard.sequences.list.queryOptions({ limit: 25, cursor: pages.cursor, status: status || undefined }),
    placeholderData: keepPreviousData,
  });
  // The page's 7-day figures, read from the analytics counters in one call (docs/analytics.md).
  const ids = sequences.data?.sequences.map((sequence) => sequence.id) ?? [];
  const activity = useQuery({ ...trpc.dashboard.sequences.activity.queryOptions({ ids }), enabled: ids.length > 0, placeholderData: keepPreviousData });
  const recent = new Map((activity.data?.sequences ?? []).map((figures) => [figures.sequenceId, figures]));
  const changed = () => queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.pathKey() });
  const setSequenceStatus = useMutation(trpc.dashboard.sequences.setStatus.mutationOptions({ onSuccess: changed }));
  const example = useMutation(
    trpc.dashboard.sequences.create.mutationOptions({
      onSuccess: ({ sequence }) => {
        void changed();
        navigate(`/sequences/${sequence.id}`);
      },
    }),
  );
  const act = (sequence: Listed, to: SequenceStatus) => {
    if (to === 'archived') setArchiving(sequence);
    else setSequenceStatus.mutate({ id: sequence.id, status: to });
  };
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
      {!archiving && <ErrorBanner error={setSequenceStatus.error} />}
      <QueryState
        query={sequences}
        loading="Loading sequences…"
        isEmpty={(data) => data.sequences.length === 0 && Boolean(status)}
        empty="No sequences in this status."
      >
        {(data) =>
          data.sequences.length === 0 ? (
            <div className="empty teach">
              <p>
                No sequences yet{' '}
                <span className="sub">(archived ones are left out: choose Archived above to see those).</span>
              </p>
              <p>
                A sequence sends a contact through steps: waits, emails, WhatsApp messages, tags, webhooks and branches. Start from an example
                and change it in the builder: a welcome email, then two days later a nudge to whoever has not bought yet.
              </p>
              <ErrorBanner error={example.error} />
              <button type="button" disabled={example.isPending} onClick={() => example.mutate(EXAMPLE_SEQUENCE)}>
                Create the example “Welcome” sequence
              </button>
              <p className="hint">It is made as a draft: nothing is sent until you activate it.</p>
            </div>
          ) : (
            <>
              <Table caption="Sequences, newest first" columns={COLUMNS} busy={setSequenceStatus.isPending}>
                {data.sequences.map((sequence) => (
                  <tr key={sequence.id}>
                    <th scope="row" className="wrap">
                      <Link to={`/sequences/${sequence.id}`}>{sequence.name}</Link>
                      {/* On a phone the actions sit under the name, where they are seen without scrolling the table. */}
                      <RowActions sequence={sequence} className="under-name" disabled={setSequenceStatus.isPending} onAct={act} />
                    </th>
                    <td>
                      <RunStatus status={sequence.status} />
                    </td>
                    <td className="number">{sequence.version ?? <None />}</td>
                    <td className="number">{sequence.activeRuns.toLocaleString('en')}</td>
                    <RecentCells figures={recent.get(sequence.id)} />
                    <td>
                      <When iso={sequence.createdAt} />
                    </td>
                    <td className="actions-cell">
                      <RowActions sequence={sequence} className="" disabled={setSequenceStatus.isPending} onAct={act} />
                    </td>
                  </tr>
                ))}
              </Table>
              <Pager pages={pages} nextCursor={data.nextCursor} label="Sequences" />
            </>
          )
        }
      </QueryState>
      <CreateSequenceDialog open={creating} onClose={() => setCreating(false)} />
      <ConfirmDialog
        open={archiving !== null}
        title={`Archive ${archiving?.name ?? ''}?`}
        confirm="Archive"
        action={setSequenceStatus}
        onConfirm={() => archiving && setSequenceStatus.mutate({ id: archiving.id, status: 'archived' }, { onSuccess: () => setArchiving(null) })}
        onClose={() => setArchiving(null)}
      >
        It leaves this list (choose Archived above to see it again) and accepts no enrollments; its active runs wait, without acting, until it
        is active again.
      </ConfirmDialog>
    </>
  );
}

function RowActions({ sequence, className, disabled, onAct }: { sequence: Listed; className: string; disabled: boolean; onAct: (sequence: Listed, to: SequenceStatus) => void }) {
  return (
    <div className={`row-actions ${className}`}>
      {ROW_ACTIONS[sequence.status].map(([label, to]) => (
        <button key={to} type="button" className={to === 'archived' ? 'secondary' : ''} disabled={disabled} aria-label={`${label} ${sequence.name}`} onClick={() => onAct(sequence, to)}>
          {label}
        </button>
      ))}
    </div>
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

// Runs completed and messages sent in the last 7 days; a dash until the figures arrive.
function RecentCells({ figures }: { figures: { runsCompleted: number; messagesSent: number } | undefined }) {
  return (
    <>
      <td className="number">{figures ? figures.runsCompleted.toLocaleString('en') : <None />}</td>
      <td className="number">{figures ? figures.messagesSent.toLocaleString('en') : <None />}</td>
    </>
  );
}
