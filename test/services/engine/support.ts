import { SequenceEngine, type EngineOptions } from '../../../src/services/engine/engine';
import { releasePendingRuns } from '../../../src/services/sequences/release-runs';
import { caller, silentLogger } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { manualTimers } from '../../support/manual-timers';

// An engine on the test database with a clock the test moves (it starts just after now, so
// that runs enrolled by the test are due at once). The API stamps what it makes due with the
// real clock: after an API call that makes a run due, move the engine's clock past it.
export function engineAt(start = Date.now() + 1, options: Partial<EngineOptions> = {}) {
  const clock = manualTimers(start);
  const engine = new SequenceEngine(testDb(), {
    logger: silentLogger,
    timers: clock.timers,
    webhook: { timeoutMs: 2_000, allowInsecure: true, random: () => 0.5 },
    ...options,
  });
  return { engine, clock, advance: (ms: number) => clock.advance(ms), now: () => clock.now() };
}

// A tenant with an active sequence of these steps and one enrolled contact.
export async function enrolledRun(steps: readonly unknown[], extra: Record<string, unknown> = {}, contactFields: Record<string, unknown> = {}) {
  const tenant = await buildTenant();
  const { sequence } = await caller(tenant.key).sequences.create({ name: 'Engine test', status: 'active', steps, ...extra } as never);
  const contact = await buildContact(tenant.accountId, contactFields);
  await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
  const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
  const timeline = async () => (await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run;
  return { ...tenant, sequence, contact, runId: run!.id, timeline };
}

// What the maintenance task of the process does after a sequence is set active again or gets a
// new sending window (src/services/sequences/release-runs.ts): the released runs are due.
export async function releaseRecorded(): Promise<number> {
  const { released, more } = await releasePendingRuns(testDb(), { chunkSize: 1_000, maxChunks: 1_000 });
  if (more) throw new Error('releases left after 1,000 chunks');
  return released;
}
