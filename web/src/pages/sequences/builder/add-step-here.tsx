import { useState } from 'react';
import { SelectField } from '../../../components/select-field';
import { STEP_TYPE_NAMES, type StepType } from './model';

// The "Add a step" between two cards: a type, then inserted there (insertAfter wires it in).
export function AddStepHere({ after, onAdd }: { after: number; onAdd: (type: StepType) => void }) {
  const [open, setOpen] = useState(false);
  const [type, setType] = useState<StepType>('wait');
  const where = <span className="visually-hidden"> after step {after}</span>;
  if (!open) {
    return (
      <div className="add-here">
        <button type="button" className="secondary" onClick={() => setOpen(true)}>
          + Add a step{where}
        </button>
      </div>
    );
  }
  return (
    <div className="add-here inline-form" role="group" aria-label={`A new step after step ${after}`}>
      <SelectField label="Type of the new step" options={STEP_TYPE_NAMES} value={type} onChange={(e) => setType(e.target.value as StepType)} />
      <button
        type="button"
        onClick={() => {
          onAdd(type);
          setOpen(false);
        }}
      >
        Insert step{where}
      </button>
      <button type="button" className="secondary" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </div>
  );
}
