import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SequenceEngine, type EngineOptions } from '../../../src/services/engine/engine';
import { webhookChannel } from '../../../src/services/engine/outbound/channels/webhook';
import { claimSends, sendGroups } from '../../../src/services/runs/outbox';
import { releasePendingRuns } from '../../../src/services/sequences/release-runs';
import { caller, silentLogger } from '../../support/app';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { manualTimers } from '../../support/manual-timers';
import { startReceiver } from '../../support/webhook-receiver';

// An engine on the test database with a clock the test moves (it starts just after now, so
// that runs enrolled by the test are due at once). The API stamps what it makes due with the
// real clock: after an API call that makes a run due, move the engine's clock past it.
// Email steps: no SMTP server unless the test gives one (messages captured under a folder of
// its own), unsubscribe links signed with a fresh key.
export function engineAt(start = Date.now() + 1, options: Partial<EngineOptions> = {}) {
  const clock = manualTimers(start);
  const messages = options.messages ?? { settings: channelSettings({ emailFrom: 'Shop <shop@example.com>' }), outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) };
  const engine = new SequenceEngine(testDb(), {
    logger: silentLogger,
    timers: clock.timers,
    webhook: { timeoutMs: 2_000, allowInsecure: true, random: () => 0.5 },
    ...options,
    messages,
  });
  return { engine, clock, messages, advance: (ms: number) => clock.advance(ms), now: () => clock.now() };
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

// A dispatcher that claims every due send and sends it, then dies before recording any outcome
// (its claims keep their lease, leaseMs). Answers what it claimed.
export async function dispatchAndDie(now: Date, options: { leaseMs?: number; send?: boolean } = {}) {
  const db = testDb();
  const { queued } = await sendGroups(db);
  const claim = await claimSends(db, now, queued.map((group) => ({ group, limit: 100 })), { leaseMs: options.leaseMs ?? 60_000, takeInterrupted: false });
  if (options.send !== false && claim.sending.length > 0) {
    const send = await webhookChannel({ timeoutMs: 2_000, allowInsecure: true, now: () => now }).load(db, claim.sending);
    for (const claimed of claim.sending) await send(claimed, new AbortController().signal);
  }
  return claim;
}

// A receiver whose answers the test gives: `answer(i)` says what request i gets (a status, or
// 'hold': no answer until the test calls release(i, status)). Records when each request came
// and when it was answered (real time), to show which requests were on the wire together.
export async function heldReceiver(answer: (index: number) => number | 'hold') {
  const releases = new Map<number, (status: number) => void>();
  const answeredAt = new Map<number, number>();
  const waiting = new Map<number, Array<() => void>>();
  const receiver = await startReceiver((_request, index) => {
    const given = answer(index);
    const arrived = () => waiting.get(index)?.forEach((resolve) => resolve());
    setImmediate(arrived);
    if (given !== 'hold') {
      answeredAt.set(index, Date.now());
      return given;
    }
    return new Promise<number>((resolve) => releases.set(index, (status) => {
      answeredAt.set(index, Date.now());
      resolve(status);
    }));
  });
  return {
    ...receiver,
    answeredAt,
    // Resolves once request `index` has arrived.
    arrived(index: number): Promise<void> {
      if (receiver.received.length > index) return Promise.resolve();
      return new Promise((resolve) => waiting.set(index, [...(waiting.get(index) ?? []), resolve]));
    },
    release(index: number, status: number): void {
      const release = releases.get(index);
      if (!release) throw new Error(`request ${index} is not held`);
      releases.delete(index);
      release(status);
    },
    ids: () => receiver.received.map((request) => request.headers['webhook-id'] as string),
  };
}

// Drives a started engine on manual timers: fires its timers (each a pass; the clock jumps to
// it) until done() holds, at most maxPasses. Answers the waits the loop chose meanwhile.
export async function driveUntil(clock: ReturnType<typeof manualTimers>, done: () => Promise<boolean>, maxPasses = 200): Promise<number[]> {
  const waits: number[] = [];
  for (let pass = 0; pass < maxPasses; pass += 1) {
    if (await done()) return waits;
    waits.push(await clock.nextWait());
    clock.fire();
    // Let the pass's statements and any answer that came in run.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`not done after ${maxPasses} passes; waits: ${waits.join(', ')}`);
}
