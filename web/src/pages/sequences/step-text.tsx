import { stepInParts, type Step } from './step-words';
import type { TemplatePart } from './template-words';
import './step-text.css';

// A step in words as the builder's cards, the version diff and the run timeline show it: a
// message's variables as chips ("Welcome, [first name]!"), the brackets there for a screen reader
// and for copied text.

type Context = Parameters<typeof stepInParts>[1];

// Words for any step, even one of a shape or type the words do not know (an older version's).
export function safeParts(step: Step, context: Context): TemplatePart[] {
  try {
    const parts = stepInParts(step, context);
    return parts.length > 0 ? parts : [{ text: `Unknown step type "${String((step as { type: unknown }).type)}"` }];
  } catch {
    return [{ text: `${step.type} step (incomplete)` }];
  }
}

export function PartsText({ parts }: { parts: readonly TemplatePart[] }) {
  return (
    <>
      {parts.map((part, i) =>
        'text' in part ? (
          part.text
        ) : (
          <span key={i} className="variable-chip">
            <span className="visually-hidden">[</span>
            {part.variable}
            <span className="visually-hidden">]</span>
          </span>
        ),
      )}
    </>
  );
}

export function StepText({ step, context }: { step: Step; context: Context }) {
  return <PartsText parts={safeParts(step, context)} />;
}
