import { expect } from 'chai';
import { ConflictError } from '../../src/errors/app-errors';
import { createCaller, createCallerContext } from '../../src/routers/caller';
import { createSequence, updateSequence } from '../../src/services/sequences/sequence-admin';
import { deleteWebhook } from '../../src/services/webhooks/endpoints';
import { issueDetails } from '../../src/trpc/errors';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import { countLockFailures } from '../support/lock-failures';
import { holdAfter } from '../support/statement-gate';
import { rejectedWith, trpcRejection } from '../support/trpc';

// A webhook endpoint that an active or paused sequence's webhook step sends to cannot be deleted
// (docs/webhooks.md): 409 webhook_in_use naming the sequences and steps, until they are changed.

function callerFor(key: string) {
  return createCaller(createCallerContext({ db: testDb(), apiKey: key, webhooks: { allowInsecure: false, now: () => new Date() } }));
}

async function endpoint(key: string) {
  return (await callerFor(key).webhooks.create({ url: 'https://hooks.example.com/x' })).webhook.id;
}

const notify = (endpointId: string, id = 'notify') => ({ id, type: 'webhook' as const, endpointId });
const TAG = { id: 'mark', type: 'tag' as const, add: ['x'] };

async function endpointCount(accountId: string): Promise<number> {
  const [rows] = await testDb().sequelize.query(`SELECT COUNT(*) AS n FROM webhook_endpoints WHERE account_id = '${accountId}'`);
  return Number((rows as Array<{ n: number | string }>)[0]!.n);
}

