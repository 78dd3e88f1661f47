import { expect } from 'chai';
import { updateSequence } from '../../src/services/sequences/sequence-admin';
import type { StepInput } from '../../src/schemas/sequence-definition';
import { issueDetails } from '../../src/trpc/errors';
import { caller } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { engineNow, storedVersions } from '../support/sequence-definitions';
import { badRequest } from '../support/trpc';

// Which changes of the steps make a new version (docs/sequences.md "Versions"): the same steps,
// however they are spelled, change nothing; a change that would strand active runs is refused;
// a move says how many runs it moved, from which version.

type CreateInput = Parameters<ReturnType<typeof caller>['sequences']['create']>[0];

async function create(key: string, input: Record<string, unknown>) {
  return (await caller(key).sequences.create({ name: 'Versions', ...input } as CreateInput)).sequence;
}

describe('sequence versions (procedures)', () => {
  describe('the same steps make no new version', () => {
    const V1: StepInput[] = [
      { id: 'a', type: 'wait', duration: 'PT2S' },
      { id: 'b', type: 'tag', add: ['x'] },
    ];

    it('v1 with ids; the same steps without ids; the original again: still version 1, ids a and b, one version stored', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { steps: V1 });
      expect(sequence.version).to.equal(1);

      const idless = (await caller(key).sequences.update({ id: sequence.id, steps: [{ type: 'wait', duration: 'PT2S' }, { type: 'tag', add: ['x'] }] })).sequence;
      expect(idless.version).to.equal(1);
      expect(idless.steps).to.deep.equal(V1);
      expect(idless.updatedAt).to.equal(sequence.updatedAt);

      const original = (await caller(key).sequences.update({ id: sequence.id, steps: [...V1] })).sequence;
      expect(original.version).to.equal(1);
      expect(original).to.deep.equal(sequence);
      expect(await storedVersions(sequence.id)).to.deep.equal([{ version: 1, steps: V1 }]);
    });

    it('compares whatever the order of keys, in steps and in their nested objects', async () => {
      const { key, accountId } = await buildTenant();
      const steps = [
        { id: 'w', type: 'wait', until: { time: '09:00', weekdays: ['mon', 'tue'] } },
        { id: 'u', type: 'update', customFields: { plan: { tier: 'pro', seats: 3 } } },
        { id: 'br', type: 'branch', if: { field: 'plan.tier', equals: { name: 'pro', level: 2 } }, then: 'w', else: 'end' },
        { id: 'end', type: 'exit' },
      ];
      const sequence = await create(key, { steps });
      // The service is also called with objects as a file or a script spelled them (the CLI).
      const reordered = [
        { until: { weekdays: ['mon', 'tue'], time: '09:00' }, type: 'wait', id: 'w' },
        { customFields: { plan: { seats: 3, tier: 'pro' } }, type: 'update' },
        { else: 'end', then: 'w', if: { equals: { level: 2, name: 'pro' }, field: 'plan.tier' }, type: 'branch', id: 'br' },
        { type: 'exit', id: 'end' },
      ] as unknown as StepInput[];
      const updated = await updateSequence(testDb(), { id: sequence.id, accountId, steps: reordered });
      expect(updated.version).to.equal(1);
      expect(updated.updatedAt).to.equal(sequence.updatedAt);
      expect(await storedVersions(sequence.id)).to.have.length(1);
      // A real change still makes a version; the unchanged steps keep their ids.
      const changed = await updateSequence(testDb(), { id: sequence.id, accountId, steps: [reordered[0]!, { type: 'update', customFields: { plan: { seats: 4, tier: 'pro' } } }, reordered[2]!, reordered[3]!] as StepInput[] });
      expect(changed.version).to.equal(2);
      expect(changed.steps[0]!.id).to.equal('w');
      expect(changed.steps[1]!.id).to.not.equal('u');
    });

    it('takes the same sending window and exit rules in another key order as no change: updatedAt kept', async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await create(key, {
        exitWhen: [{ tag: 'purchased' }],
        sendingWindow: { timeZone: 'Europe/Paris', weekdays: ['mon'], from: '09:00', to: '17:00' },
      });
      const sendingWindow = { to: '17:00', from: '09:00', weekdays: ['mon'], timeZone: 'Europe/Paris' } as never;
      const same = await updateSequence(testDb(), { id: sequence.id, accountId, sendingWindow, exitWhen: [{ tag: 'purchased' }] });
      expect(same.updatedAt).to.equal(sequence.updatedAt);
      const other = await updateSequence(testDb(), { id: sequence.id, accountId, exitWhen: [{ tag: 'refunded' }] });
      expect(other.exitWhen).to.deep.equal([{ tag: 'refunded' }]);
    });

    it('still makes a new version when only the order of the steps changes', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { steps: V1 });
      const swapped = (await caller(key).sequences.update({ id: sequence.id, steps: [V1[1]!, V1[0]!] })).sequence;
      expect(swapped.version).to.equal(2);
      expect(swapped.steps.map((step) => step.id)).to.deep.equal(['b', 'a']);
    });
  });

  describe('changes that would strand runs, and what a move answers', () => {
    const WAIT = [{ id: 'w1', type: 'wait', duration: 'P1D' }, { id: 'end', type: 'exit' }] as StepInput[];

    async function activeWith(contacts: number) {
      const tenant = await buildTenant();
      const sequence = await create(tenant.key, { status: 'active', steps: WAIT });
      const ids: string[] = [];
      for (let i = 0; i < contacts; i += 1) ids.push((await buildContact(tenant.accountId)).id);
      if (ids.length > 0) await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: ids });
      return { ...tenant, sequence };
    }

    async function runsOf(key: string, sequenceId: string) {
      return (await caller(key).sequences.runs({ id: sequenceId })).runs.map((run) => ({ version: run.version, currentStepId: run.currentStepId, status: run.status }));
    }

    it('refuses to empty the steps while runs are at steps: 400 at steps, with or without moveRuns, and nothing changes', async () => {
      const { key, sequence } = await activeWith(2);
      for (const extra of [{}, { moveRuns: { stepMap: {} } }]) {
        const error = await badRequest(caller(key).sequences.update({ id: sequence.id, name: 'Emptied', steps: [], ...extra }), 'steps');
        expect(issueDetails(error)).to.deep.equal([
          {
            path: 'steps',
            message:
              '2 active runs are at steps of this sequence: an empty list would leave them, and runs started later, with no ' +
              'step to go to. Keep at least one step, set the status to "paused" to stop the sequence, or unenroll those runs first',
          },
        ]);
        expect(error.message).to.equal(`steps: ${issueDetails(error)![0]!.message}`);
      }
      expect((await caller(key).sequences.get({ id: sequence.id })).sequence).to.deep.equal({ ...sequence, activeRuns: 2 });
      expect(await storedVersions(sequence.id)).to.have.length(1);
      expect(await runsOf(key, sequence.id)).to.deep.equal([
        { version: 1, currentStepId: 'w1', status: 'pending' },
        { version: 1, currentStepId: 'w1', status: 'pending' },
      ]);
    });

    it('names one run as one run', async () => {
      const { key, sequence } = await activeWith(1);
      const error = await badRequest(caller(key).sequences.update({ id: sequence.id, steps: [] }), 'steps');
      expect(issueDetails(error)![0]!.message).to.match(/^1 active run is at steps of this sequence: an empty list would leave it, and runs/);
    });

    it('empties the steps of a sequence with no active runs at steps; a later move places the runs started meanwhile at the first step', async () => {
      const { key, accountId, sequence } = await activeWith(0);
      const emptied = (await caller(key).sequences.update({ id: sequence.id, steps: [] })).sequence;
      expect(emptied).to.include({ version: 2 });
      expect(emptied.steps).to.deep.equal([]);
      const contact = await buildContact(accountId);
      await caller(key).sequences.trigger({ id: sequence.id, contact: { email: contact.email } });
      expect(await runsOf(key, sequence.id)).to.deep.equal([{ version: 2, currentStepId: null, status: 'pending' }]);
      // Moving onto a version without steps has nowhere to put them.
      await badRequest(caller(key).sequences.update({ id: sequence.id, moveRuns: { stepMap: {} } }), 'moveRuns');

      const restored = await caller(key).sequences.update({ id: sequence.id, steps: [...WAIT], moveRuns: { stepMap: {} } });
      expect(restored.sequence.version).to.equal(3);
      expect(restored.moved).to.deep.equal([{ fromVersion: 2, runs: 1 }]);
      expect(await runsOf(key, sequence.id)).to.deep.equal([{ version: 3, currentStepId: 'w1', status: 'pending' }]);
      // The engine takes it from its first step.
      const { engine } = engineNow();
      await engine.runOnce();
      expect(await runsOf(key, sequence.id)).to.deep.equal([{ version: 3, currentStepId: 'w1', status: 'running' }]);
    });

    it('answers moved per older version on every move, [] when none moved, and no moved without moveRuns', async () => {
      const { key, accountId, sequence } = await activeWith(2);
      const v2 = [{ id: 'w1', type: 'wait', duration: 'PT1H' }, { id: 'end', type: 'exit' }] as StepInput[];
      const changed = await caller(key).sequences.update({ id: sequence.id, steps: v2 });
      expect(changed).to.have.all.keys('sequence');
      await caller(key).sequences.enroll({ id: sequence.id, contactIds: [(await buildContact(accountId)).id] });
      const v3 = [{ id: 'w3', type: 'wait', duration: 'PT2H' }] as StepInput[];
      const moved = await caller(key).sequences.update({ id: sequence.id, steps: v3, moveRuns: { stepMap: { w1: 'w3' } } });
      expect(moved.moved).to.deep.equal([
        { fromVersion: 1, runs: 2 },
        { fromVersion: 2, runs: 1 },
      ]);
      const again = await caller(key).sequences.update({ id: sequence.id, moveRuns: { stepMap: {} } });
      expect(again.moved).to.deep.equal([]);
      expect(again.sequence.version).to.equal(3);
    });

    it('keeps the runs of a sequence that never had steps where they are when it gets steps and moveRuns', async () => {
      const tenant = await buildTenant();
      const sequence = await create(tenant.key, { status: 'active' });
      await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [(await buildContact(tenant.accountId)).id] });
      const updated = await caller(tenant.key).sequences.update({ id: sequence.id, steps: [...WAIT], moveRuns: { stepMap: {} } });
      expect(updated.moved).to.deep.equal([]);
      expect(await runsOf(tenant.key, sequence.id)).to.deep.equal([{ version: null, currentStepId: null, status: 'pending' }]);
      // Its steps can be emptied again: its runs are at no step.
      expect((await caller(tenant.key).sequences.update({ id: sequence.id, steps: [] })).sequence.version).to.equal(2);
    });
  });
});
