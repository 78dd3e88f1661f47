import { createApiKey } from '../../src/services/api-keys';
import { REPO } from '../lib/compile';
import { startServer, type RunningServer } from '../lib/servers';
import path from 'node:path';
import type { EngineBench } from './context';
import { sleep } from './context';
import { processEnv } from './exactness';
import { seedContacts, seedRuns } from './seed';

// Issue 27 item 5: a big sequence stays operable. `runs` runs in one sequence, and the two
// changes that used to update them all inside the request:
// - unpark: the runs were set aside while the sequence was paused (due_at NULL); PATCH status
//   active;
// - window: the runs are held for the window's opening (pending, step not begun, due tomorrow);
//   PATCH a new sendingWindow.
// Each is sent to the service (node dist/server.js, its engine off so that the release is
// measured alone) as a client sends it; printed: the PATCH's latency, and the time from the
// PATCH until the service's maintenance task has released every run (its release row gone,
// then every run checked due).

export interface ReleaseCase {
  kind: 'unpark' | 'window';
  runs: number;
  seedSeconds: number;
  patchMs: number;
  patchStatus: number;
  releasedSeconds: number;
  leftUnreleased: number;
  // unpark only: the same runs set aside again and released by the single UPDATE the PATCH sent
  // before (park-runs.ts's unparkRuns), timed on the driver's connection (no statement deadline;
  // the service's is 3 s).
  singleUpdateSeconds?: number;
}

export async function measureRelease(
  bench: EngineBench,
  runs: number,
  logDir: string,
  progress: (text: string) => void,
): Promise<ReleaseCase[]> {
  const service = await startServer(
    {
      name: 'service-release',
      describe: 'node dist/server.js, SEQUENCE_ENGINE=off',
      command: process.execPath,
      args: [path.join(REPO, 'dist', 'server.js')],
      cwd: REPO,
      env: { ...processEnv(bench.url), SEQUENCE_ENGINE: 'off', WEBHOOK_DISPATCHER: 'off' },
    },
    logDir,
  );
  try {
    const { key } = await createApiKey(bench.db, { accountId: bench.accountId, name: 'bench release' });
    const seedStarted = performance.now();
    const contacts = await seedContacts(bench.admin, bench.accountId, runs);
    const contactSeconds = (performance.now() - seedStarted) / 1000;
    progress(`release: ${runs} contacts seeded in ${contactSeconds.toFixed(0)} s`);
    const results: ReleaseCase[] = [];

    // Unpark: a paused sequence whose runs the engine set aside.
    {
      const started = performance.now();
      const sequenceId = await bench.newSequence([{ id: 'mark', type: 'tag', add: ['released'] }]);
      await patch(service, key, sequenceId, { status: 'paused' });
      await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts, count: runs, stepId: 'mark', state: 'due', dueAt: null });
      await bench.admin.query('ANALYZE TABLE sequence_runs');
      const seedSeconds = contactSeconds + (performance.now() - started) / 1000;
      progress(`release: ${runs} runs set aside in a paused sequence; PATCH status active`);
      const timed = await timeRelease(bench, service, key, sequenceId, { status: 'active' }, 'due_at IS NULL');
      await bench.admin.query("UPDATE sequence_runs SET due_at = NULL WHERE sequence_id = ? AND status IN ('pending', 'running')", [sequenceId]);
      progress('release: the same runs set aside again, released by the single UPDATE of before');
      const single = performance.now();
      await bench.admin.query(
        "UPDATE sequence_runs SET due_at = ? WHERE sequence_id = ? AND status IN ('pending', 'running') AND current_step_id IS NOT NULL AND due_at IS NULL",
        [new Date(), sequenceId],
      );
      results.push({ kind: 'unpark', runs, seedSeconds, ...timed, singleUpdateSeconds: (performance.now() - single) / 1000 });
    }
    // Window: runs held until tomorrow's opening; the window is removed.
    {
      const started = performance.now();
      const sequenceId = await bench.newSequence([{ id: 'mark', type: 'tag', add: ['released'] }]);
      await patch(service, key, sequenceId, { sendingWindow: { timeZone: 'UTC', from: '09:00', to: '10:00' } });
      const tomorrow = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000 + 9 * 3_600_000);
      await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts, count: runs, stepId: 'mark', state: 'due', dueAt: tomorrow });
      await bench.admin.query('ANALYZE TABLE sequence_runs');
      const seedSeconds = contactSeconds + (performance.now() - started) / 1000;
      progress(`release: ${runs} runs held for tomorrow's window; PATCH sendingWindow null`);
      results.push({ kind: 'window', runs, seedSeconds, ...(await timeRelease(bench, service, key, sequenceId, { sendingWindow: null }, 'due_at > NOW(3)')) });
    }
    return results;
  } finally {
    await service.stop();
  }
}

async function patch(service: RunningServer, key: string, sequenceId: string, body: unknown): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${service.base}/api/v1/sequences/${sequenceId}`, {
    method: 'PATCH',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`PATCH ${JSON.stringify(body)} answered ${res.status}`);
  return { status: res.status, ms };
}

async function timeRelease(
  bench: EngineBench,
  service: RunningServer,
  key: string,
  sequenceId: string,
  body: unknown,
  unreleased: string,
): Promise<Pick<ReleaseCase, 'patchMs' | 'patchStatus' | 'releasedSeconds' | 'leftUnreleased'>> {
  const started = performance.now();
  const answer = await patch(service, key, sequenceId, body);
  // Done when the release's row is gone (the walk deletes it after the last chunk).
  for (;;) {
    const [rows] = await bench.admin.query('SELECT COUNT(*) AS c FROM sequence_run_releases WHERE sequence_id = ?', [sequenceId]);
    if (Number((rows as Array<{ c: number }>)[0]!.c) === 0) break;
    await sleep(100);
  }
  const releasedSeconds = (performance.now() - started) / 1000;
  const [left] = await bench.admin.query(
    `SELECT COUNT(*) AS c FROM sequence_runs WHERE sequence_id = ? AND status IN ('pending', 'running') AND ${unreleased}`,
    [sequenceId],
  );
  return { patchMs: answer.ms, patchStatus: answer.status, releasedSeconds, leftUnreleased: Number((left as Array<{ c: number }>)[0]!.c) };
}
