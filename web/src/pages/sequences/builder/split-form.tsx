import { Field } from '../../../components/field';
import { SelectField } from '../../../components/select-field';
import { variantShares } from '../step-words';
import type { FormProps } from './form-types';
import { freeId } from './model';
import { targetOptions } from './targets';

// A split step: 2 to 10 variants, each a name, a weight (shown as its share of the runs) and the
// step its runs go to. A holdout is a variant that goes to an exit step.

const MAX_VARIANTS = 10;

export function SplitForm({ step, onChange, errors, context }: FormProps<'split'>) {
  const variants = step.variants;
  const shares = variantShares(variants);
  const set = (next: typeof variants) => onChange({ ...step, variants: next });
  const at = (i: number, patch: Partial<(typeof variants)[number]>) => set(variants.map((v, j) => (j === i ? { ...v, ...patch } : v)));
  return (
    <fieldset className="field variants">
      <legend>Variants</legend>
      <p className="hint">Each run takes one variant, by weight; the same run always takes the same one. 2 to {MAX_VARIANTS} variants.</p>
      {variants.map((variant, i) => (
        <div className="variant-row" key={i}>
          <Field label={`Variant ${i + 1}: name`} value={variant.id} error={errors[`variants.${i}.id`]} onChange={(e) => at(i, { id: e.target.value })} />
          <Field
            label={`Variant ${i + 1}: weight`}
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            hint={`${shares[i]!.share} of the runs.`}
            value={Number.isFinite(variant.weight) ? String(variant.weight) : ''}
            error={errors[`variants.${i}.weight`]}
            onChange={(e) => at(i, { weight: e.target.value === '' ? 0 : Number(e.target.value) })}
          />
          <SelectField label={`Variant ${i + 1}: go to`} options={targetOptions(context.targets, variant.next)} value={variant.next} error={errors[`variants.${i}.next`]} onChange={(e) => at(i, { next: e.target.value })} />
          <button type="button" className="secondary" disabled={variants.length <= 2} onClick={() => set(variants.filter((_, j) => j !== i))}>
            Remove variant {i + 1}
          </button>
        </div>
      ))}
      {errors.variants && <p className="error">{errors.variants}</p>}
      <button
        type="button"
        className="secondary"
        disabled={variants.length >= MAX_VARIANTS}
        onClick={() => {
          const id = freeId(String.fromCharCode(97 + variants.length), new Set(variants.map((v) => v.id)));
          set([...variants, { id, weight: variants[variants.length - 1]?.weight ?? 50, next: variants[variants.length - 1]?.next ?? context.targets[0]?.[0] ?? '' }]);
        }}
      >
        Add a variant
      </button>
    </fieldset>
  );
}
