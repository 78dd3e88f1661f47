import type { ReactNode } from 'react';
import { StepText } from '../step-text';
import { conditionInWords, durationInWords, variantShares, type Sequence, type Step } from '../step-words';
import type { Row } from './model';
import { goesOn, jumpsOf } from './step-links';

// The steps as a vertical flow: each step a card, joined to the next by a line when a run goes
// on to it; a branch draws its two paths, a wait_for its matched and timed-out paths, a split one
// path per variant, each naming the step it goes to. A step no run can reach (after a step that
// does not go on to the next, and nothing jumps to it) says so.

export function Flow({
  rows,
  window,
  webhookUrl,
  renderCard,
  renderAfter,
}: {
  rows: readonly Row[];
  window: Sequence['sendingWindow'];
  webhookUrl: (id: string) => string | undefined;
  renderCard: (row: Row, index: number, words: ReactNode) => ReactNode;
  // What goes between this step and the next (the "Add a step" there).
  renderAfter?: (row: Row, index: number) => ReactNode;
}) {
  const place = new Map(rows.map((row, i) => [row.step.id, i]));
  const jumpedTo = new Set(rows.flatMap(({ step }) => jumpsOf(step)));
  const label = (id: string) => (place.has(id) ? `${place.get(id)! + 1}. ${id}` : id ? `${id}, not a step of this sequence` : 'a step not chosen yet');
  return (
    <ol className="flow">
      {rows.map((row, i) => {
        const previous = rows[i - 1]?.step;
        const fallsIn = i === 0 || (previous !== undefined && goesOn(previous));
        const unreached = !fallsIn && !jumpedTo.has(row.step.id);
        const step = row.step;
        return (
          <li key={row.key} id={`flow-${row.key}`} className={`flow-step${fallsIn ? '' : ' jump-only'}`}>
            {!fallsIn && <p className="flow-note">{unreached ? 'No step leads here: runs never reach this step.' : 'Reached only by a jump from another step.'}</p>}
            {renderCard(row, i, <StepText step={step} context={{ window, webhookUrl }} />)}
            {step.type === 'branch' && (
              <div className="fork" role="group" aria-label={`The two paths of step ${i + 1}`}>
                <p className="path then">
                  <span className="path-label">If {safeCondition(step.if)}</span> go to <strong>{label(step.then)}</strong>
                </p>
                <p className="path else">
                  <span className="path-label">Otherwise</span> go to <strong>{label(step.else)}</strong>
                </p>
              </div>
            )}
            {step.type === 'wait_for' && (
              <div className="fork" role="group" aria-label={`The two paths of step ${i + 1}`}>
                <p className="path then">
                  <span className="path-label">When {step.activity || 'the activity'} comes</span> go to{' '}
                  <strong>{step.next === undefined ? (rows[i + 1] ? label(rows[i + 1]!.step.id) : 'the next step (there is none)') : label(step.next)}</strong>
                </p>
                <p className="path else">
                  <span className="path-label">Timed out after {safeDuration(step.timeout)}</span> go to <strong>{label(step.onTimeout)}</strong>
                </p>
              </div>
            )}
            {step.type === 'split' && Array.isArray(step.variants) && (
              <div className="fork split" role="group" aria-label={`The ${step.variants.length} paths of step ${i + 1}`}>
                {variantShares(step.variants).map((variant, v) => (
                  <p className="path variant" key={v}>
                    <span className="path-label">
                      Variant {variant.id || '(unnamed)'}, {variant.share}
                    </span>{' '}
                    go to <strong>{label(variant.next)}</strong>
                  </p>
                ))}
              </div>
            )}
            {step.type === 'exit' && <p className="flow-end">The run completes.</p>}
            {renderAfter?.(row, i)}
          </li>
        );
      })}
    </ol>
  );
}

function safeDuration(iso: string): string {
  return typeof iso === 'string' && iso ? durationInWords(iso) : 'the timeout';
}

function safeCondition(condition: Extract<Step, { type: 'branch' }>['if']): string {
  try {
    return conditionInWords(condition);
  } catch {
    return 'the condition';
  }
}
