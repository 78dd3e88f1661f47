import { expect } from 'chai';
import { updateSequence } from '../../src/services/sequences/sequence-admin';
import type { StepInput } from '../../src/schemas/sequence-definition';
import { caller } from '../support/app';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import { storedVersions } from '../support/sequence-definitions';

// Which changes of the steps make a new version (docs/sequences.md "Versions"): the same steps,
// however they are spelled, change nothing.

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
});
