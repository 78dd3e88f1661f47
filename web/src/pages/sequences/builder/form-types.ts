import type { ReactNode } from 'react';
import type { Step } from '../step-words';

// What every step form takes (step-forms.tsx and the forms in their own files): the step, its
// errors by the path inside it, and what the builder knows around it.

export type Of<T extends Step['type']> = Extract<Step, { type: T }>;
export interface FormContext {
  // The sequence the steps belong to: the message editor previews a step of it.
  sequenceId: string;
  // The steps a branch, a split or a wait_for may go to, as [id, label].
  targets: ReadonlyArray<readonly [string, string]>;
  // The step after this one, as its label ("3. remind (Email)"); undefined for the last.
  following?: string;
  // The account's webhook endpoints, as [id, URL].
  endpoints: ReadonlyArray<readonly [string, string]>;
  // A field whose text cannot be sent yet (JSON that does not parse); null when it can.
  onProblem: (field: string, problem: string | null) => void;
}
export interface FormProps<T extends Step['type']> {
  step: Of<T>;
  onChange: (step: Step) => void;
  errors: Record<string, string>;
  context: FormContext;
}

// The message editor, when it is open, in place of a form's plain template fields.
export type WithEditor<T extends Step['type']> = FormProps<T> & { editor: ReactNode };

