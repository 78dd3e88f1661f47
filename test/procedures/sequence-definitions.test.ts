import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { listEvents } from '../../src/services/events/list-events';
import { createWebhook } from '../../src/services/webhooks/endpoints';
import { caller } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { badDefinitions, definitionRows, engineNow, storedVersions } from '../support/sequence-definitions';
import { issueDetails } from '../../src/trpc/errors';
import { badRequest, rejectedWith } from '../support/trpc';

// The sequence-definition procedures through createCaller (docs/sequences.md): create and
// update with steps, exit rules and a sending window; versions and moving runs; a run's
// timeline; pause and resume. Paths, statuses and bodies: test/http/sequence-definitions.test.ts.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SEQUENCE_NOT_FOUND = { error: 'Sequence not found', code: 'not_found' };
const RUN_NOT_FOUND = { error: 'Run not found', code: 'not_found' };

const WAIT_THEN_EXIT = [
  { id: 'w1', type: 'wait', duration: 'P1D' },
  { id: 'end', type: 'exit' },
] as const;

type CreateInput = Parameters<ReturnType<typeof caller>['sequences']['create']>[0];

async function create(key: string, input: Record<string, unknown>) {
  return (await caller(key).sequences.create({ name: 'Welcome', ...input } as CreateInput)).sequence;
}

// An active sequence with steps, and one contact enrolled in it: its run.
async function enrolled(steps: readonly object[] = WAIT_THEN_EXIT) {
  const tenant = await buildTenant({ kind: 'runner' });
  const sequence = await create(tenant.key, { status: 'active', steps });
  const contact = await buildContact(tenant.accountId);
  const { summary } = await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
  expect(summary.successful, 'setup enrolled the contact').to.equal(1);
  const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
  return { ...tenant, sequence, contact, runId: run!.id };
}

async function runOf(key: string, sequenceId: string, runId: string) {
  return (await caller(key).sequences.run({ id: sequenceId, runId })).run;
}

async function statusMoves(accountId: string, runId: string): Promise<string[]> {
  const { events } = await listEvents(testDb(), { accountId, type: 'run.status_changed', limit: 100 });
  return events
    .map((event) => event.data as { run: { id: string }; from: string; to: string })
    .filter((data) => data.run.id === runId)
    .map((data) => `${data.from}->${data.to}`);
}

