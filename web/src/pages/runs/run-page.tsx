import { useQuery } from '@tanstack/react-query';
import { ItemPage } from '../../components/item-page';
import { usePageTitle } from '../../components/page-title';
import { When } from '../../components/when';
import { Link } from '../../router';
import { trpc } from '../../trpc';
import { RunStatus } from '../sequences/run-status';
import type { Step } from '../sequences/step-words';
import { RunActions } from './run-actions';
import { ACTIVE_RUN, standingInWords } from './run-data';
import { RunTimeline } from './run-timeline';

const LIST = { to: '/sequences', label: 'Sequences' };

// A run's own page: where it stands, its buttons, and its timeline. An active run is read again
// every few seconds, so a person watching it sees its steps as the engine takes them.
export function useRunPage(id: string) {
  return useQuery({
    ...trpc.dashboard.runs.get.queryOptions({ id }),
    staleTime: 0,
    refetchInterval: (query) => (query.state.data && ACTIVE_RUN.has(query.state.data.run.status) ? 3_000 : false),
  });
}

export function RunPage({ id }: { id: string }) {
  const query = useRunPage(id);
  usePageTitle(query.data && `Run of ${query.data.sequenceName} for ${query.data.contactEmail}`);
  return (
    <ItemPage
      query={query}
      loading="Loading the run…"
      list={LIST}
      crumb={(data) => (
        <>
          <Link to={`/sequences/${data.run.sequenceId}`}>{data.sequenceName}</Link> / <span className="mono">{data.contactEmail}</span>
        </>
      )}
    >
      {(data) => {
        const standing = standingInWords(data.run, data.steps as Step[]);
        return (
          <>
            <section className="panel run-summary" aria-labelledby="run-heading">
              <div className="toolbar">
                <h2 id="run-heading">
                  Run <RunStatus status={data.run.status} />
                </h2>
                <RunActions run={data.run} label={`the run of ${data.contactEmail}`} />
              </div>
              <dl className="facts rules">
                <div>
                  <dt>Contact</dt>
                  <dd>
                    <Link to={`/contacts/${data.run.contactId}`} className="mono">
                      {data.contactEmail}
                    </Link>
                  </dd>
                </div>
                <div>
                  <dt>Sequence</dt>
                  <dd>
                    <Link to={`/sequences/${data.run.sequenceId}`}>{data.sequenceName}</Link>
                    {data.run.version !== null && <span className="meta"> version {data.run.version}</span>}
                  </dd>
                </div>
                <div>
                  <dt>Started</dt>
                  <dd>
                    <When iso={data.run.startedAt ?? data.run.createdAt} />
                  </dd>
                </div>
                {data.run.trigger && (
                  <div>
                    <dt>Entered by</dt>
                    <dd>
                      Activity {data.run.trigger.name} <code>{data.run.trigger.id}</code>
                    </dd>
                  </div>
                )}
                {standing && (
                  <div>
                    <dt>Now</dt>
                    <dd>
                      {standing}
                      {data.run.dueAt && data.run.waitingFor && (
                        <>
                          {' '}
                          until <When iso={data.run.dueAt} />
                        </>
                      )}
                    </dd>
                  </div>
                )}
              </dl>
            </section>
            <section aria-labelledby="timeline-heading">
              <h2 id="timeline-heading">Timeline</h2>
              <RunTimeline data={data} headingLevel={3} />
            </section>
          </>
        );
      }}
    </ItemPage>
  );
}
