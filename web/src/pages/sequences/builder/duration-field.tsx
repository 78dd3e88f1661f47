import { useEffect, useId, useState, type ReactNode } from 'react';
import { durationInWords } from '../step-words';
import { amountOf, DURATION_UNITS, isoOf, type DurationUnit } from './wait-duration';

// A wait's length as a whole number and a unit (minutes, hours, days, weeks), sent as the ISO
// 8601 the API stores. A stored length no unit says exactly (P1M, PT90S) is kept, and said in
// words, until an amount is typed. An amount that is no whole number of 1 or more cannot be sent
// yet: onProblem holds the save back, as an unfinished JSON field does.
export function DurationField({
  label,
  value,
  onChange,
  onProblem,
  error,
  hint,
}: {
  label: string;
  value: string | undefined;
  onChange: (iso: string) => void;
  onProblem: (problem: string | null) => void;
  error?: string;
  hint?: ReactNode;
}) {
  const id = useId();
  const stored = amountOf(value);
  const [text, setText] = useState(stored ? String(stored.amount) : '');
  const [unit, setUnit] = useState<DurationUnit>(stored?.unit ?? 'days');
  const [problem, setProblem] = useState<string | null>(null);
  // A value set from outside (changes discarded): shown again in its largest unit.
  const amount = /^\d+$/.test(text) && Number(text) >= 1 ? Number(text) : null;
  useEffect(() => {
    if (amount !== null && isoOf({ amount, unit }) === value) return;
    if (amount === null && problem !== null) return;
    const next = amountOf(value);
    setText(next ? String(next.amount) : '');
    if (next) setUnit(next.unit);
    // Only the stored value's changes are followed, not the typing that made them.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value]);

  const change = (nextText: string, nextUnit: DurationUnit) => {
    setText(nextText);
    setUnit(nextUnit);
    const whole = /^\d+$/.test(nextText.trim()) && Number(nextText) >= 1 ? Number(nextText) : null;
    const found = whole === null ? (nextText.trim() === '' && !stored && value ? null : 'A whole number, 1 or more') : null;
    setProblem(found);
    onProblem(found);
    if (whole !== null) onChange(isoOf({ amount: whole, unit: nextUnit }));
  };
  const shown = problem ?? error;
  const described = [`${id}-hint`, shown ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <fieldset className="field duration-field">
      <legend>{label}</legend>
      <p className="hint" id={`${id}-hint`}>
        {value && !stored ? `Now ${durationInWords(value)} (${value}), which is no whole number of minutes, hours, days or weeks: kept until you type an amount. ` : ''}
        {hint}
      </p>
      <div className="duration-row">
        <div>
          <label htmlFor={`${id}-amount`}>Amount</label>
          <input
            id={`${id}-amount`}
            type="number"
            inputMode="numeric"
            min={1}
            step={1}
            value={text}
            aria-invalid={shown ? true : undefined}
            aria-describedby={described}
            onChange={(e) => change(e.target.value, unit)}
          />
        </div>
        <div>
          <label htmlFor={`${id}-unit`}>Unit</label>
          <select id={`${id}-unit`} value={unit} aria-describedby={`${id}-hint`} onChange={(e) => change(text, e.target.value as DurationUnit)}>
            {DURATION_UNITS.map(([key, words]) => (
              <option key={key} value={key}>
                {words}
              </option>
            ))}
          </select>
        </div>
      </div>
      {shown && (
        <p className="error" id={`${id}-error`}>
          {shown}
        </p>
      )}
    </fieldset>
  );
}
