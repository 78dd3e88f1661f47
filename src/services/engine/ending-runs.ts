import { linksOf } from './chain';
import type { ClaimedRun, RunResult } from './claimed-run';

// The runs of a batch whose record may take them out of the active statuses (completed, failed,
// cancelled). On MySQL/MariaDB that rewrites the run's entry in sequence_runs_one_active, the
// index that carries its foreign key to its contact, and InnoDB then share-locks the contact
// row. Taken while the run is locked, that lock comes after the run's: against a pause, an
// unenroll or a contact write, which lock the contact and then the run, it deadlocks. So the
// record locks these runs' contacts first, with the contacts its steps change, before it locks
// any run (record-batch.ts; docs/architecture.md "One lock order").
//
// A run that only sleeps, queues a send, waits for its window, is set aside or moves on to another step stays
// active and rewrites no such entry: its contact is not locked. When in doubt, a run counts as
// ending (an extra lock costs a little; a missing one, a deadlock).
export function runsToLockContactsOf(results: readonly RunResult[]): ClaimedRun[] {
  return results.filter((result) => changesContact(result) || mayEnd(result) || beginsWait(result)).map((result) => result.run);
}

// A wait_for that begins looks for its contact's matching activity already recorded
// (run-waits.ts). An activity's intake locks its contact before it looks for the waits to match
// (activities/match-waits.ts): with the contact locked here too, one of the two goes first and
// the other sees what it wrote, so an activity that commits as the wait begins is never missed.
function beginsWait(result: RunResult): boolean {
  if (result.kind !== 'step') return false;
  const links = linksOf(result);
  return links[links.length - 1]!.outcome.kind === 'await';
}

// A chain (plan-run.ts) counts by its steps: it changes the contact if one of them does, and may
// end by its last step (or an exit rule it meets).
function changesContact(result: RunResult): boolean {
  return result.kind === 'step' && linksOf(result).some((link) => link.outcome.kind === 'change');
}

function mayEnd(result: RunResult): boolean {
  switch (result.kind) {
    case 'park':
    case 'defer':
      return false;
    case 'end':
      return true;
    case 'step': {
      if (result.after?.kind === 'exit') return true;
      if (result.after?.kind === 'defer') return false;
      const links = linksOf(result);
      const { step, outcome } = links[links.length - 1]!;
      // A wait, or a send queued: the run waits at its step.
      if (outcome.kind === 'sleep' || outcome.kind === 'send' || outcome.kind === 'await') return false;
      if (outcome.kind === 'complete') return true;
      if (outcome.kind === 'next' && outcome.to !== undefined) return !result.steps.some((step) => step.id === outcome.to);
      return isLast(step.id, result.steps);
    }
    default:
      return true;
  }
}

function isLast(stepId: string, steps: readonly { id: string }[]): boolean {
  const index = steps.findIndex((step) => step.id === stepId);
  return index < 0 || index === steps.length - 1;
}
