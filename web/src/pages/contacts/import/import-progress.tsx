import { useMutation, useQuery } from '@tanstack/react-query';
import { ErrorBanner } from '../../../components/error-banner';
import { QueryState } from '../../../components/query-state';
import { Link } from '../../../router';
import { queryClient, trpc } from '../../../trpc';

const STATUS_WORDS: Record<string, string> = {
  queued: 'Waiting to start',
  running: 'Importing',
  completed: 'Completed',
  failed: 'Stopped',
  cancelled: 'Cancelled',
};
const MOVING = new Set(['queued', 'running']);
const BADGE: Record<string, string> = { queued: 'pending', running: 'pending', completed: 'active', failed: 'failed', cancelled: 'disabled' };

// One import as the background worker moves it, asked again every second until it ends.
export function ImportProgress({ id }: { id: string }) {
  const options = trpc.dashboard.contacts.imports.get.queryOptions({ id });
  const query = useQuery({ ...options, refetchInterval: (q) => (q.state.data && !MOVING.has(q.state.data.import.status) ? false : 1_000) });
  const cancel = useMutation(
    trpc.dashboard.contacts.imports.cancel.mutationOptions({ onSuccess: (data) => queryClient.setQueryData(options.queryKey, data) }),
  );
  return (
    <QueryState query={query} loading="Loading the import…" afterError={<Link to="/contacts/import">Import a file</Link>}>
      {({ import: found }) => {
        const moving = MOVING.has(found.status);
        const percent = found.rows === 0 ? 100 : Math.floor((found.processed / found.rows) * 100);
        return (
          <section className="panel import-progress" aria-labelledby="import-heading">
            <h2 id="import-heading">{found.fileName ?? 'Import'}</h2>
            <p>
              Status: <span className={`badge ${BADGE[found.status] ?? ''}`}>{STATUS_WORDS[found.status] ?? found.status}</span>
            </p>
            <label htmlFor="import-bar">
              {found.processed.toLocaleString('en')} of {found.rows.toLocaleString('en')} rows ({percent} %)
            </label>
            <progress id="import-bar" max={Math.max(found.rows, 1)} value={found.rows === 0 ? 1 : found.processed} />
            <dl className="import-counts" aria-label="Rows">
              <div>
                <dt>Inserted</dt>
                <dd>{found.inserted.toLocaleString('en')}</dd>
              </div>
              <div>
                <dt>Updated</dt>
                <dd>{found.updated.toLocaleString('en')}</dd>
              </div>
              <div>
                <dt>Failed</dt>
                <dd>{found.failed.toLocaleString('en')}</dd>
              </div>
              {found.sequenceId && (
                <div>
                  <dt>Enrolled</dt>
                  <dd>{found.enrolled.toLocaleString('en')}</dd>
                </div>
              )}
            </dl>
            {found.error && (
              <p className="banner error" role="alert">
                {found.error}
              </p>
            )}
            <ErrorBanner error={cancel.error} />
            <div className="actions">
              {moving && (
                <button type="button" className="secondary" disabled={cancel.isPending} onClick={() => cancel.mutate({ id })}>
                  Cancel import
                </button>
              )}
              {found.failed > 0 && (
                // A plain download: the session cookie goes with it.
                <a className="button" href={`/trpc/dashboard.contacts.imports.errorsCsv?id=${encodeURIComponent(found.id)}`} download>
                  Download rejected rows (CSV)
                </a>
              )}
              {!moving && <Link to="/contacts/import">Import another file</Link>}
              <Link to="/contacts">Back to contacts</Link>
            </div>
          </section>
        );
      }}
    </QueryState>
  );
}
