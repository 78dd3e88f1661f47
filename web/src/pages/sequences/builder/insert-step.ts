import { newKey, newStep, type Row, type StepType } from './model';
import { goesOn, leadingTo, redirected } from './step-links';

// "Add a step" after a card: the new step goes into the flow, not beside it. The step before now
// leads to it (in order when it goes on to the next; its paths that went to the following step
// now go to the new one), and the new step leads where that was (in order; a wait_for's timeout
// and a split's variants go there too; a branch's paths stay empty, to be chosen). When the step
// before does not lead to the following one (an exit, a branch that jumps elsewhere), the new
// step takes the following step's place: the jumps that reached it reach the new step.
export function insertAfter(rows: readonly Row[], index: number, type: StepType, endpointId: string | undefined): Row[] {
  const previous = rows[index]!.step;
  const following = rows[index + 1]?.step.id;
  const created = newStep(type, rows, endpointId);
  const inserted: Row = { key: newKey(), step: following === undefined ? created : leadingTo(created, following) };
  let next = [...rows];
  if (following !== undefined) {
    const wired = redirected(previous, following, created.id);
    if (wired !== previous || goesOn(previous)) next[index] = { ...rows[index]!, step: wired };
    else next = rows.map((row) => ({ ...row, step: redirected(row.step, following, created.id) }));
  }
  return [...next.slice(0, index + 1), inserted, ...next.slice(index + 1)];
}
