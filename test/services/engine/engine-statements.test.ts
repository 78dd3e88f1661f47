import { expect } from 'chai';
import { caller } from '../../support/app';
import { captureQueries } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { engineAt } from './support';

// A batch of due steps costs a handful of statements, not a handful per step: the claim, the
// read of what was claimed, and one transaction that records every run of the batch.

async function batchOf(size: number, steps: unknown[]) {
  const { key, accountId } = await buildTenant();
  const { sequence } = await caller(key).sequences.create({ name: `Batch ${size}`, status: 'active', steps } as never);
  const contacts = [];
  for (let i = 0; i < size; i += 1) contacts.push(await buildContact(accountId));
  await caller(key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((c) => c.id) });
  const { engine } = engineAt(Date.now() + 1, { batchSize: 500 });
  const { result, queries } = await captureQueries(() => engine.runOnce());
  expect(result).to.equal(size);
  // The rest of each run (a branch's next step), so that the next batch is its own.
  await engine.runUntilIdle();
  return queries;
}

describe('sequence engine: set-based batches', () => {
  for (const [name, steps] of [
    ['tag', [{ id: 'mark', type: 'tag', add: ['seen'], remove: ['new'] }]],
    ['update', [{ id: 'set', type: 'update', customFields: { stage: 2 } }]],
    ['wait', [{ id: 'w', type: 'wait', duration: 'P1D' }]],
    ['branch', [{ id: 'b', type: 'branch', if: { tag: 'vip' }, then: 'e', else: 'e' }, { id: 'e', type: 'exit' }]],
    // A chain of local steps taken in one pass: the same statements as one step.
    [
      'tag, branch, update, tag, exit',
      [
        { id: 'mark', type: 'tag', add: ['bench'] },
        { id: 'fork', type: 'branch', if: { tag: 'bench' }, then: 'note', else: 'done' },
        { id: 'note', type: 'update', customFields: { stage: 'five' } },
        { id: 'mark2', type: 'tag', add: ['bench2'] },
        { id: 'done', type: 'exit' },
      ],
    ],
  ] as const) {
    it(`records 100 ${name} steps in as many statements as 2`, async () => {
      const small = await batchOf(2, [...steps]);
      const large = await batchOf(100, [...steps]);
      expect(large.length, large.join('\n')).to.equal(small.length);
      // Three of them the analytics counters' upserts, one per table (analytics/progress-counters.ts).
      expect(large.length).to.be.at.most(27);
    });
  }
});
