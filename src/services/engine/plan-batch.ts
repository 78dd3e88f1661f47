import type { Database } from '../../db/database';
import { isDatabaseUnavailable } from '../../db/sql/unavailable';
import { StatementTimeoutError } from '../../db/statement-deadline';
import { ServiceUnavailableError } from '../../errors/app-errors';
import type { Step } from '../../schemas/sequence-definition';
import { readVersions, versionKey } from '../runs/sequence-versions';
import { planRun } from './plan-run';
import type { ClaimedRun, RunResult } from './claimed-run';

// Plans a pass's claimed runs one at a time (plan-run.ts), so that a run whose stored data this
// version cannot plan (JSON that does not parse, a step of a type it does not know, a step
// whose fields it cannot read) fails alone, `failed` with "cannot plan: …", and the rest of the
// batch goes on. Before, one such run failed the whole pass, and kept every run claimed with it
// claimed until the lease ended, again and again.

export interface PlannedBatch {
  results: RunResult[];
  // The runs that could not be planned (each fails alone), with why.
  unplannable: Array<{ run: ClaimedRun; reason: string }>;
}

export async function planBatch(db: Database, runs: readonly ClaimedRun[], now: Date): Promise<PlannedBatch> {
  const versions = await readEachVersion(db, runs);
  const planned: PlannedBatch = { results: [], unplannable: [] };
  for (const run of runs) {
    let result: RunResult;
    try {
      if (run.unreadable) throw new Error(run.unreadable);
      const steps = versions.get(versionKey(run.sequenceId, run.version));
      if (steps instanceof Error) throw steps;
      result = planRun(run, steps, now);
    } catch (error) {
      if (isTransient(error)) throw error;
      result = cannotPlan(run, error);
      planned.unplannable.push({ run, reason: result.kind === 'end' ? result.reason : '' });
    }
    planned.results.push(result);
  }
  return planned;
}

export function cannotPlan(run: ClaimedRun, error: unknown): RunResult {
  return { run, kind: 'end', status: 'failed', reason: `cannot plan: ${messageOf(error)}` };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// The database failing, not the data: the pass fails and is tried again (the loop's backoff).
export function isTransient(error: unknown): boolean {
  return error instanceof ServiceUnavailableError || error instanceof StatementTimeoutError || isDatabaseUnavailable(error);
}

// Each version's steps, read together; when that fails on one version's data, each version
// alone, so that the others are still planned.
async function readEachVersion(db: Database, runs: readonly ClaimedRun[]): Promise<Map<string, Step[] | Error>> {
  const wanted = runs.map((run) => ({ sequenceId: run.sequenceId, version: run.version }));
  try {
    return await readVersions(db, wanted);
  } catch (error) {
    if (isTransient(error)) throw error;
  }
  const read = new Map<string, Step[] | Error>();
  for (const one of wanted) {
    const key = versionKey(one.sequenceId, one.version);
    if (read.has(key)) continue;
    try {
      const steps = (await readVersions(db, [one])).get(key);
      if (steps) read.set(key, steps);
    } catch (error) {
      if (isTransient(error)) throw error;
      read.set(key, new Error(`the steps of version ${one.version} cannot be read: ${messageOf(error)}`));
    }
  }
  return read;
}
