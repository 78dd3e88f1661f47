import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { Step } from '../../schemas/sequence-definition';
import { utcDay } from './progress-counters';

// The stats' conversions, split variants and wait_for outcomes (docs/analytics.md "Conversions,
// variants and waits"): read from the runs and their executions at the time of the read, not
// projected into counters like the rest of the stats. Each statement finds only the rows it
// counts, by index (db/migrations/20261227000200-add-conversion-stats-indexes.js): a sequence's
// conversions in the window, and the executions of its split and wait_for steps; a sequence
// without such steps or conversions costs two range reads that find nothing.

// A run converted: it completed because its contact met the sequence's goal.
const GOAL_MET = 'goal_met';

export interface ConversionStats {
  total: number;
  days: Array<{ date: string; conversions: number }>;
  steps: Array<{ stepId: string; converted: number }>;
}

export interface VariantStats {
  stepId: string;
  variant: string;
  reached: number;
  converted: number;
}

export interface WaitStats {
  stepId: string;
  matched: number;
  timedOut: number;
}

export interface ConversionFigures {
  conversions: ConversionStats;
  variants: VariantStats[];
  waits: WaitStats[];
}

export async function conversionFigures(
  db: Database,
  input: {
    accountId: string;
    sequenceId: string;
    // The window: [start, end), whole UTC days.
    start: Date;
    end: Date;
    // The stats' steps, in their order; the current version's steps; every version's, newest first.
    stepIds: readonly string[];
    current: readonly Step[];
    versions: ReadonlyArray<readonly Step[]>;
  },
): Promise<ConversionFigures> {
  const { sequenceId, start, end } = input;
  const converted = `r.sequence_id = ? AND r.reason = '${GOAL_MET}' AND r.status = 'completed' AND r.completed_at >= ? AND r.completed_at < ?`;
  // SUBSTR of the stored time: SQLite keeps 'YYYY-MM-DD HH:MM:SS.SSS +00:00', MariaDB's DATETIME
  // reads as 'YYYY-MM-DD HH:MM:SS.SSS', both in UTC (the connection's zone).
  const dayRows = await select<{ day: string; n: number | string }>(
    db,
    `SELECT SUBSTR(r.completed_at, 1, 10) AS day, COUNT(*) AS n FROM sequence_runs r WHERE ${converted} GROUP BY SUBSTR(r.completed_at, 1, 10)`,
    [sequenceId, start, end],
  );
  const total = dayRows.reduce((sum, row) => sum + Number(row.n), 0);
  const stepRows =
    total === 0
      ? []
      : await select<{ step_id: string; n: number | string }>(
          db,
          `SELECT e.step_id, COUNT(DISTINCT e.run_id) AS n FROM sequence_runs r JOIN run_step_executions e ON e.run_id = r.id WHERE ${converted} GROUP BY e.step_id`,
          [sequenceId, start, end],
        );

  const byDay = new Map(dayRows.map((row) => [String(row.day), Number(row.n)]));
  const days: ConversionStats['days'] = [];
  for (let t = start.getTime(); t < end.getTime(); t += 86_400_000) {
    const date = utcDay(new Date(t));
    days.push({ date, conversions: byDay.get(date) ?? 0 });
  }
  const perStep = new Map(input.stepIds.map((stepId) => [stepId, 0]));
  for (const row of stepRows) perStep.set(row.step_id, Number(row.n));

  const { variants, waits } = await branchFigures(db, input);
  return {
    conversions: { total, days, steps: [...perStep].map(([stepId, n]) => ({ stepId, converted: n })) },
    variants,
    waits,
  };
}

