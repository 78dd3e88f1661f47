import { openDatabase } from '../../src/db/database';
import { select } from '../../src/db/sql/statements';
import { catchUpProjection } from '../../src/services/events/projection/catch-up';
import { percentile, projectionLagsMs } from './context';
import type { ProbeInfo, TagCaseProbe } from './throughput';

// The projection during the tag case (issue 35): each run log row's lag from its commit to its
// projection's, p99 under 1 s at the engine's full rate; then, once the projection has caught up,
// the change of the sequence's counters over the case against the change of a GROUP BY over its
// runs and executions (the bench seeds its runs with plain INSERTs, which count nowhere: only
// what the engine did is compared).

const TARGET_LAG_P99_MS = 1_000;

export function projectionProbe(url: string): TagCaseProbe {
  let from = 0;
  let before: { counters: Figures; counted: Figures } | undefined;
  return {
    async started(info: ProbeInfo) {
      from = projectionLagsMs.length;
      const db = openDatabase(url);
      try {
        await catchUpProjection(db, 60_000);
        before = { counters: await countersOf(db, info.sequenceId), counted: await groupByOf(db, info.sequenceId) };
      } finally {
        await db.close();
      }
    },
    async finished(info: ProbeInfo) {
      const lags = projectionLagsMs.slice(from);
      const db = openDatabase(url);
      try {
        await catchUpProjection(db, 60_000);
        const counters = minus(await countersOf(db, info.sequenceId), before!.counters);
        const counted = minus(await groupByOf(db, info.sequenceId), before!.counted);
        const same = JSON.stringify(counters) === JSON.stringify(counted);
        return [
          [`projection lag p99 during the tag case (${lags.length} rows, max ${Math.round(Math.max(0, ...lags))} ms)`, `${Math.round(percentile(lags, 99))} ms`, `< ${TARGET_LAG_P99_MS} ms`, percentile(lags, 99) < TARGET_LAG_P99_MS],
          [`counters' change = GROUP BY's change over the case (${JSON.stringify(counters)})`, same ? 'equal' : `GROUP BY ${JSON.stringify(counted)}`, 'equal', same],
        ];
      } finally {
        await db.close();
      }
    },
  };
}

type Figures = { completed: number; completions: number; active: number; waiting: number };

const minus = (a: Figures, b: Figures): Figures => ({
  completed: a.completed - b.completed,
  completions: a.completions - b.completions,
  active: a.active - b.active,
  waiting: a.waiting - b.waiting,
});

async function countersOf(db: ReturnType<typeof openDatabase>, sequenceId: string): Promise<Figures> {
  const sum = async (sql: string) => Number((await select<{ n: number | string | null }>(db, sql, [sequenceId]))[0]?.n ?? 0);
  return {
    completed: await sum("SELECT SUM(runs) AS n FROM sequence_step_days WHERE sequence_id = ? AND outcome = 'completed'"),
    completions: await sum("SELECT SUM(n) AS n FROM sequence_days WHERE sequence_id = ? AND metric = 'completions'"),
    active: await sum('SELECT SUM(runs) AS n FROM sequence_active_runs WHERE sequence_id = ?'),
    waiting: await sum('SELECT SUM(runs) AS n FROM sequence_step_waiting WHERE sequence_id = ?'),
  };
}

async function groupByOf(db: ReturnType<typeof openDatabase>, sequenceId: string): Promise<Figures> {
  const count = async (sql: string) => Number((await select<{ n: number | string | null }>(db, sql, [sequenceId]))[0]?.n ?? 0);
  const active = await count("SELECT COUNT(*) AS n FROM sequence_runs WHERE sequence_id = ? AND status IN ('pending', 'running', 'paused')");
  return {
    completed: await count("SELECT COUNT(*) AS n FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id WHERE r.sequence_id = ? AND e.status = 'succeeded'"),
    completions: await count("SELECT COUNT(*) AS n FROM sequence_runs WHERE sequence_id = ? AND status = 'completed'"),
    active,
    waiting: active,
  };
}
