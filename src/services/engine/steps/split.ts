import { createHash } from 'node:crypto';
import type { StepOf } from '../../../schemas/sequence-definition';
import type { StepInput, StepOutcome } from './step-outcome';

// split: one variant per run, by weight, from a hash of the run id and the step id: the same run
// at the same step always takes the same variant, whatever retries, crashes or restarts happen
// between (nothing random is drawn, nothing needs storing before the step is recorded). The
// execution records the variant.
export function runSplit({ step, run }: StepInput<StepOf<'split'>>): StepOutcome {
  const variant = chooseVariant(step.variants, run.id, step.id);
  return { kind: 'next', to: variant.next, detail: { variant: variant.id, to: variant.next } };
}

export function chooseVariant<V extends { weight: number }>(variants: readonly V[], runId: string, stepId: string): V {
  const total = variants.reduce((sum, variant) => sum + variant.weight, 0);
  // 48 bits of SHA-256, spread over the total weight (at most 10 x 1,000,000): the bias of the
  // modulo is below one in 10^7.
  const point = createHash('sha256').update(`${runId}\u0000${stepId}`).digest().readUIntBE(0, 6) % total;
  let reached = 0;
  for (const variant of variants) {
    reached += variant.weight;
    if (point < reached) return variant;
  }
  return variants[variants.length - 1]!;
}