// The split and wait_for steps' figures over the window: per variant, the runs that took it and
// those of them that have converted (by now); per wait_for step, its waits that ended matched
// and timed out. One statement, grouped by what the executions recorded.
async function branchFigures(
  db: Database,
  input: { accountId: string; sequenceId: string; start: Date; end: Date; stepIds: readonly string[]; current: readonly Step[]; versions: ReadonlyArray<readonly Step[]> },
): Promise<{ variants: VariantStats[]; waits: WaitStats[] }> {
  // Every version's split and wait_for steps: an older version's runs may still be counted.
  const splitIds = new Set<string>();
  const waitIds = new Set<string>();
  const variantOrder = new Map<string, string[]>();
  for (const steps of input.versions) {
    for (const step of steps) {
      if (step.type === 'split') {
        splitIds.add(step.id);
        const known = variantOrder.get(step.id) ?? [];
        for (const variant of step.variants) if (!known.includes(variant.id)) known.push(variant.id);
        variantOrder.set(step.id, known);
      } else if (step.type === 'wait_for') waitIds.add(step.id);
    }
  }
  if (splitIds.size === 0 && waitIds.size === 0) return { variants: [], waits: [] };

  const text = (path: string) =>
    db.dialect === 'sqlite'
      ? `CASE WHEN json_valid(e.detail) THEN json_extract(e.detail, '${path}') END`
      : `CASE WHEN JSON_VALID(e.detail) THEN JSON_UNQUOTE(JSON_EXTRACT(e.detail, '${path}')) END`;
  // `e.type IN (...)` as written in the index's WHERE: SQLite's partial index needs it.
  const rows = await select<{ step_id: string; type: string; variant: string | null; outcome: string | null; executions: number | string; runs: number | string; converted: number | string }>(
    db,
    `SELECT e.step_id, e.type, ${text('$.variant')} AS variant, ${text('$.outcome')} AS outcome, COUNT(*) AS executions, COUNT(DISTINCT e.run_id) AS runs,
       COUNT(DISTINCT CASE WHEN r.status = 'completed' AND r.reason = '${GOAL_MET}' THEN r.id END) AS converted
     FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id
     WHERE e.account_id = ? AND e.step_id IN (?) AND e.type IN ('split', 'wait_for') AND e.status = 'succeeded'
       AND e.finished_at >= ? AND e.finished_at < ? AND r.sequence_id = ?
     GROUP BY e.step_id, e.type, ${text('$.variant')}, ${text('$.outcome')}`,
    [input.accountId, [...splitIds, ...waitIds], input.start, input.end, input.sequenceId],
  );

  // The stats' step order, then the steps only older versions have.
  const order = [...input.stepIds, ...splitIds, ...waitIds];
  const rank = (stepId: string) => order.indexOf(stepId);
  const currentSplits = input.current.filter((step) => step.type === 'split');
  const currentWaits = input.current.filter((step) => step.type === 'wait_for');

  const variants = new Map<string, VariantStats>();
  const variantOf = (stepId: string, variant: string) => {
    const key = JSON.stringify([stepId, variant]);
    let stats = variants.get(key);
    if (!stats) variants.set(key, (stats = { stepId, variant, reached: 0, converted: 0 }));
    return stats;
  };
  // The current version's variants, each with or without runs.
  for (const step of currentSplits) for (const variant of step.variants) variantOf(step.id, variant.id);
  const waits = new Map<string, WaitStats>();
  const waitOf = (stepId: string) => {
    let stats = waits.get(stepId);
    if (!stats) waits.set(stepId, (stats = { stepId, matched: 0, timedOut: 0 }));
    return stats;
  };
  for (const step of currentWaits) waitOf(step.id);

  for (const row of rows) {
    if (row.type === 'split' && splitIds.has(row.step_id) && row.variant !== null) {
      // A run visiting the split again takes the same variant (a hash of the run and the step).
      const stats = variantOf(row.step_id, String(row.variant));
      stats.reached += Number(row.runs);
      stats.converted += Number(row.converted);
    } else if (row.type === 'wait_for' && waitIds.has(row.step_id)) {
      if (row.outcome === 'matched') waitOf(row.step_id).matched += Number(row.executions);
      else if (row.outcome === 'timed_out') waitOf(row.step_id).timedOut += Number(row.executions);
    }
  }

  const variantRank = (stats: VariantStats) => {
    const known = variantOrder.get(stats.stepId) ?? [];
    return known.includes(stats.variant) ? known.indexOf(stats.variant) : known.length;
  };
  return {
    variants: [...variants.values()].sort(
      (a, b) => rank(a.stepId) - rank(b.stepId) || variantRank(a) - variantRank(b) || a.variant.localeCompare(b.variant),
    ),
    waits: [...waits.values()].sort((a, b) => rank(a.stepId) - rank(b.stepId)),
  };
}
