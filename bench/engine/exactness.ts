import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../lib/compile';
import { startServer, type RunningServer, type ServerSpec } from '../lib/servers';
import type { EngineBench } from './context';
import { sleep } from './context';
import type { Receiver } from './receiver';
import { seedContacts, seedRuns } from './seed';

// Item 4: runs through tag -> webhook -> exit with the service (node dist/server.js, its engine
// on) and two workers (node dist/worker.js) on one database, one worker killed with SIGKILL
// twice and started again each time; then every run, execution and request is accounted for.

export interface ExactnessResult {
  runs: number;
  seconds: number;
  kills: Array<{ atSteps: number; pid: number }>;
  runStatuses: Array<[string, number]>;
  executions: Array<[string, string, number]>;
  failedReasons: Array<[string, number]>;
  runsNotExactlyOnce: number;
  requests: number;
  distinctKeys: number;
  duplicates: number;
  missingKeys: number;
  unexpectedKeys: number;
  bodyMismatches: number;
}

export function processEnv(url: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: url,
    HOST: '127.0.0.1',
    WEBHOOK_ALLOW_INSECURE: 'true',
    LOG_LEVEL: 'warn',
    SEQUENCE_ENGINE: 'on',
    RATE_LIMIT_PER_MINUTE: '1000000000',
    REDIS_URL: '',
  };
  delete env.NODE_OPTIONS;
  delete env.METRICS_PORT;
  return env;
}

// The service as `npm start` runs it, with the engine on (its default); started before the
// seed, so that its migrations have run.
export async function startService(url: string, logDir: string): Promise<RunningServer> {
  const spec: ServerSpec = {
    name: 'service',
    describe: `node dist/server.js (${REPO}), SEQUENCE_ENGINE=on`,
    command: process.execPath,
    args: [path.join(REPO, 'dist', 'server.js')],
    cwd: REPO,
    env: processEnv(url),
  };
  return startServer(spec, logDir);
}

const workers = new Set<ChildProcess>();
process.on('exit', () => {
  for (const worker of workers) worker.kill('SIGKILL');
});

