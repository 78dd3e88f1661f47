import type { Step } from '../../schemas/sequence-definition';
import type { ContactState } from '../contacts/contact-state';
import type { StepOutcome } from './steps/step-outcome';

// A run's consecutive local steps in one pass (plan-run.ts plans them, record-batch.ts records
// them): the steps a claimed run takes, in order, and what comes after the last.

// A step of a run's chain, as planned.
export interface ChainLink {
  step: Step;
  outcome: StepOutcome;
}

export type ChainEnd =
  // An exit rule holds on the contact as the chain changed it: the run is cancelled there.
  | { kind: 'exit'; reason: string }
  // The next step acts and the sending window is closed: the run waits at it for the opening.
  | { kind: 'defer'; until: Date };

// Each step a planned step takes: its own, then its chain's.
export function linksOf(result: { step: Step; outcome: StepOutcome; chain?: readonly ChainLink[] }): ChainLink[] {
  return [{ step: result.step, outcome: result.outcome }, ...(result.chain ?? [])];
}

// The chain's changes to the contact, in order, as one.
export function chainChange(result: { step: Step; outcome: StepOutcome; chain?: readonly ChainLink[] }): ((contact: ContactState) => ContactState) | null {
  const changes = linksOf(result).flatMap((link) => (link.outcome.kind === 'change' ? [link.outcome.change] : []));
  if (changes.length === 0) return null;
  return (contact) => changes.reduce((state, change) => change(state), contact);
}
