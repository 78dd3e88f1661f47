import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, select } from '../../db/sql/statements';
import type { Step } from '../../schemas/sequence-definition';
import { resumeChannelPauses } from '../channels/channel-pauses';

// A sequence's steps saved: its steps' template pauses (a template Graph refused: 132000 and
// kin) resume. The sends that waited for them carry the step as their run's version had it
// (engine/outbound/channels/message-body.ts), the very template that was refused: they take the
// step as saved now (a read and an UPDATE per paused step), so the fix is what goes out. The sends are
// written before the pauses are deleted: the lock order of the outcomes' record (outbox rows,
// then channel_pauses). Answers how many pauses resumed.
export async function resumeStepPauses(
  db: Database,
  input: { accountId: string; sequenceId: string; version: number; steps: readonly Step[] },
  transaction: Transaction,
): Promise<number> {
  const paused = await select<{ channel: string; step_id: string | null }>(
    db,
    'SELECT channel, step_id FROM channel_pauses WHERE account_id = ? AND sequence_id = ?',
    [input.accountId, input.sequenceId],
    transaction,
  );
  if (paused.length === 0) return 0;
  for (const { channel, step_id: stepId } of paused) {
    const step = input.steps.find((candidate) => candidate.id === stepId);
    if (!step || step.type !== channel) continue;
    // Read first (no lock), then written by id: the UPDATE locks outbox rows only, never the
    // runs an outcome's record may hold.
    const waiting = await select<{ id: string }>(
      db,
      `SELECT o.id FROM outbox o JOIN sequence_runs r ON r.id = o.run_id
       WHERE o.account_id = ? AND o.channel = ? AND o.step_id = ? AND o.status IN ('queued', 'held') AND r.sequence_id = ?`,
      [input.accountId, channel, step.id, input.sequenceId],
      transaction,
    );
    const body = JSON.stringify({ step, sequenceId: input.sequenceId, version: input.version });
    for (let i = 0; i < waiting.length; i += 1_000) {
      await execute(
        db,
        "UPDATE outbox SET body = ?, updated_at = ? WHERE id IN (?) AND status IN ('queued', 'held')",
        [body, new Date(), waiting.slice(i, i + 1_000).map((row) => row.id)],
        transaction,
      );
    }
  }
  let resumed = 0;
  for (const channel of new Set(paused.map((row) => row.channel))) {
    resumed += (await resumeChannelPauses(db, { accountId: input.accountId, channel: channel as 'email' | 'whatsapp', sequenceId: input.sequenceId, by: 'step' }, transaction)).length;
  }
  return resumed;
}
