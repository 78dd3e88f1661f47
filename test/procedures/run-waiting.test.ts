import { expect } from 'chai';
import { DateTime } from 'luxon';
import { releasePendingRuns } from '../../src/services/sequences/release-runs';
import { createWebhook } from '../../src/services/webhooks/endpoints';
import { caller } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { engineNow } from '../support/sequence-definitions';
import { startReceiver } from '../support/webhook-receiver';

// What a waiting run waits for, and until when (docs/sequences.md "How runs move"): `dueAt` and
// `waitingFor` on a run's detail and in the run lists, derived from the run as stored; a wait's
// execution shows when it ends.

type CreateInput = Parameters<ReturnType<typeof caller>['sequences']['create']>[0];

async function enrolledIn(input: Record<string, unknown>) {
  const tenant = await buildTenant();
  const { sequence } = await caller(tenant.key).sequences.create({ name: 'Waiting', status: 'active', ...input } as CreateInput);
  const contact = await buildContact(tenant.accountId);
  await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
  const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
  return { ...tenant, sequenceId: sequence.id, contactId: contact.id, runId: run!.id };
}

// The run as its detail, the sequence's list and the contact's list show it: the same each time.
async function where(key: string, sequenceId: string, contactId: string, runId: string) {
  const { run } = await caller(key).sequences.run({ id: sequenceId, runId });
  const [listed] = (await caller(key).sequences.runs({ id: sequenceId })).runs;
  const [ofContact] = (await caller(key).contacts.runs({ id: contactId })).runs;
  expect({ dueAt: listed!.dueAt, waitingFor: listed!.waitingFor }, 'the sequence\'s run list').to.deep.equal({ dueAt: run.dueAt, waitingFor: run.waitingFor });
  expect({ dueAt: ofContact!.dueAt, waitingFor: ofContact!.waitingFor }, 'the contact\'s run list').to.deep.equal({ dueAt: run.dueAt, waitingFor: run.waitingFor });
  return run;
}

const WAIT = [{ id: 'w', type: 'wait', duration: 'P1D' }, { id: 'end', type: 'exit' }];

describe('what a waiting run waits for (procedures)', () => {
  it('a new run is due now, waiting for nothing', async () => {
    const { key, sequenceId, contactId, runId } = await enrolledIn({ steps: WAIT });
    const run = await where(key, sequenceId, contactId, runId);
    expect(run.waitingFor).to.equal(null);
    expect(run.dueAt).to.equal(run.createdAt);
  });

  it('a run in a wait waits for the wait, until its end; the wait\'s execution shows that end, kept while the run is paused', async () => {
    const { key, sequenceId, contactId, runId } = await enrolledIn({ steps: WAIT });
    const { engine } = engineNow();
    await engine.runOnce();
    const run = await where(key, sequenceId, contactId, runId);
    const started = run.executions[0]!.startedAt;
    const end = new Date(Date.parse(started) + 86_400_000).toISOString();
    expect(run).to.include({ status: 'running', waitingFor: 'wait', dueAt: end });
    expect(run.executions).to.deep.equal([
      { stepId: 'w', type: 'wait', attempt: 1, status: 'running', reason: null, detail: null, startedAt: started, finishedAt: null, endsAt: end, message: null },
    ]);

    await caller(key).sequences.pauseRun({ id: sequenceId, runId });
    const paused = await where(key, sequenceId, contactId, runId);
    expect(paused).to.include({ status: 'paused', waitingFor: null, dueAt: null });
    expect(paused.executions[0]!.endsAt).to.equal(end);
    await caller(key).sequences.resumeRun({ id: sequenceId, runId });
    expect(await where(key, sequenceId, contactId, runId)).to.include({ waitingFor: 'wait', dueAt: end });
  });

  it('a run whose step comes due outside the sending window waits for the window, until its next opening', async () => {
    // A one-hour window six hours from now (UTC): closed now, whatever the time of the test.
    const now = DateTime.utc();
    const hour = (now.hour + 6) % 24;
    const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;
    const sendingWindow = { timeZone: 'UTC', from: hh(hour), to: hour === 23 ? '24:00' : hh(hour + 1) };
    const { key, sequenceId, contactId, runId } = await enrolledIn({ steps: [{ id: 't', type: 'tag', add: ['x'] }], sendingWindow });
    const { engine } = engineNow();
    await engine.runOnce();
    let opening = now.startOf('day').set({ hour });
    if (opening <= now) opening = opening.plus({ days: 1 });
    const run = await where(key, sequenceId, contactId, runId);
    expect(run).to.include({ status: 'pending', waitingFor: 'window', dueAt: opening.toISO() });
    expect(run.executions).to.deep.equal([]);
  });

  it('a webhook step whose attempt failed waits for the retry, until the next attempt', async () => {
    const receiver = await startReceiver(() => 503);
    try {
      const tenant = await buildTenant();
      const { webhook } = await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url }, { allowInsecure: true, now: () => new Date() });
      const { sequence } = await caller(tenant.key).sequences.create({ name: 'Hook', status: 'active', steps: [{ id: 'h', type: 'webhook', endpointId: webhook.id }] });
      const contact = await buildContact(tenant.accountId);
      await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
      const { engine } = engineNow();
      await engine.runOnce();
      expect(receiver.received).to.have.length(1);
      const [listed] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
      const run = await where(tenant.key, sequence.id, contact.id, listed!.id);
      const failed = run.executions[0]!;
      expect(failed).to.include({ status: 'failed', attempt: 1, endsAt: null });
      expect(run.waitingFor).to.equal('retry');
      // 5 s after the attempt ended (the engine's random is 0.5: no jitter).
      expect(Date.parse(run.dueAt!) - Date.parse(failed.finishedAt!)).to.equal(5_000);
    } finally {
      await receiver.close();
    }
  });

  it('a run of a sequence that is not active waits for the sequence, with no time, set aside or not', async () => {
    const { key, sequenceId, contactId, runId } = await enrolledIn({ steps: WAIT });
    await caller(key).sequences.update({ id: sequenceId, status: 'paused' });
    expect(await where(key, sequenceId, contactId, runId)).to.include({ status: 'pending', waitingFor: 'sequence_paused', dueAt: null });
    // The engine sets it aside (nothing due); the same answer.
    const { engine } = engineNow();
    await engine.runOnce();
    expect(await where(key, sequenceId, contactId, runId)).to.include({ status: 'pending', waitingFor: 'sequence_paused', dueAt: null });
    await caller(key).sequences.update({ id: sequenceId, status: 'active' });
    // The release the PATCH recorded, carried out as the maintenance task does after the answer.
    await releasePendingRuns(testDb(), { chunkSize: 1_000, maxChunks: 1_000 });
    const again = await where(key, sequenceId, contactId, runId);
    expect(again.waitingFor).to.equal(null);
    expect(again.dueAt).to.be.a('string');
  });

  it('an ended run, and a run of a sequence without steps, wait for nothing', async () => {
    const done = await enrolledIn({ steps: [{ id: 'end', type: 'exit' }] });
    const { engine } = engineNow();
    await engine.runOnce();
    expect(await where(done.key, done.sequenceId, done.contactId, done.runId)).to.include({ status: 'completed', waitingFor: null, dueAt: null });
    const stepless = await enrolledIn({});
    expect(await where(stepless.key, stepless.sequenceId, stepless.contactId, stepless.runId)).to.include({ status: 'pending', waitingFor: null, dueAt: null });
  });
});
