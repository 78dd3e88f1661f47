import { QueryState } from '../../components/query-state';
import { Link } from '../../router';
import { RunActions } from './run-actions';
import { useRunPage } from './run-page';
import { RunTimeline } from './run-timeline';

// A run's timeline inside a list of runs (a contact's): loaded when opened, with its buttons
// and the way to the run's own page.
export function RunTimelinePanel({ id, label }: { id: string; label: string }) {
  const query = useRunPage(id);
  return (
    <QueryState query={query} loading="Loading the timeline…">
      {(data) => (
        <div className="run-inline">
          <div className="toolbar">
            <Link to={`/runs/${id}`}>Open the run’s page<span className="visually-hidden"> ({label})</span></Link>
            <RunActions run={data.run} label={label} />
          </div>
          <RunTimeline data={data} headingLevel={3} />
        </div>
      )}
    </QueryState>
  );
}
