import type { Database } from '../../db/database';

// suppressions_total{channel,reason} (src/metrics/metrics.ts reads it when scraped): the
// suppressions this process added, counted in addSuppressions once its transaction commits,
// so every writer (the API, the dashboard, the command line, the engine, the bounce listener,
// provider webhooks, WhatsApp opt-outs) is counted without passing anything. Per database, as
// the transaction counters are: an app and its engine share one.

const tallies = new WeakMap<Database, Map<string, number>>();

export function suppressionTally(db: Database): Map<string, number> {
  let tally = tallies.get(db);
  if (!tally) tallies.set(db, (tally = new Map()));
  return tally;
}

// Keys are `channel reason`.
export function countAdded(db: Database, added: ReadonlyArray<{ channel: string; reason: string }>): void {
  const tally = suppressionTally(db);
  for (const { channel, reason } of added) tally.set(`${channel} ${reason}`, (tally.get(`${channel} ${reason}`) ?? 0) + 1);
}
