import { useState } from 'react';
import { Dialog } from '../../../components/dialog';
import { ErrorBanner } from '../../../components/error-banner';
import type { MutationState } from '../../../components/mutation-state';
import { SelectField } from '../../../components/select-field';
import { Table } from '../../../components/table';
import { fieldErrors } from '../../../trpc';
import type { Sequence, Step } from '../step-words';

// Saving the steps of a sequence that has active runs: a new version will be made; where the
// runs are now (dashboard.sequences.positions: one grouped count by version and step); and
// where each old step's runs would go on the new version (the API's moveRuns.stepMap), filled
// in by step id and editable, each choice saying what its runs will do there (a wait kept, or
// started again). Confirm to move them, or keep them on their version.

export type Position = { version: number | null; stepId: string | null; activeRuns: number };

export function LiveSaveDialog({
  sequence,
  steps,
  positions,
  action,
  onConfirm,
  onClose,
}: {
  sequence: Sequence;
  steps: readonly Step[];
  positions: readonly Position[];
  action: MutationState;
  onConfirm: (stepMap: Record<string, string> | null) => void;
  onClose: () => void;
}) {
  const newIds = new Set(steps.map((step) => step.id));
  const oldIds = [...new Set(positions.flatMap((p) => (p.stepId === null ? [] : [p.stepId])))];
  const [map, setMap] = useState<Record<string, string>>(() => Object.fromEntries(oldIds.map((id) => [id, newIds.has(id) ? id : ''])));
  const total = positions.reduce((sum, p) => sum + p.activeRuns, 0);
  const unplaced = oldIds.filter((id) => !map[id]);
  const nextVersion = (sequence.version ?? 0) + 1;
  const options: Array<readonly [string, string]> = [['', 'Choose a step'], ...steps.map((step, i) => [step.id, `${i + 1}. ${step.id}`] as const)];
  const otherDetails = Object.entries(fieldErrors(action.error)).filter(([path]) => !path.startsWith('steps.'));
  return (
    <Dialog open title={`Save as version ${nextVersion}?`} onClose={onClose}>
      <p>
        This sequence has {total.toLocaleString('en')} active {total === 1 ? 'run' : 'runs'}. Saving makes a new version, <strong>version {nextVersion}</strong>;
        new runs start on it. The runs below stay on the version they started on, unless you move them.
      </p>
      <Table caption="Active runs now, by version and step" columns={['Version', 'At step', { label: 'Active runs', className: 'number' }]}>
        {positions.map((p) => (
          <tr key={`${p.version}:${p.stepId}`}>
            <th scope="row">{p.version === null ? 'None (moved from outside)' : `Version ${p.version}${p.version === sequence.version ? ' (current)' : ''}`}</th>
            <td>{p.stepId === null ? 'No step: goes to the first step' : <code>{p.stepId}</code>}</td>
            <td className="number">{p.activeRuns.toLocaleString('en')}</td>
          </tr>
        ))}
      </Table>
      <h3>Move runs to version {nextVersion}</h3>
      <p className="hint">
        Each old step&apos;s runs go to the step chosen here and start it afresh, but for a wait: runs moved to the same wait (the same duration) keep its end, and
        runs moved to a changed wait start it again from the save. Filled in by step id.
      </p>
      <div className="step-map">
        {oldIds.map((id) => {
          const outcome = map[id] ? moveOutcome(sequence.steps.find((step) => step.id === id), steps.find((step) => step.id === map[id])) : '';
          return (
            <div key={id}>
              <SelectField
                label={`Runs at ${id} go to`}
                options={options}
                value={map[id] ?? ''}
                error={fieldErrors(action.error)[`moveRuns.stepMap.${id}`]}
                onChange={(e) => setMap({ ...map, [id]: e.target.value })}
              />
              {outcome && <p className="hint">{outcome}</p>}
            </div>
          );
        })}
      </div>
      {unplaced.length > 0 && <p className="banner warning">Choose a step for runs at {unplaced.join(', ')} to move the runs, or keep them on their version.</p>}
      <ErrorBanner error={action.error} />
      {otherDetails.length > 0 && (
        <ul className="error">
          {otherDetails.map(([path, message]) => (
            <li key={path}>{message}</li>
          ))}
        </ul>
      )}
      <div className="actions wrap-actions">
        <button type="button" className="secondary" onClick={onClose} data-autofocus>
          Cancel
        </button>
        <button type="button" className="secondary" disabled={action.isPending} onClick={() => onConfirm(null)}>
          Save, keep runs on their version
        </button>
        <button type="button" disabled={action.isPending || unplaced.length > 0} onClick={() => onConfirm(map)}>
          Save and move runs
        </button>
      </div>
    </Dialog>
  );
}

// What a run at `from` (as the current version has it) does at `to`, as the service moves it
// (docs/sequences.md "Versions"): the same wait keeps its end, any other wait
// starts again from the save, any other step starts afresh.
function moveOutcome(from: Sequence['steps'][number] | undefined, to: Step | undefined): string {
  if (to?.type !== 'wait') return '';
  if (from?.type !== 'wait') return 'They start this wait from the save.';
  const wait = (step: { duration?: string; until?: { time: string; weekdays?: readonly string[] } }) => JSON.stringify([step.duration, step.until?.time, step.until?.weekdays]);
  const same = wait(from) === wait(to);
  return same ? 'The same wait: their wait keeps its end.' : 'A changed wait: their wait starts again from the save.';
}