// `npm run worker` as a process of its own (node dist/worker.js); its output in logDir/name.log.
export function startWorker(url: string, logDir: string, name: string, env: NodeJS.ProcessEnv = {}): ChildProcess {
  const log = fs.openSync(path.join(logDir, `${name}.log`), 'a');
  const child = spawn(process.execPath, [path.join(REPO, 'dist', 'worker.js')], { cwd: REPO, env: { ...processEnv(url), ...env }, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  return child;
}

export async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export async function measureExactness(
  bench: EngineBench,
  service: RunningServer,
  receiver: Receiver,
  runs: number,
  logDir: string,
  progress: (text: string) => void,
): Promise<ExactnessResult> {
  const endpointId = await bench.newEndpoint(receiver.url);
  const sequenceId = await bench.newSequence([
    { id: 'mark', type: 'tag', add: ['exact'] },
    { id: 'hook', type: 'webhook', endpointId },
    { id: 'done', type: 'exit' },
  ]);
  const contacts = await seedContacts(bench.admin, bench.accountId, runs);
  // Due in a few seconds: the service's engine would otherwise take the first batches before
  // the workers are up.
  const startAt = new Date(Date.now() + 5_000);
  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts, count: runs, stepId: 'mark', state: 'due', dueAt: startAt });
  progress(`exactness: ${runs} runs seeded, due at ${startAt.toISOString()}; service pid ${service.pid}`);

  let killed = startWorker(bench.url, logDir, 'worker-1');
  const steady = startWorker(bench.url, logDir, 'worker-2');
  const started = Math.max(Date.now(), startAt.getTime());
  const completed = async () => {
    const [rows] = await bench.admin.query("SELECT COUNT(*) AS c FROM sequence_runs WHERE sequence_id = ? AND status = 'completed'", [sequenceId]);
    return Number((rows as Array<{ c: number }>)[0].c);
  };
  // Steps recorded (3 a run): the kills fall at 40 % and 60 %, while webhook steps are being
  // sent when the runs move in due order (all tags, then the webhooks, then the exits).
  const steps = async () => {
    const [rows] = await bench.admin.query(
      "SELECT COUNT(*) AS c FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id WHERE r.sequence_id = ? AND e.status = 'succeeded'",
      [sequenceId],
    );
    return Number((rows as Array<{ c: number }>)[0].c);
  };
  const killAt = [0.4, 0.6].map((share) => Math.round(runs * 3 * share));
  const kills: ExactnessResult['kills'] = [];
  const bound = Date.now() + 60 * 60_000;
  let lastProgress = Date.now();
  for (;;) {
    const done = await completed();
    if (done >= runs) break;
    if (Date.now() > bound) throw new Error(`exactness: ${done} of ${runs} runs completed after an hour`);
    const recorded = kills.length < killAt.length ? await steps() : 0;
    if (kills.length < killAt.length && recorded >= killAt[kills.length]!) {
      const pid = killed.pid!;
      const exited = new Promise<void>((resolve) => killed.once('exit', () => resolve()));
      killed.kill('SIGKILL');
      await exited;
      kills.push({ atSteps: recorded, pid });
      progress(`exactness: SIGKILL worker pid ${pid} at ${recorded} steps recorded; starting it again`);
      killed = startWorker(bench.url, logDir, 'worker-1');
    }
    if (Date.now() - lastProgress > 15_000) {
      progress(`exactness: ${done} of ${runs} runs completed (${Math.round((Date.now() - started) / 1000)} s)`);
      lastProgress = Date.now();
    }
    await sleep(250);
  }
  const seconds = (Date.now() - started) / 1000;
  // Requests answered after the runs' records (none expected) still count.
  await sleep(1_000);
  await Promise.all([stopWorker(killed), stopWorker(steady)]);

  const query = async <T>(sql: string, params: unknown[]) => (await bench.admin.query(sql, params))[0] as T[];
  const runStatuses = await query<{ status: string; c: number }>(
    'SELECT status, COUNT(*) AS c FROM sequence_runs WHERE sequence_id = ? GROUP BY status ORDER BY status',
    [sequenceId],
  );
  const executions = await query<{ step_id: string; status: string; c: number }>(
    `SELECT e.step_id, e.status, COUNT(*) AS c FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id
     WHERE r.sequence_id = ? GROUP BY e.step_id, e.status ORDER BY e.step_id, e.status`,
    [sequenceId],
  );
  const failedReasons = await query<{ reason: string; c: number }>(
    `SELECT LEFT(COALESCE(e.reason, '(none)'), 80) AS reason, COUNT(*) AS c FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id
     WHERE r.sequence_id = ? AND e.status <> 'succeeded' GROUP BY 1 ORDER BY 2 DESC`,
    [sequenceId],
  );
  // A run is right when it has exactly three succeeded executions, one per step.
  const [wrong] = await query<{ c: number }>(
    `SELECT COUNT(*) AS c FROM sequence_runs r
     LEFT JOIN (SELECT run_id, COUNT(*) AS n, COUNT(DISTINCT step_id) AS steps,
                       SUM(step_id = 'mark') AS mark, SUM(step_id = 'hook') AS hook, SUM(step_id = 'done') AS done
                FROM run_step_executions WHERE status = 'succeeded' GROUP BY run_id) e ON e.run_id = r.id
     WHERE r.sequence_id = ? AND NOT (e.n = 3 AND e.steps = 3 AND e.mark = 1 AND e.hook = 1 AND e.done = 1)
        OR (r.sequence_id = ? AND e.run_id IS NULL)`,
    [sequenceId, sequenceId],
  );
  // The run takes the webhook step once: its key is run_<id>_hook_1 (outbound/channels/webhook.ts).
  const expected = await query<{ id: string }>('SELECT id FROM sequence_runs WHERE sequence_id = ?', [sequenceId]);
  const expectedKeys = new Set(expected.map(({ id }) => `run_${id}_hook_1`));
  let missingKeys = 0;
  for (const key of expectedKeys) if (!receiver.keys.has(key)) missingKeys += 1;
  let unexpectedKeys = 0;
  for (const key of receiver.keys.keys()) if (!expectedKeys.has(key)) unexpectedKeys += 1;
  return {
    runs,
    seconds,
    kills,
    runStatuses: runStatuses.map((row) => [row.status, Number(row.c)]),
    executions: executions.map((row) => [row.step_id, row.status, Number(row.c)]),
    failedReasons: failedReasons.map((row) => [row.reason, Number(row.c)]),
    runsNotExactlyOnce: Number(wrong?.c ?? 0),
    requests: receiver.requests,
    distinctKeys: receiver.keys.size,
    duplicates: receiver.requests - receiver.keys.size,
    missingKeys,
    unexpectedKeys,
    bodyMismatches: receiver.mismatched,
  };
}