describe('sequence definitions (procedures)', () => {
  describe('sequences.create', () => {
    it('stores the steps as version 1: given ids kept, the others generated; draft by default; the rules and window as given', async () => {
      const { key } = await buildTenant();
      const steps = [
        { id: 'welcome-wait', type: 'wait', duration: 'P3D' },
        { type: 'tag', add: ['welcomed'], remove: ['new'] },
        { type: 'update', customFields: { stage: 'onboarded' } },
        { id: 'vip?', type: 'branch', if: { tag: 'vip' }, then: 'end', else: 'welcome-wait' },
        { id: 'end', type: 'exit' },
      ];
      const exitWhen = [{ tag: 'purchased' }, { unsubscribed: 'email' }];
      const sendingWindow = { timeZone: 'Europe/Paris', weekdays: ['mon', 'fri'], from: '09:00', to: '17:30' };
      // 'vip?' is no step id: refused by the schema. The same with a good id goes through.
      await badRequest(caller(key).sequences.create({ name: 'Welcome', steps } as CreateInput), 'steps.3.id');
      steps[3]!.id = 'vip';

      const sequence = await create(key, { steps, exitWhen, sendingWindow });
      expect(sequence).to.include({ name: 'Welcome', status: 'draft', version: 1, activeRuns: 0 });
      expect(sequence.id).to.match(UUID);
      expect(sequence.exitWhen).to.deep.equal(exitWhen);
      expect(sequence.sendingWindow).to.deep.equal(sendingWindow);
      expect(sequence.steps).to.have.length(5);
      expect(sequence.steps[0]).to.deep.equal(steps[0]);
      expect(sequence.steps[3]).to.deep.equal(steps[3]);
      expect(sequence.steps[4]).to.deep.equal(steps[4]);
      const generated = [sequence.steps[1]!, sequence.steps[2]!];
      for (const [index, step] of generated.entries()) {
        expect(step.id).to.match(/^step-[0-9a-f]{8}$/);
        expect({ ...step, id: undefined }).to.deep.equal({ ...steps[index + 1], id: undefined });
      }
      expect(generated[0]!.id).to.not.equal(generated[1]!.id);
      expect(sequence.createdAt).to.equal(sequence.updatedAt);

      expect((await caller(key).sequences.get({ id: sequence.id })).sequence).to.deep.equal(sequence);
      expect(await storedVersions(sequence.id)).to.deep.equal([{ version: 1, steps: sequence.steps }]);
    });

    it('without steps: version null, no version stored, and a status when given', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { status: 'active' });
      expect(sequence).to.include({ status: 'active', version: null, sendingWindow: null, activeRuns: 0 });
      expect(sequence.steps).to.deep.equal([]);
      expect(sequence.exitWhen).to.deep.equal([]);
      const empty = await create(key, { steps: [] });
      expect(empty).to.include({ version: null });
      expect(await definitionRows()).to.deep.equal({ sequences: 2, versions: 0 });
    });

    it('accepts a cycle that passes through a wait', async () => {
      const { key } = await buildTenant();
      const steps = [
        { id: 'w', type: 'wait', duration: 'PT1H' },
        { id: 'a', type: 'tag', add: ['x'] },
        { id: 'b', type: 'branch', if: { tag: 'done' }, then: 'end', else: 'w' },
        { id: 'end', type: 'exit' },
      ];
      const sequence = await create(key, { steps });
      expect(sequence.steps).to.deep.equal(steps);
      expect(sequence.version).to.equal(1);
    });

    it('accepts a webhook step naming an endpoint of the account', async () => {
      const { key, accountId } = await buildTenant();
      const { webhook } = await createWebhook(testDb(), { accountId, url: 'http://127.0.0.1:9/hook' }, { allowInsecure: true, now: () => new Date() });
      const sequence = await create(key, { steps: [{ id: 'h', type: 'webhook', endpointId: webhook.id, payload: { campaign: 'welcome' } }] });
      expect(sequence.steps).to.deep.equal([{ id: 'h', type: 'webhook', endpointId: webhook.id, payload: { campaign: 'welcome' } }]);
    });

    it('refuses a missing name with 400 at name, storing nothing', async () => {
      const { key } = await buildTenant();
      await badRequest(caller(key).sequences.create({ steps: [] } as unknown as CreateInput), 'name');
      expect(await definitionRows()).to.deep.equal({ sequences: 0, versions: 0 });
    });

    it('refuses each bad definition with 400 naming the field, storing nothing', async () => {
      const { key } = await buildTenant();
      const cases = await badDefinitions();
      const before = await definitionRows();
      for (const bad of cases) {
        const error = await badRequest(caller(key).sequences.create({ name: 'Bad', ...bad.body } as CreateInput), bad.path);
        expect(issueDetails(error)![0]!.message, bad.what).to.match(bad.message);
        expect(await definitionRows(), bad.what).to.deep.equal(before);
      }
    });
  });

  describe('sequences.update', () => {
    it('changes the name and the status; the same values again change nothing, updatedAt included', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { steps: WAIT_THEN_EXIT });
      const renamed = (await caller(key).sequences.update({ id: sequence.id, name: 'Renamed', status: 'paused' })).sequence;
      expect(renamed).to.include({ name: 'Renamed', status: 'paused', version: 1 });
      expect(Date.parse(renamed.updatedAt)).to.be.at.least(Date.parse(sequence.updatedAt));
      const again = (await caller(key).sequences.update({ id: sequence.id, name: 'Renamed', status: 'paused' })).sequence;
      expect(again).to.deep.equal(renamed);
      expect((await caller(key).sequences.get({ id: sequence.id })).sequence).to.deep.equal(renamed);
    });

    it('new steps make version 2; the same steps again keep the version and updatedAt', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { steps: WAIT_THEN_EXIT });
      const same = (await caller(key).sequences.update({ id: sequence.id, steps: sequence.steps })).sequence;
      expect(same).to.deep.equal(sequence);
      expect(await storedVersions(sequence.id)).to.have.length(1);

      const steps = [{ id: 'w2', type: 'wait' as const, duration: 'PT1H' }, { id: 'end', type: 'exit' as const }];
      const changed = (await caller(key).sequences.update({ id: sequence.id, steps })).sequence;
      expect(changed.version).to.equal(2);
      expect(changed.steps).to.deep.equal(steps);
      expect(await storedVersions(sequence.id)).to.deep.equal([
        { version: 1, steps: WAIT_THEN_EXIT },
        { version: 2, steps },
      ]);
      expect((await caller(key).sequences.get({ id: sequence.id })).sequence).to.deep.equal(changed);
    });

    it('takes the same steps sent again without their ids as the same steps: no new version, the ids kept', async () => {
      const { key } = await buildTenant();
      const idless = [{ type: 'wait' as const, duration: 'P1D' }, { type: 'tag' as const, add: ['x'] }];
      const sequence = await create(key, { steps: idless });
      const again = (await caller(key).sequences.update({ id: sequence.id, steps: idless })).sequence;
      expect(again.version).to.equal(1);
      expect(again.steps.map((step) => step.id)).to.deep.equal(sequence.steps.map((step) => step.id));
      // A changed step gets a new id; the unchanged one keeps its own.
      const changed = (await caller(key).sequences.update({ id: sequence.id, steps: [idless[0]!, { type: 'tag' as const, add: ['y'] }] })).sequence;
      expect(changed.version).to.equal(2);
      expect(changed.steps[0]!.id).to.equal(sequence.steps[0]!.id);
      expect(changed.steps[1]!.id).to.not.equal(sequence.steps[1]!.id);
    });

    it('gives a sequence without steps its version 1', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, {});
      const updated = (await caller(key).sequences.update({ id: sequence.id, steps: [...WAIT_THEN_EXIT] })).sequence;
      expect(updated.version).to.equal(1);
      expect(await storedVersions(sequence.id)).to.deep.equal([{ version: 1, steps: WAIT_THEN_EXIT }]);
    });

    it('sets and clears the exit rules and the sending window', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, {});
      const exitWhen = [{ tag: 'purchased' }];
      const sendingWindow = { timeZone: 'America/New_York', from: '08:00', to: '20:00' };
      const set = (await caller(key).sequences.update({ id: sequence.id, exitWhen, sendingWindow })).sequence;
      expect(set.exitWhen).to.deep.equal(exitWhen);
      expect(set.sendingWindow).to.deep.equal(sendingWindow);
      // Absent fields are left as they are.
      const renamed = (await caller(key).sequences.update({ id: sequence.id, name: 'Other' })).sequence;
      expect(renamed.exitWhen).to.deep.equal(exitWhen);
      expect(renamed.sendingWindow).to.deep.equal(sendingWindow);
      const cleared = (await caller(key).sequences.update({ id: sequence.id, exitWhen: [], sendingWindow: null })).sequence;
      expect(cleared.exitWhen).to.deep.equal([]);
      expect(cleared.sendingWindow).to.equal(null);
      expect((await caller(key).sequences.get({ id: sequence.id })).sequence).to.deep.equal(cleared);
    });

    it('leaves runs on the version they started on', async () => {
      const { key, sequence, runId } = await enrolled();
      expect(await runOf(key, sequence.id, runId)).to.include({ version: 1, currentStepId: 'w1', status: 'pending' });
      const updated = (await caller(key).sequences.update({ id: sequence.id, steps: [{ id: 'other', type: 'exit' }] })).sequence;
      expect(updated.version).to.equal(2);
      expect(await runOf(key, sequence.id, runId)).to.include({ version: 1, currentStepId: 'w1', status: 'pending' });
    });

    it('moveRuns moves the active runs to the new version, at the step the map names', async () => {
      const { key, sequence, runId } = await enrolled();
      const { engine } = engineNow();
      await engine.runOnce();
      expect(await runOf(key, sequence.id, runId)).to.include({ status: 'running', version: 1, currentStepId: 'w1' });

      const steps = [{ id: 'w2', type: 'wait' as const, duration: 'PT1H' }, { id: 'end', type: 'exit' as const }];
      const updated = (await caller(key).sequences.update({ id: sequence.id, steps, moveRuns: { stepMap: { w1: 'w2' } } })).sequence;
      expect(updated.version).to.equal(2);
      const run = await runOf(key, sequence.id, runId);
      expect(run).to.include({ status: 'running', version: 2, currentStepId: 'w2' });
      // The wait it was in is over, skipped; the new step starts afresh.
      expect(run.executions.map((e) => [e.stepId, e.status])).to.deep.equal([['w1', 'skipped']]);
    });

    it('moveRuns without a map moves a run to the new step with the same id', async () => {
      const { key, sequence, runId } = await enrolled();
      const steps = [{ id: 'first', type: 'tag' as const, add: ['x'] }, { id: 'w1', type: 'wait' as const, duration: 'PT2H' }];
      await caller(key).sequences.update({ id: sequence.id, steps, moveRuns: { stepMap: {} } });
      expect(await runOf(key, sequence.id, runId)).to.include({ version: 2, currentStepId: 'w1' });
    });

    it('refuses moveRuns when a run is at a step the map cannot place: 400, and nothing changes', async () => {
      const { key, sequence, runId } = await enrolled();
      const before = await definitionRows();
      const steps = [{ id: 'w2', type: 'wait' as const, duration: 'PT1H' }];
      const error = await badRequest(
        caller(key).sequences.update({ id: sequence.id, name: 'Renamed', steps, moveRuns: { stepMap: { end: 'w2' } } }),
        'moveRuns.stepMap',
      );
      expect(error.message).to.contain('"w1"');
      expect(await definitionRows()).to.deep.equal(before);
      expect(await storedVersions(sequence.id)).to.have.length(1);
      expect((await caller(key).sequences.get({ id: sequence.id })).sequence).to.deep.equal({ ...sequence, activeRuns: 1 });
      expect(await runOf(key, sequence.id, runId)).to.include({ version: 1, currentStepId: 'w1' });
    });

    it('refuses a stepMap whose target is not a step of the new version: 400, nothing changes', async () => {
      const { key, sequence, runId } = await enrolled();
      const steps = [{ id: 'w2', type: 'wait' as const, duration: 'PT1H' }];
      await badRequest(caller(key).sequences.update({ id: sequence.id, steps, moveRuns: { stepMap: { w1: 'nowhere' } } }), 'moveRuns.stepMap.w1');
      expect(await storedVersions(sequence.id)).to.have.length(1);
      expect((await caller(key).sequences.get({ id: sequence.id })).sequence).to.deep.equal({ ...sequence, activeRuns: 1 });
      expect(await runOf(key, sequence.id, runId)).to.include({ version: 1, currentStepId: 'w1' });
    });

    it('refuses each bad definition with 400 naming the field, changing nothing', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { steps: WAIT_THEN_EXIT });
      const cases = await badDefinitions();
      const before = await definitionRows();
      for (const bad of cases) {
        const error = await badRequest(caller(key).sequences.update({ id: sequence.id, name: 'Changed', ...bad.body } as never), bad.path);
        expect(issueDetails(error)![0]!.message, bad.what).to.match(bad.message);
        expect(await definitionRows(), bad.what).to.deep.equal(before);
      }
      expect((await caller(key).sequences.get({ id: sequence.id })).sequence).to.deep.equal(sequence);
    });

    it('answers NOT_FOUND for an unknown id, a non-UUID id and another account\'s sequence, changing nothing', async () => {
      const { key } = await buildTenant();
      const other = await buildTenant();
      const theirs = await create(other.key, { steps: WAIT_THEN_EXIT });
      for (const id of [randomUUID(), 'not-a-uuid', theirs.id]) {
        await rejectedWith(caller(key).sequences.update({ id, name: 'Mine now', steps: [{ type: 'exit' }] }), 'NOT_FOUND', SEQUENCE_NOT_FOUND);
      }
      expect((await caller(other.key).sequences.get({ id: theirs.id })).sequence).to.deep.equal(theirs);
      expect(await storedVersions(theirs.id)).to.have.length(1);
    });
  });

  describe('sequences.run', () => {
    it('shows the run, its version and step, and no executions before the engine ran; then the executions', async () => {
      const { key, sequence, contact, runId } = await enrolled();
      const before = await runOf(key, sequence.id, runId);
      expect(before).to.include({ id: runId, sequenceId: sequence.id, contactId: contact.id, status: 'pending', version: 1, currentStepId: 'w1', reason: null, completedAt: null });
      expect(before.executions).to.deep.equal([]);

      const { engine } = engineNow();
      expect(await engine.runOnce()).to.equal(1);
      const after = await runOf(key, sequence.id, runId);
      expect(after).to.include({ status: 'running', version: 1, currentStepId: 'w1' });
      expect(after.executions).to.have.length(1);
      expect(after.executions[0]).to.include({ stepId: 'w1', type: 'wait', attempt: 1, status: 'running', reason: null, finishedAt: null });
    });

    it('answers NOT_FOUND for an unknown run, a run of another sequence, non-UUID ids and an unknown sequence', async () => {
      const { key, accountId, sequence, runId } = await enrolled();
      const second = await create(key, { status: 'active' });
      const contact = await buildContact(accountId);
      await caller(key).sequences.enroll({ id: second.id, contactIds: [contact.id] });
      const [secondRun] = (await caller(key).sequences.runs({ id: second.id })).runs;
      const other = await enrolled();

      const runMissing: Array<[string, string]> = [
        [sequence.id, randomUUID()],
        [sequence.id, secondRun!.id],
        [sequence.id, 'not-a-uuid'],
        [sequence.id, other.runId],
      ];
      for (const [id, run] of runMissing) await rejectedWith(caller(key).sequences.run({ id, runId: run }), 'NOT_FOUND', RUN_NOT_FOUND);
      for (const id of [randomUUID(), 'not-a-uuid', other.sequence.id]) {
        await rejectedWith(caller(key).sequences.run({ id, runId }), 'NOT_FOUND', SEQUENCE_NOT_FOUND);
      }
    });
  });

  describe('sequences.pauseRun and sequences.resumeRun', () => {
    it('pending -> paused -> pending, recording each move', async () => {
      const { key, accountId, sequence, runId } = await enrolled();
      const paused = (await caller(key).sequences.pauseRun({ id: sequence.id, runId })).run;
      expect(paused).to.include({ id: runId, status: 'paused', version: 1, currentStepId: 'w1', completedAt: null });
      // Paused, the engine leaves it alone.
      const { engine } = engineNow();
      expect(await engine.runOnce()).to.equal(0);
      const resumed = (await caller(key).sequences.resumeRun({ id: sequence.id, runId })).run;
      expect(resumed).to.include({ status: 'pending', currentStepId: 'w1' });
      expect(await runOf(key, sequence.id, runId)).to.include({ status: 'pending' });
      expect(await statusMoves(accountId, runId)).to.deep.equal(['pending->paused', 'paused->pending']);
    });

    it('running -> paused -> running, the wait carrying on to its end', async () => {
      const { key, accountId, sequence, runId } = await enrolled([
        { id: 'w', type: 'wait', duration: 'PT1H' },
        { id: 'mark', type: 'tag', add: ['done'] },
      ]);
      const { engine, advance } = engineNow();
      await engine.runOnce();
      expect(await runOf(key, sequence.id, runId)).to.include({ status: 'running', currentStepId: 'w' });

      expect((await caller(key).sequences.pauseRun({ id: sequence.id, runId })).run).to.include({ status: 'paused', currentStepId: 'w' });
      advance(2 * 3_600_000);
      expect(await engine.runOnce(), 'a paused run is not claimed, even past its wait').to.equal(0);
      expect((await caller(key).sequences.resumeRun({ id: sequence.id, runId })).run).to.include({ status: 'running', currentStepId: 'w' });
      await engine.runUntilIdle();
      const run = await runOf(key, sequence.id, runId);
      expect(run.status).to.equal('completed');
      expect(run.executions.map((e) => [e.stepId, e.status])).to.deep.equal([
        ['w', 'succeeded'],
        ['mark', 'succeeded'],
      ]);
      expect(await statusMoves(accountId, runId)).to.deep.equal(['pending->running', 'running->paused', 'paused->running', 'running->completed']);
    });

    it('refuses to pause a paused, completed or cancelled run, and to resume a pending one: 409 invalid_run_transition', async () => {
      const { key, accountId, sequence, runId, contact } = await enrolled();
      await rejectedWith(caller(key).sequences.resumeRun({ id: sequence.id, runId }), 'CONFLICT', {
        error: 'A pending run cannot be resumed: only a paused one',
        code: 'invalid_run_transition',
      });
      await caller(key).sequences.pauseRun({ id: sequence.id, runId });
      await rejectedWith(caller(key).sequences.pauseRun({ id: sequence.id, runId }), 'CONFLICT', { error: 'A paused run cannot be paused', code: 'invalid_run_transition' });
      await caller(key).sequences.unenroll({ id: sequence.id, contactIds: [contact.id] });
      expect(await runOf(key, sequence.id, runId)).to.include({ status: 'cancelled' });
      await rejectedWith(caller(key).sequences.pauseRun({ id: sequence.id, runId }), 'CONFLICT', { error: 'A cancelled run cannot be paused', code: 'invalid_run_transition' });
      await rejectedWith(caller(key).sequences.resumeRun({ id: sequence.id, runId }), 'CONFLICT', {
        error: 'A cancelled run cannot be resumed: only a paused one',
        code: 'invalid_run_transition',
      });

      const done = await enrolled([{ id: 'end', type: 'exit' }]);
      const { engine } = engineNow();
      await engine.runUntilIdle();
      expect(await runOf(done.key, done.sequence.id, done.runId)).to.include({ status: 'completed' });
      await rejectedWith(caller(done.key).sequences.pauseRun({ id: done.sequence.id, runId: done.runId }), 'CONFLICT', {
        error: 'A completed run cannot be paused',
        code: 'invalid_run_transition',
      });
      // Refused moves record nothing.
      expect(await statusMoves(accountId, runId)).to.deep.equal(['pending->paused', 'paused->cancelled']);
    });

    it('answers NOT_FOUND for unknown, malformed and other sequences\' or accounts\' runs', async () => {
      const { key, sequence, runId } = await enrolled();
      const other = await enrolled();
      for (const call of ['pauseRun', 'resumeRun'] as const) {
        await rejectedWith(caller(key).sequences[call]({ id: sequence.id, runId: randomUUID() }), 'NOT_FOUND', RUN_NOT_FOUND);
        await rejectedWith(caller(key).sequences[call]({ id: sequence.id, runId: 'not-a-uuid' }), 'NOT_FOUND', RUN_NOT_FOUND);
        await rejectedWith(caller(key).sequences[call]({ id: sequence.id, runId: other.runId }), 'NOT_FOUND', RUN_NOT_FOUND);
        await rejectedWith(caller(key).sequences[call]({ id: randomUUID(), runId }), 'NOT_FOUND', SEQUENCE_NOT_FOUND);
        await rejectedWith(caller(key).sequences[call]({ id: 'not-a-uuid', runId }), 'NOT_FOUND', SEQUENCE_NOT_FOUND);
        await rejectedWith(caller(key).sequences[call]({ id: other.sequence.id, runId: other.runId }), 'NOT_FOUND', SEQUENCE_NOT_FOUND);
      }
      expect(await runOf(other.key, other.sequence.id, other.runId)).to.include({ status: 'pending' });
    });
  });

  describe('run lists', () => {
    it('show each run\'s version and current step, by sequence and by contact', async () => {
      const { key, sequence, contact, runId } = await enrolled();
      await caller(key).sequences.update({ id: sequence.id, steps: [{ id: 'w2', type: 'wait', duration: 'PT1H' }] });
      const bySequence = (await caller(key).sequences.runs({ id: sequence.id })).runs;
      expect(bySequence).to.have.length(1);
      expect(bySequence[0]).to.include({ id: runId, version: 1, currentStepId: 'w1', sequenceId: sequence.id, contactId: contact.id });
      const byContact = (await caller(key).contacts.runs({ id: contact.id })).runs;
      expect(byContact).to.have.length(1);
      expect(byContact[0]).to.include({ id: runId, version: 1, currentStepId: 'w1', sequenceId: sequence.id });
    });
  });

  describe('a sequence without steps', () => {
    it('keeps today\'s behaviour: its run has no version or step, the engine leaves it, runs.transition moves it', async () => {
      const { key, accountId } = await buildTenant({ kind: 'runner' });
      const sequence = await buildSequence(accountId, 'active');
      expect(sequence.version).to.equal(null);
      const contact = await buildContact(accountId);
      await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
      const [listed] = (await caller(key).sequences.runs({ id: sequence.id })).runs;
      expect(listed).to.include({ status: 'pending', version: null, currentStepId: null });

      const { engine, advance } = engineNow();
      expect(await engine.runOnce()).to.equal(0);
      advance(86_400_000);
      await engine.runUntilIdle();
      const run = await runOf(key, sequence.id, listed!.id);
      expect(run).to.include({ status: 'pending', version: null, currentStepId: null });
      expect(run.executions).to.deep.equal([]);

      expect((await caller(key).runs.transition({ runId: listed!.id, status: 'running' })).run).to.include({ status: 'running' });
      expect((await caller(key).runs.transition({ runId: listed!.id, status: 'completed' })).run).to.include({ status: 'completed' });
      expect(await runOf(key, sequence.id, listed!.id)).to.include({ status: 'completed', version: null, currentStepId: null });
      expect(await statusMoves(accountId, listed!.id)).to.deep.equal(['pending->running', 'running->completed']);
    });
  });
});