describe('deleting a webhook endpoint that a sequence uses (procedures)', () => {
  it('answers 409 webhook_in_use naming the active sequence and its step, and deletes nothing', async () => {
    const { key, accountId } = await buildTenant();
    const hook = await endpoint(key);
    const { sequence } = await callerFor(key).sequences.create({ name: 'Welcome', status: 'active', steps: [TAG, notify(hook)] });

    const error = await rejectedWith(callerFor(key).webhooks.delete({ id: hook }), 'CONFLICT', {
      error: 'The webhook endpoint is used by the sequence "Welcome" (step "notify"): change those steps, or archive the sequence, before deleting it',
      code: 'webhook_in_use',
    });
    expect(issueDetails(error)).to.deep.equal([
      { path: `sequences.${sequence.id}.steps.1`, message: 'Step 2 "notify" of the active sequence "Welcome" (version 1) sends to this endpoint' },
    ]);
    expect(await endpointCount(accountId)).to.equal(1);
  });

  it('names every step of every active or paused sequence that uses it, in the order the sequences were created', async () => {
    const { key } = await buildTenant();
    const hook = await endpoint(key);
    const other = await endpoint(key);
    const first = (await callerFor(key).sequences.create({ name: 'First', status: 'paused', steps: [notify(hook, 'a'), notify(other, 'b'), notify(hook, 'c')] })).sequence;
    await callerFor(key).sequences.create({ name: 'Unrelated', status: 'active', steps: [notify(other)] });
    const second = (await callerFor(key).sequences.create({ name: 'Second', status: 'active', steps: [notify(hook, 'h')] })).sequence;

    const error = await trpcRejection(callerFor(key).webhooks.delete({ id: hook }));
    expect(error.message).to.equal(
      'The webhook endpoint is used by the sequences "First" (step "a", step "c"), "Second" (step "h"): change those steps, or archive the sequence, before deleting it',
    );
    expect(issueDetails(error)).to.deep.equal([
      { path: `sequences.${first.id}.steps.0`, message: 'Step 1 "a" of the paused sequence "First" (version 1) sends to this endpoint' },
      { path: `sequences.${first.id}.steps.2`, message: 'Step 3 "c" of the paused sequence "First" (version 1) sends to this endpoint' },
      { path: `sequences.${second.id}.steps.0`, message: 'Step 1 "h" of the active sequence "Second" (version 1) sends to this endpoint' },
    ]);
  });

  it('deletes it once the steps are changed, or when only draft and archived sequences use it', async () => {
    const { key, accountId } = await buildTenant();
    const hook = await endpoint(key);
    const { sequence } = await callerFor(key).sequences.create({ name: 'Welcome', status: 'active', steps: [notify(hook)] });
    await callerFor(key).sequences.create({ name: 'Draft', status: 'draft', steps: [notify(hook)] });
    await callerFor(key).sequences.create({ name: 'Old', status: 'archived', steps: [notify(hook)] });
    await trpcRejection(callerFor(key).webhooks.delete({ id: hook }));

    await callerFor(key).sequences.update({ id: sequence.id, steps: [TAG] });
    await callerFor(key).webhooks.delete({ id: hook });
    expect(await endpointCount(accountId)).to.equal(0);
  });

  describe('against concurrent sequence writes (MySQL)', () => {
    beforeEach(function () {
      if (testDb().dialect !== 'mysql') {
        this.currentTest!.title += ' (skipped: MySQL only; SQLite runs one transaction at a time)';
        this.skip();
      }
    });

    const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it('waits for a sequence change that starts using the endpoint, then answers 409', async () => {
      const { key, accountId } = await buildTenant();
      const hook = await endpoint(key);
      const sequence = await createSequence(testDb(), { accountId, name: 'Welcome', status: 'active', steps: [TAG] });
      const gate = holdAfter(/FROM webhook_endpoints WHERE account_id = \? AND id IN/);
      try {
        const locks = await countLockFailures(async () => {
          const change = updateSequence(testDb(), { accountId, id: sequence.id, steps: [TAG, notify(hook)] });
          await gate.held;
          const deleteSent = gate.sent(/FROM webhook_endpoints WHERE id = \? AND account_id = \? FOR UPDATE/);
          const remove = deleteWebhook(testDb(), { accountId, id: hook }).then(
            () => null,
            (error: unknown) => error,
          );
          await deleteSent;
          await settle(300);
          gate.release();
          return Promise.all([change, remove]);
        });
        expect(locks.deadlocks).to.equal(0);
        const [changed, refused] = locks.result;
        expect(changed.version).to.equal(2);
        expect(refused).to.be.instanceOf(ConflictError);
        expect((refused as ConflictError).code).to.equal('webhook_in_use');
        expect(await endpointCount(accountId)).to.equal(1);
      } finally {
        gate.restore();
      }
    });

    it('makes a sequence create that names the endpoint wait for the delete, then refuses it: 400, nothing stored', async () => {
      const { key, accountId } = await buildTenant();
      const hook = await endpoint(key);
      const gate = holdAfter(/FROM webhook_endpoints WHERE id = \? AND account_id = \? FOR UPDATE/);
      try {
        const locks = await countLockFailures(async () => {
          const remove = deleteWebhook(testDb(), { accountId, id: hook });
          await gate.held;
          const createSent = gate.sent(/FROM webhook_endpoints WHERE account_id = \? AND id IN/);
          const create = createSequence(testDb(), { accountId, name: 'Late', status: 'active', steps: [notify(hook)] }).then(
            () => null,
            (error: unknown) => error,
          );
          await createSent;
          await settle(300);
          gate.release();
          return Promise.all([remove, create]);
        });
        expect(locks.deadlocks).to.equal(0);
        const [, refused] = locks.result;
        expect((refused as Error).message).to.equal(`Step "notify": "${hook}" is not a webhook endpoint of the account`);
        expect(await endpointCount(accountId)).to.equal(0);
        const [rows] = await testDb().sequelize.query(`SELECT COUNT(*) AS n FROM sequences WHERE account_id = '${accountId}'`);
        expect(Number((rows as Array<{ n: number | string }>)[0]!.n)).to.equal(0);
      } finally {
        gate.restore();
      }
    });
  });
});
