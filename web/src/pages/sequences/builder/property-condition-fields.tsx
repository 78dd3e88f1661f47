import { Field } from '../../../components/field';
import { SelectField } from '../../../components/select-field';
import type { Sequence } from '../step-words';
import { JsonField } from './fields';

// One condition on an activity's properties (`{ property, equals | in | exists | gt | gte | lt |
// lte }`): a branch's `if` on the run's trigger, and each `where` row of the entry and the goal.
// The fields edit the condition as a whole; errors are keyed by the path inside it ("property",
// "equals", "in.0").

export type PropertyCondition = NonNullable<NonNullable<Sequence['entry']>['where']>[number];
export const OPERATORS = [
  ['equals', 'equals'],
  ['in', 'is one of'],
  ['exists', 'is set'],
  ['missing', 'is not set'],
  ['gt', 'is more than'],
  ['gte', 'is at least'],
  ['lt', 'is less than'],
  ['lte', 'is at most'],
] as const;
export type Operator = (typeof OPERATORS)[number][0];
const ORDERED = ['gt', 'gte', 'lt', 'lte'] as const;

export function operatorOf(condition: PropertyCondition): Operator {
  if ('exists' in condition) return condition.exists ? 'exists' : 'missing';
  for (const [operator] of OPERATORS) if (operator in condition) return operator;
  return 'equals';
}

// The value a condition compares with, whatever its operator.
function valueOf(condition: PropertyCondition): unknown {
  const record = condition as Record<string, unknown>;
  for (const key of ['equals', 'in', ...ORDERED]) if (key in record) return record[key];
  return undefined;
}

// The same property and, where it still fits, the same value under another operator.
export function withOperator(condition: PropertyCondition, operator: Operator): PropertyCondition {
  const property = condition.property;
  const value = valueOf(condition);
  switch (operator) {
    case 'exists':
      return { property, exists: true };
    case 'missing':
      return { property, exists: false };
    case 'equals':
      return { property, equals: value === undefined ? '' : Array.isArray(value) ? value[0] : value };
    case 'in':
      return { property, in: Array.isArray(value) ? value : [value ?? ''] };
    default:
      return { property, [operator]: typeof value === 'number' || typeof value === 'string' ? value : 0 } as PropertyCondition;
  }
}

// "50" is the number 50; anything else that is not a number is compared as text.
function orderedValue(text: string): number | string {
  return text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
}

export function PropertyConditionFields({
  label,
  condition,
  onChange,
  errors,
  onProblem,
}: {
  label: string;
  condition: PropertyCondition;
  onChange: (condition: PropertyCondition) => void;
  errors: Record<string, string>;
  onProblem: (field: string, problem: string | null) => void;
}) {
  const operator = operatorOf(condition);
  const whole = errors[''];
  const record = condition as Record<string, unknown>;
  return (
    <div className="field-pair property-condition">
      <Field
        label={`${label}: property`}
        hint="A dot path into the properties: cartId, items.0.sku."
        value={condition.property}
        error={errors.property ?? whole}
        onChange={(e) => onChange({ ...condition, property: e.target.value } as PropertyCondition)}
      />
      <SelectField label={`${label}: operator`} options={OPERATORS} value={operator} onChange={(e) => onChange(withOperator(condition, e.target.value as Operator))} />
      {operator === 'equals' && (
        <JsonField
          key="equals"
          label={`${label}: equals (JSON)`}
          hint={'"abc", 3, true.'}
          rows={1}
          value={record.equals}
          error={errors.equals}
          onProblem={(problem) => onProblem('equals', problem)}
          onChange={(equals) => onChange({ property: condition.property, equals })}
        />
      )}
      {operator === 'in' && (
        <JsonField
          key="in"
          label={`${label}: one of (a JSON list)`}
          hint={'["gold", "platinum"]'}
          rows={1}
          value={record.in}
          error={Object.entries(errors).find(([path]) => path === 'in' || path.startsWith('in.'))?.[1]}
          onProblem={(problem) => onProblem('in', problem)}
          onChange={(list) => onChange({ property: condition.property, in: list as unknown[] })}
        />
      )}
      {(ORDERED as readonly string[]).includes(operator) && (
        <Field
          label={`${label}: value`}
          hint="A number, or text compared as text (an ISO date compares in time order)."
          value={String(record[operator] ?? '')}
          error={errors[operator]}
          onChange={(e) => onChange({ property: condition.property, [operator]: orderedValue(e.target.value) } as PropertyCondition)}
        />
      )}
    </div>
  );
}

// A list of property conditions ("where"): each with its fields and a remove button, and a button
// to add one. Every condition must hold.
export function WhereFields({
  legend,
  where,
  onChange,
  errors,
  prefix,
  onProblem,
}: {
  legend: string;
  where: readonly PropertyCondition[];
  onChange: (where: PropertyCondition[]) => void;
  errors: Record<string, string>;
  // The path of the list in the errors: "entry.where".
  prefix: string;
  onProblem: (field: string, problem: string | null) => void;
}) {
  return (
    <fieldset className="field where">
      <legend>{legend}</legend>
      {where.length === 0 && <p className="hint">None: every activity of that name counts.</p>}
      {where.map((condition, i) => (
        <div className="where-row" key={i}>
          <PropertyConditionFields
            label={`Condition ${i + 1}`}
            condition={condition}
            errors={errorsUnder(errors, `${prefix}.${i}`)}
            onProblem={(field, problem) => onProblem(`${prefix}.${i}.${field}`, problem)}
            onChange={(next) => onChange(where.map((c, j) => (j === i ? next : c)))}
          />
          <button
            type="button"
            className="secondary"
            onClick={() => {
              // The rows after it move up: their unparsed texts are dropped with it.
              for (let j = i; j < where.length; j++) for (const field of ['equals', 'in']) onProblem(`${prefix}.${j}.${field}`, null);
              onChange(where.filter((_, j) => j !== i));
            }}
          >
            Remove condition {i + 1}
          </button>
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => onChange([...where, { property: '', equals: '' }])}>
        Add a condition
      </button>
      {errors[prefix] && <p className="error">{errors[prefix]}</p>}
    </fieldset>
  );
}

// The errors under a path, keyed by what follows it ("" for the path itself).
export function errorsUnder(errors: Record<string, string>, prefix: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [path, message] of Object.entries(errors)) {
    if (path === prefix) found[''] = message;
    else if (path.startsWith(`${prefix}.`)) found[path.slice(prefix.length + 1)] = message;
  }
  return found;
}
