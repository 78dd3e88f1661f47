import type { Database } from '../../db/database';
import type { ClaimedRun, RunResult } from './claimed-run';
import { isTransient, messageOf } from './plan-batch';
import { recordBatch, type RecordedBatch } from './record-batch';

// Records a batch's outcomes (record-batch.ts, one transaction) so that one run whose outcome
// cannot be written does not keep the others from being recorded. When the batch's transaction
// fails for a reason other than the database itself, the batch is recorded in halves, and so on
// down to the run that cannot be recorded: that run alone then fails, `failed` with "cannot
// record: …". Should even that fail, the run is left as it is: its claim runs out and it is
// claimed again, which counts toward setting it aside (run-queue.ts, dead letters). About
// 2·log2(n) transactions find one bad run among n; a database failure is not split (the pass
// fails and the loop backs off).

export interface Unrecorded {
  run: ClaimedRun;
  error: unknown;
  // Whether the run was failed alone ("cannot record: …"); if not, it was left claimed.
  failed: boolean;
}

export async function recordIsolated(
  db: Database,
  results: readonly RunResult[],
  now: Date,
  onUnrecorded: (unrecorded: Unrecorded) => void = () => undefined,
): Promise<RecordedIsolated> {
  if (results.length === 0) return { counts: [], sendsQueued: 0, waitsMatched: 0 };
  try {
    return await recordBatch(db, results, now);
  } catch (error) {
    if (isTransient(error)) throw error;
    if (results.length === 1) return failAlone(db, results[0]!, error, now, onUnrecorded);
    const half = Math.ceil(results.length / 2);
    const first = await recordIsolated(db, results.slice(0, half), now, onUnrecorded);
    const second = await recordIsolated(db, results.slice(half), now, onUnrecorded);
    return { counts: [...first.counts, ...second.counts], sendsQueued: first.sendsQueued + second.sendsQueued, waitsMatched: first.waitsMatched + second.waitsMatched };
  }
}

export type RecordedIsolated = RecordedBatch;

async function failAlone(db: Database, result: RunResult, error: unknown, now: Date, onUnrecorded: (unrecorded: Unrecorded) => void): Promise<RecordedIsolated> {
  const { run } = result;
  // Already the failure of a run that could not be planned: nothing simpler to write.
  if (result.kind === 'end' && result.status === 'failed' && result.reason.startsWith('cannot ')) {
    onUnrecorded({ run, error, failed: false });
    return { counts: [], sendsQueued: 0, waitsMatched: 0 };
  }
  try {
    const counts = await recordBatch(db, [{ run, kind: 'end', status: 'failed', reason: `cannot record: ${messageOf(error)}` }], now);
    onUnrecorded({ run, error, failed: true });
    return counts;
  } catch (again) {
    if (isTransient(again)) throw again;
    onUnrecorded({ run, error: again, failed: false });
    return { counts: [], sendsQueued: 0, waitsMatched: 0 };
  }
}
