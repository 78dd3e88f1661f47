import { useId, useState, type ReactNode } from 'react';
import { Field } from '../../../components/field';

// The builder's inputs beyond Field and SelectField. Each takes its value and its error from
// props and says what changed through onChange: a form is a list of these.

function Described({ label, hint, error, children }: { label: string; hint?: ReactNode; error?: string; children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: true }) => ReactNode }) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {children({ id, 'aria-describedby': described, 'aria-invalid': error ? true : undefined })}
      {error && (
        <p className="error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

// One template field of an email or WhatsApp step (a subject, an html or text body, a
// parameter): a Liquid template. The one place to swap for the message editor: every template
// field of the builder is this component, driven by these props only.
export interface TemplateFieldProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  hint?: ReactNode;
  multiline?: boolean;
}

export function TemplateField({ label, value, onChange, error, hint, multiline }: TemplateFieldProps) {
  return (
    <Described label={label} hint={hint} error={error}>
      {(props) =>
        multiline ? (
          <textarea {...props} className="template" rows={6} spellCheck={false} value={value} onChange={(e) => onChange(e.target.value)} />
        ) : (
          <input {...props} className="template" spellCheck={false} value={value} onChange={(e) => onChange(e.target.value)} />
        )
      }
    </Described>
  );
}

// Tags typed as "vip, trial": the text is kept as typed, the list is what is sent.
export function TagsField({ label, value, onChange, error, hint }: { label: string; value: readonly string[] | undefined; onChange: (tags: string[]) => void; error?: string; hint?: string }) {
  const [text, setText] = useState((value ?? []).join(', '));
  return (
    <Field
      label={label}
      hint={hint ?? 'Separated by commas.'}
      error={error}
      value={text}
      onChange={(e) => {
        setText(e.target.value);
        onChange(
          e.target.value
            .split(',')
            .map((tag) => tag.trim())
            .filter(Boolean),
        );
      }}
    />
  );
}

// A JSON value typed as text: sent once it parses; until then the field says why not, and the
// builder will not save (onProblem).
export function JsonField({
  label,
  value,
  onChange,
  onProblem,
  error,
  hint,
  optional,
  rows = 4,
}: {
  label: string;
  value: unknown;
  onChange: (value: unknown) => void;
  onProblem: (problem: string | null) => void;
  error?: string;
  hint?: ReactNode;
  optional?: boolean;
  rows?: number;
}) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value, null, 2));
  const [problem, setProblem] = useState<string | null>(null);
  const change = (next: string) => {
    setText(next);
    let found: string | null = null;
    if (next.trim() === '' && optional) onChange(undefined);
    else {
      try {
        onChange(JSON.parse(next));
      } catch {
        found = 'Not valid JSON yet';
      }
    }
    setProblem(found);
    onProblem(found);
  };
  return (
    <Described label={label} hint={hint} error={problem ?? error}>
      {(props) => <textarea {...props} className="json" rows={rows} spellCheck={false} value={text} onChange={(e) => change(e.target.value)} />}
    </Described>
  );
}

const WEEK = [
  ['mon', 'Mon'],
  ['tue', 'Tue'],
  ['wed', 'Wed'],
  ['thu', 'Thu'],
  ['fri', 'Fri'],
  ['sat', 'Sat'],
  ['sun', 'Sun'],
] as const;
export type Weekday = (typeof WEEK)[number][0];

// Weekdays as checkboxes; none ticked means every day (the field is left out).
export function WeekdaysField({ legend, value, onChange, error }: { legend: string; value: readonly string[] | undefined; onChange: (days: Weekday[] | undefined) => void; error?: string }) {
  const id = useId();
  const set = new Set(value ?? []);
  const toggle = (day: Weekday, on: boolean) => {
    const next = WEEK.map(([d]) => d).filter((d) => (d === day ? on : set.has(d)));
    onChange(next.length === 0 ? undefined : next);
  };
  return (
    <fieldset className="field weekdays" aria-describedby={error ? `${id}-error` : `${id}-hint`}>
      <legend>{legend}</legend>
      <p className="hint" id={`${id}-hint`}>
        None ticked: every day.
      </p>
      <div className="weekday-row">
        {WEEK.map(([day, name]) => (
          <label key={day} className="choice">
            <input type="checkbox" checked={set.has(day)} onChange={(e) => toggle(day, e.target.checked)} />
            {name}
          </label>
        ))}
      </div>
      {error && (
        <p className="error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </fieldset>
  );
}
