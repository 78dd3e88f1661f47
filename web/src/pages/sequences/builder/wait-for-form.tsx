import { useState } from 'react';
import { Field } from '../../../components/field';
import { SelectField } from '../../../components/select-field';
import { matchValueInWords, type Step } from '../step-words';
import { DurationField } from './duration-field';
import type { FormProps } from './form-types';
import { targetOptions } from './targets';

// A wait_for step: the activity, the property values it must carry (a Liquid template read for
// the run when the wait begins, or a plain number or boolean), how long to wait, and where a
// matched and a timed-out run go.

type Match = NonNullable<Extract<Step, { type: 'wait_for' }>['match']>;
type Kind = 'template' | 'number' | 'true' | 'false';
interface MatchRow {
  path: string;
  text: string;
  kind: Kind;
}

function toRows(match: Match | undefined): MatchRow[] {
  return Object.entries(match ?? {}).map(([path, value]) =>
    typeof value === 'string' ? { path, text: value, kind: 'template' } : typeof value === 'number' ? { path, text: String(value), kind: 'number' } : { path, text: '', kind: value ? 'true' : 'false' },
  );
}

function valueOf(row: MatchRow): string | number | boolean {
  if (row.kind === 'number') return row.text.trim() === '' ? Number.NaN : Number(row.text);
  if (row.kind === 'true' || row.kind === 'false') return row.kind === 'true';
  return row.text;
}

// Why the rows cannot be sent as a match yet: a path given twice, or none, or a number that is not.
function rowsProblem(rows: readonly MatchRow[]): string | null {
  const paths = rows.map((row) => row.path.trim());
  if (paths.some((path) => path === '')) return 'Every match row needs a property';
  const twice = paths.find((path, i) => paths.indexOf(path) !== i);
  if (twice) return `The property ${twice} is matched twice`;
  if (rows.some((row) => row.kind === 'number' && !Number.isFinite(valueOf(row) as number))) return 'A number value must be a number';
  return null;
}

const KINDS = [
  ['template', 'Text or template'],
  ['number', 'Number'],
  ['true', 'true'],
  ['false', 'false'],
] as const;

export function WaitForForm({ step, onChange, errors, context }: FormProps<'wait_for'>) {
  const [rows, setRows] = useState<MatchRow[]>(() => toRows(step.match));
  const problem = rowsProblem(rows);
  const setMatch = (next: MatchRow[]) => {
    setRows(next);
    const found = rowsProblem(next);
    context.onProblem('match', found);
    if (found) return;
    const { match: _old, ...rest } = step;
    onChange(next.length === 0 ? rest : { ...rest, match: Object.fromEntries(next.map((row) => [row.path.trim(), valueOf(row)])) });
  };
  const following = context.following;
  const nextOptions: Array<readonly [string, string]> = [
    ['', following ? `The following step (${following})` : 'The following step (none: choose one)'],
    ...(step.next === undefined ? context.targets : targetOptions(context.targets, step.next)),
  ];
  return (
    <>
      <Field label="Activity" hint="Its name, as recorded (case-sensitive): checkout_completed." value={step.activity} error={errors.activity} onChange={(e) => onChange({ ...step, activity: e.target.value })} />
      <fieldset className="field match">
        <legend>Match</legend>
        <p className="hint">
          Only an activity whose properties have these values counts. A template is read for the run when the wait begins: <code>{'{{ trigger.properties.cartId }}'}</code> is the cart of
          the activity that started the run.
        </p>
        {rows.length === 0 && <p className="hint">None: any {step.activity || 'such'} activity of the contact counts.</p>}
        {rows.map((row, i) => {
          const error = errors[`match.${row.path.trim()}`];
          const set = (patch: Partial<MatchRow>) => setMatch(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
          return (
            <div className="match-row" key={i}>
              <Field label={`Match ${i + 1}: property`} hint="A dot path: cartId, items.0.sku." value={row.path} onChange={(e) => set({ path: e.target.value })} />
              <SelectField label={`Match ${i + 1}: value is`} options={KINDS} value={row.kind} onChange={(e) => set({ kind: e.target.value as Kind })} />
              {(row.kind === 'template' || row.kind === 'number') && (
                <Field
                  label={`Match ${i + 1}: value`}
                  className={row.kind === 'template' ? 'template' : undefined}
                  spellCheck={false}
                  inputMode={row.kind === 'number' ? 'decimal' : undefined}
                  hint={row.kind === 'template' && row.text ? `Reads: ${matchValueInWords(row.text)}.` : undefined}
                  value={row.text}
                  error={error}
                  onChange={(e) => set({ text: e.target.value })}
                />
              )}
              <button type="button" className="secondary" onClick={() => setMatch(rows.filter((_, j) => j !== i))}>
                Remove match {i + 1}
              </button>
            </div>
          );
        })}
        {problem && <p className="error">{problem}</p>}
        {errors.match && <p className="error">{errors.match}</p>}
        <button type="button" className="secondary" onClick={() => setMatch([...rows, { path: rows.length === 0 ? 'cartId' : '', text: '{{ trigger.properties.cartId }}', kind: 'template' }])}>
          Add a match
        </button>
      </fieldset>
      <DurationField
        label="Timeout"
        value={step.timeout}
        error={errors.timeout}
        onProblem={(problem) => context.onProblem('timeout', problem)}
        onChange={(timeout) => onChange({ ...step, timeout })}
      />
      <div className="field-pair">
        <SelectField
          label="When it comes, go to"
          options={nextOptions}
          value={step.next ?? ''}
          error={errors.next}
          onChange={(e) => {
            const { next: _old, ...rest } = step;
            onChange(e.target.value === '' ? rest : { ...rest, next: e.target.value });
          }}
        />
        <SelectField label="On timeout, go to" options={targetOptions(context.targets, step.onTimeout)} value={step.onTimeout} error={errors.onTimeout} onChange={(e) => onChange({ ...step, onTimeout: e.target.value })} />
      </div>
    </>
  );
}
