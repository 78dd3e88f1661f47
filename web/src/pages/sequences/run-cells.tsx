import { When } from '../../components/when';
import { RunStatus } from './run-status';

// A run's status, start and end, as cells of a table row: the same in a contact's runs and in
// a sequence's.
export function RunCells({ run }: { run: { status: string; startedAt: string | null; completedAt: string | null } }) {
  return (
    <>
      <td>
        <RunStatus status={run.status} />
      </td>
      <td>
        <When iso={run.startedAt} />
      </td>
      <td>
        <When iso={run.completedAt} />
      </td>
    </>
  );
}
