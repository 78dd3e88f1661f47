import type { ContactState } from '../contacts/contact-state';
import { couldTriggerExit, exitReason, matchingExitRule } from '../exit-rules/exit-rules';
import { chainChange } from './chain';
import type { RunResult } from './claimed-run';

// Exit rules hold inside a batch (docs/sequences.md "Exit rules"). Two runs of one contact can
// take their steps in the same pass: run A tags `purchased`, and run B, whose sequence exits on
// `purchased`, tags `pitched`. B's exit rule is met by a write of its own batch, so B is
// cancelled in the batch's transaction and its own change is not applied: it never acts on a
// contact that has already purchased, whichever of the two comes first in the batch.
//
// For each contact, a run that changes it is cancelled when the batch's other changes of that
// contact (not its own) make one of its exit rules hold; the cancelled run's change then no
// longer counts for the others, and the runs are looked at again until none more is cancelled
// (in batch order: of two runs that would each stop the other, the earlier is cancelled).
// Answers the index of each cancelled result in `results`, with its reason. (Runs of the contact
// that do not change it are cancelled afterwards by the applied changes, record-batch.ts.)
export function exitsWithinBatch(results: readonly RunResult[], contacts: ReadonlyMap<string, ContactState>): Map<number, string> {
  const changesByContact = new Map<string, number[]>();
  results.forEach((result, index) => {
    if (result.kind !== 'step' || !chainChange(result) || !contacts.has(result.run.contactId)) return;
    const indexes = changesByContact.get(result.run.contactId);
    if (indexes) indexes.push(index);
    else changesByContact.set(result.run.contactId, [index]);
  });
  const cancelled = new Map<number, string>();
  for (const [contactId, indexes] of changesByContact) {
    if (indexes.length < 2) continue;
    const base = contacts.get(contactId)!;
    const applying = new Set(indexes);
    for (let again = true; again; ) {
      again = false;
      for (const index of indexes) {
        if (!applying.has(index)) continue;
        const others = indexes.filter((other) => other !== index && applying.has(other));
        const after = others.reduce((state, other) => changeOf(results[other]!)(state), base);
        const rule = couldTriggerExit(base, after) ? matchingExitRule(results[index]!.run.exitWhen, after) : null;
        if (!rule) continue;
        applying.delete(index);
        cancelled.set(index, exitReason(rule));
        again = true;
      }
    }
  }
  return cancelled;
}

// A run's change: its step's, or its chain's changes in order (plan-run.ts).
function changeOf(result: RunResult): (contact: ContactState) => ContactState {
  const change = result.kind === 'step' ? chainChange(result) : null;
  if (!change) throw new Error('not a change');
  return change;
}
