import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute } from '../../db/sql/statements';
import type { Step } from '../../schemas/sequence-definition';
import { resumeChannelPauses } from '../channels/channel-pauses';

// A sequence's steps saved: its steps' template pauses (a template Graph refused: 132000 and
// kin) resume. The sends that waited for them carry the step as their run's version had it
// (engine/outbound/channels/message-body.ts), the very template that was refused: they take the
// step as saved now, one UPDATE per resumed step, so the fix is what goes out. Answers how many
// pauses resumed.
export async function resumeStepPauses(
  db: Database,
  input: { accountId: string; sequenceId: string; version: number; steps: readonly Step[] },
  transaction: Transaction,
): Promise<number> {
  let resumed = 0;
  for (const channel of ['whatsapp', 'email'] as const) {
    const rows = await resumeChannelPauses(db, { accountId: input.accountId, channel, sequenceId: input.sequenceId, by: 'step' }, transaction);
    resumed += rows.length;
    for (const row of rows) {
      const step = input.steps.find((candidate) => candidate.id === row.step_id);
      if (!step || step.type !== channel) continue;
      await execute(
        db,
        `UPDATE outbox SET body = ?, updated_at = ? WHERE account_id = ? AND channel = ? AND step_id = ? AND status IN ('queued', 'held')
         AND run_id IN (SELECT id FROM sequence_runs WHERE sequence_id = ?)`,
        [JSON.stringify({ step, sequenceId: input.sequenceId, version: input.version }), new Date(), input.accountId, channel, step.id, input.sequenceId],
        transaction,
      );
    }
  }
  return resumed;
}
