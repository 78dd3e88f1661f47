import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { Pager } from '../../../components/pager';
import { QueryState } from '../../../components/query-state';
import { Table } from '../../../components/table';
import { useCursorPages } from '../../../components/use-cursor-pages';
import { Link } from '../../../router';
import { trpc } from '../../../trpc';
import { EnrollDialog } from '../../sequences/enroll-dialog';
import { RunCells } from '../../sequences/run-cells';
import type { Contact } from './contact';
import { UnenrollDialog, type Leaving } from './unenroll-dialog';

// The timeline's code comes with the first one opened.
const RunTimelinePanel = lazy(() => import('../../runs/run-timeline-panel').then((module) => ({ default: module.RunTimelinePanel })));

const ACTIVE = new Set(['pending', 'running', 'paused']);
const COLUMNS = ['Sequence', 'Status', 'Started', 'Ended', { label: 'Actions', hidden: true }];

export function RunsPanel({ contact }: { contact: Contact }) {
  const pages = useCursorPages(contact.id);
  const runs = useQuery({
    ...trpc.dashboard.contacts.runs.queryOptions({ id: contact.id, limit: 20, cursor: pages.cursor }),
    placeholderData: keepPreviousData,
  });
  // The runs' sequences by name, archived ones too (the Sequences list leaves those out).
  const ids = [...new Set(runs.data?.runs.map((run) => run.sequenceId) ?? [])];
  const sequences = useQuery({ ...trpc.dashboard.sequences.names.queryOptions({ ids }), enabled: ids.length > 0, placeholderData: keepPreviousData });
  const names = new Map(Object.entries(sequences.data?.names ?? {}));
  const [leaving, setLeaving] = useState<Leaving | null>(null);
  const [enrolling, setEnrolling] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section className="panel" aria-labelledby="runs-heading">
      <div className="toolbar">
        <h2 id="runs-heading">Runs</h2>
        <button type="button" onClick={() => setEnrolling(true)}>
          Enroll in a sequence
        </button>
      </div>
      <QueryState query={runs} loading="Loading runs…" isEmpty={(data) => data.runs.length === 0} empty="This contact has never been enrolled in a sequence.">
        {(data) => (
          <>
            <Table caption="Runs of this contact, newest first" columns={COLUMNS}>
              {data.runs.map((run) => {
                const name = names.get(run.sequenceId) ?? 'Sequence';
                const shown = open === run.id;
                return (
                  <tr key={run.id}>
                    <th scope="row">
                      <Link to={`/sequences/${run.sequenceId}`}>{name}</Link>
                    </th>
                    <RunCells run={run} />
                    <td className="row-actions">
                      <button type="button" className="secondary" aria-expanded={shown} aria-controls={`timeline-${run.id}`} onClick={() => setOpen(shown ? null : run.id)}>
                        Timeline<span className="visually-hidden"> of the run in {name}</span>
                      </button>
                      {ACTIVE.has(run.status) && (
                        <button type="button" className="secondary" onClick={() => setLeaving({ sequenceId: run.sequenceId, name })}>
                          Unenroll<span className="visually-hidden"> from {name}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </Table>
            <Pager pages={pages} nextCursor={data.nextCursor} label="Runs" />
            {/* Below the table, not in it: a timeline is as wide as the panel, whatever the
                table's columns need on a narrow screen. */}
            {data.runs
              .filter((run) => run.id === open)
              .map((run) => {
                const name = names.get(run.sequenceId) ?? 'Sequence';
                return (
                  <section className="run-inline-panel" id={`timeline-${run.id}`} key={run.id} aria-labelledby={`timeline-heading-${run.id}`}>
                    <h3 id={`timeline-heading-${run.id}`}>Timeline of the run in {name}</h3>
                    <Suspense fallback={<p role="status">Loading the timeline…</p>}>
                      <RunTimelinePanel id={run.id} label={`the run in ${name}`} />
                    </Suspense>
                  </section>
                );
              })}
          </>
        )}
      </QueryState>
      <UnenrollDialog contact={contact} leaving={leaving} onClose={() => setLeaving(null)} />
      <EnrollDialog open={enrolling} contacts={[{ id: contact.id, email: contact.email }]} onClose={() => setEnrolling(false)} />
    </section>
  );
}
