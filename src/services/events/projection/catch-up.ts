import type { Database } from '../../../db/database';
import { toDate } from '../../../db/sql/rows';
import { select } from '../../../db/sql/statements';
import { projectRunLog } from './projector';

// What a reader of projected figures (the events feed, a sequence's stats, the runs-by-status
// and active-runs gauges) calls first: every run log row committed before the read is applied
// (by this reader, or by the projector it waits behind), so a client reads its own writes, and
// everyone else's that committed before it asked. Bounded: past boundMs the read goes on with
// what is projected, and says how fresh it is.

export const CATCH_UP_BOUND_MS = 2_000;

export interface Freshness {
  // Every change committed before this time is counted (the read's own time when nothing
  // committed before the read is left unprojected).
  asOf: Date;
}

export async function catchUpProjection(db: Database, boundMs = CATCH_UP_BOUND_MS): Promise<Freshness> {
  const asked = new Date();
  const [newest] = await select<{ seq: number | string | null }>(db, 'SELECT MAX(seq) AS seq FROM run_log', []);
  if (newest?.seq === null || newest?.seq === undefined) return { asOf: asked };
  const through = Number(newest.seq);
  const deadline = Date.now() + boundMs;
  for (;;) {
    const [oldest] = await select<{ seq: number | string; created_at: unknown }>(db, 'SELECT seq, created_at FROM run_log ORDER BY seq LIMIT 1', []);
    if (!oldest || Number(oldest.seq) > through) return { asOf: asked };
    if (Date.now() >= deadline) return { asOf: toDate(oldest.created_at) };
    await projectRunLog(db);
  }
}
