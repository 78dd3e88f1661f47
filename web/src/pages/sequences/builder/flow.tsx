import type { ReactNode } from 'react';
import { conditionInWords, stepInWords, type Sequence, type Step } from '../step-words';
import type { Row } from './model';

// The steps as a vertical flow: each step a card, joined to the next by a line when a run goes
// on to it; a branch draws its two paths, each naming the step it goes to. A step no run can
// reach (after a branch or an exit, and no branch goes to it) says so.

export function safeWords(step: Step, context: Parameters<typeof stepInWords>[1]): string {
  try {
    return stepInWords(step, context) ?? `Unknown step type "${String((step as { type: unknown }).type)}"`;
  } catch {
    return `${step.type} step (incomplete)`;
  }
}

export function Flow({
  rows,
  window,
  webhookUrl,
  renderCard,
}: {
  rows: readonly Row[];
  window: Sequence['sendingWindow'];
  webhookUrl: (id: string) => string | undefined;
  renderCard: (row: Row, index: number, words: string) => ReactNode;
}) {
  const place = new Map(rows.map((row, i) => [row.step.id, i]));
  const jumpedTo = new Set(rows.flatMap(({ step }) => (step.type === 'branch' ? [step.then, step.else] : [])));
  const label = (id: string) => (place.has(id) ? `${place.get(id)! + 1}. ${id}` : `${id || '(none)'}, not a step of this sequence`);
  return (
    <ol className="flow">
      {rows.map((row, i) => {
        const previous = rows[i - 1]?.step;
        const fallsIn = i === 0 || (previous !== undefined && previous.type !== 'branch' && previous.type !== 'exit');
        const unreached = !fallsIn && !jumpedTo.has(row.step.id);
        const step = row.step;
        return (
          <li key={row.key} id={`flow-${row.key}`} className={`flow-step${fallsIn ? '' : ' jump-only'}`}>
            {!fallsIn && <p className="flow-note">{unreached ? 'No step leads here: runs never reach this step.' : 'Reached only from a branch.'}</p>}
            {renderCard(row, i, safeWords(step, { window, webhookUrl }))}
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
            {step.type === 'exit' && <p className="flow-end">The run completes.</p>}
          </li>
        );
      })}
    </ol>
  );
}

function safeCondition(condition: Extract<Step, { type: 'branch' }>['if']): string {
  try {
    return conditionInWords(condition);
  } catch {
    return 'the condition';
  }
}
