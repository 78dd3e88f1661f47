import { useId } from 'react';
import { Field } from '../../components/field';
import { durationHint, durationInWords } from '../sequences/step-words';

// The "Frequency cap" section of a channel's form (docs/channels.md "Frequency caps"): the same
// for email and WhatsApp. Off sends null (no cap); on sends the three fields as typed, so the
// service's checks (a whole max, an ISO 8601 per) answer at their fields.

type WhenCapped = 'wait' | 'skip';
type StoredCap = { max: number; per: string; whenCapped: WhenCapped } | null;
export type CapDraft = { on: boolean; max: string; per: string; whenCapped: WhenCapped };

export function capDraft(cap: StoredCap): CapDraft {
  return cap ? { on: true, max: String(cap.max), per: cap.per, whenCapped: cap.whenCapped } : { on: false, max: '3', per: 'P1D', whenCapped: 'wait' };
}

// An empty max goes as 0, so the service says "must be at least 1" rather than a type error.
export function capInput(draft: CapDraft): { max: number; per: string; whenCapped: WhenCapped } | null {
  return draft.on ? { max: Number(draft.max.trim()), per: draft.per.trim(), whenCapped: draft.whenCapped } : null;
}

export function capInWords(cap: StoredCap, unit: string): string {
  if (!cap) return 'None: every marketing message goes out.';
  const then = cap.whenCapped === 'wait' ? 'a capped message waits until the window allows it' : 'a capped step is skipped';
  return `At most ${cap.max} marketing ${unit}${cap.max === 1 ? '' : 's'} per contact per ${durationInWords(cap.per)}; ${then}.`;
}

export function FrequencyCapFields({
  draft,
  onChange,
  errors,
  stored,
  unit,
}: {
  draft: CapDraft;
  onChange: (draft: CapDraft) => void;
  errors: Record<string, string>;
  stored: StoredCap;
  unit: string;
}) {
  const id = useId();
  const set = (change: Partial<CapDraft>) => onChange({ ...draft, ...change });
  const whenError = errors['frequencyCap.whenCapped'];
  return (
    <fieldset className="field" aria-describedby={`${id}-hint`}>
      <legend>Frequency cap</legend>
      <p className="hint" id={`${id}-hint`}>
        In force: {capInWords(stored, unit)} Counted per contact across all sequences; transactional steps are neither counted nor capped.
      </p>
      <label className="choice">
        <input type="checkbox" checked={draft.on} onChange={(e) => set({ on: e.target.checked })} /> Cap marketing {unit}s per contact
      </label>
      {errors.frequencyCap && <p className="error">{errors.frequencyCap}</p>}
      {draft.on && (
        <>
          <Field
            label={`Most ${unit}s per window`}
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            value={draft.max}
            onChange={(e) => set({ max: e.target.value })}
            error={errors['frequencyCap.max']}
          />
          <Field
            label="Window (ISO 8601 duration)"
            hint={durationHint(draft.per) || 'A rolling window from PT1S to 366 days: P1D, PT12H, P1W.'}
            value={draft.per}
            onChange={(e) => set({ per: e.target.value })}
            error={errors['frequencyCap.per']}
            autoComplete="off"
            spellCheck={false}
          />
          <fieldset className="field">
            <legend>When capped</legend>
            <label className="choice">
              <input type="radio" name={`${id}-when`} checked={draft.whenCapped === 'wait'} onChange={() => set({ whenCapped: 'wait' })} /> Wait: the
              message goes out once the window allows it
            </label>
            <label className="choice">
              <input type="radio" name={`${id}-when`} checked={draft.whenCapped === 'skip'} onChange={() => set({ whenCapped: 'skip' })} /> Skip: the
              step is skipped and the run goes on
            </label>
            {whenError && <p className="error">{whenError}</p>}
          </fieldset>
        </>
      )}
    </fieldset>
  );
}
