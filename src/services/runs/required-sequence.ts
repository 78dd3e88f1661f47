import type { ExitRule } from '../../schemas/sequence-definition';

// The sequence a new run starts on, as requireSequenceRow (sequences/find-sequence.ts) reads it,
// and as startRuns (runs.ts) takes it: declared here so runs/ needs nothing of sequences/.
export interface RequiredSequence {
  id: string;
  // The current version of its steps, and the first of them: where a new run starts. Both
  // null for a sequence without steps.
  version: number | null;
  firstStepId: string | null;
  // Its exit rules: a contact that already meets one is not enrolled (exit_rule_met).
  exitWhen: ExitRule[];
}
