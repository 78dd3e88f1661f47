import { spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../lib/compile';
import type { EngineBench } from './context';
import { sleep } from './context';
import { cpuSpan, type CpuSpan } from './cpu';
import { startWorker, stopWorker } from './exactness';
import { TAG_STEP } from './floor-compare';
import { seedContacts, seedRuns } from './seed';

// Two engines on one database (issue 35): `npm run worker` as processes (node dist/worker.js),
// first one alone, then two side by side, each over `runs` one-step tag runs of a sequence of
// its own. The runs are seeded far ahead and made due in one UPDATE once the workers are up (and
// warm: 2,000 runs first); the rate is from that UPDATE's commit to the last run completed
// (polled every 100 ms). Then every step recorded twice is counted: succeeded executions per
// (run, step, visit), more than one.

export interface EnginesCase {
  workers: number;
  runs: number;
  seconds: number;
  perSecond: number;
  completed: number;
  // (run, step, visit) with more than one succeeded execution
  doubled: number;
  cpu: CpuSpan;
}

const WARM = 2_000;
const FAR = new Date('2100-01-01T00:00:00.000Z');

export function buildDist(): void {
  const result = spawnSync(process.execPath, [path.join(REPO, 'scripts', 'build-if-stale.js')], { cwd: REPO, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('building dist/ failed');
}

async function untilUp(logDir: string, names: string[], boundMs = 60_000): Promise<void> {
  const bound = Date.now() + boundMs;
  for (const name of names) {
    const file = path.join(logDir, `${name}.log`);
    while (!(fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('worker running'))) {
      if (Date.now() > bound) throw new Error(`${name} did not log "worker running" within ${boundMs} ms (${file})`);
      await sleep(100);
    }
  }
}

async function completedOf(bench: EngineBench, sequenceId: string): Promise<number> {
  const [rows] = await bench.admin.query("SELECT COUNT(*) AS c FROM sequence_runs WHERE sequence_id = ? AND status = 'completed'", [sequenceId]);
  return Number((rows as Array<{ c: number }>)[0].c);
}

// Makes the sequence's runs due now; answers when every one has completed (or the bound passed).
async function release(bench: EngineBench, sequenceId: string, runs: number, boundMs: number): Promise<{ seconds: number; completed: number }> {
  await bench.admin.query('UPDATE sequence_runs SET due_at = ? WHERE sequence_id = ?', [new Date(Date.now() - 1000), sequenceId]);
  const started = performance.now();
  let completed = 0;
  while (performance.now() - started < boundMs) {
    completed = await completedOf(bench, sequenceId);
    if (completed >= runs) break;
    await sleep(100);
  }
  return { seconds: (performance.now() - started) / 1000, completed };
}

export async function measureEngines(bench: EngineBench, workers: number, runs: number, logDir: string, dbPid: number | undefined): Promise<EnginesCase> {
  const contacts = await seedContacts(bench.admin, bench.accountId, runs + WARM);
  const warm = await bench.newSequence([TAG_STEP as never]);
  const measured = await bench.newSequence([TAG_STEP as never]);
  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId: warm, contacts, count: WARM, contactOffset: runs, stepId: TAG_STEP.id, state: 'due', dueAt: FAR });
  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId: measured, contacts, count: runs, stepId: TAG_STEP.id, state: 'due', dueAt: FAR });
  const names = Array.from({ length: workers }, (_, i) => `engines-${workers}-worker-${i + 1}`);
  const children: ChildProcess[] = names.map((name) => startWorker(bench.url, logDir, name, { LOG_LEVEL: 'info' }));
  try {
    await untilUp(logDir, names);
    const warmed = await release(bench, warm, WARM, 120_000);
    if (warmed.completed < WARM) throw new Error(`two-engines: warm-up ${warmed.completed} of ${WARM} runs completed`);
    const cpu = cpuSpan(dbPid, children.map((child) => child.pid!));
    const { seconds, completed } = await release(bench, measured, runs, 30 * 60_000);
    const used = cpu.end();
    const [rows] = await bench.admin.query(
      `SELECT COUNT(*) AS c FROM (
         SELECT e.run_id FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id
         WHERE r.sequence_id IN (?, ?) AND e.status = 'succeeded' GROUP BY e.run_id, e.step_id, e.visit HAVING COUNT(*) > 1) d`,
      [warm, measured],
    );
    return { workers, runs, seconds, perSecond: completed / seconds, completed, doubled: Number((rows as Array<{ c: number }>)[0].c), cpu: used };
  } finally {
    await Promise.all(children.map((child) => stopWorker(child)));
  }
}
