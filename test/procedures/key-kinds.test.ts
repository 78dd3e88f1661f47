import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { expect } from 'chai';
import { select } from '../../src/db/sql/statements';
import { ForbiddenError } from '../../src/errors/app-errors';
import { caller } from '../support/app';
import { testDb } from '../support/db';
import { buildApiKey, buildSequence, buildTenant } from '../support/factories';
import { trpcRejection } from '../support/trpc';

// Who may call what, through createCaller (the same middlewares as both HTTP transports):
// an integration key gets every public operation and not the internal runs.transition; a
// runner key gets everything.

const FORBIDDEN = 'This API key may not call this procedure';

// Whole rows, updated_at included: "nothing changed" means nothing.
async function runRow(runId: string) {
  const [row] = await select<Record<string, unknown>>(testDb(), 'SELECT * FROM sequence_runs WHERE id = ?', [runId]);
  return row;
}

// An account with a pending run, an integration key and a runner key.
async function accountWithRun() {
  const tenant = await buildTenant();
  const runner = await buildApiKey(tenant.accountId, { name: 'runner', kind: 'runner' });
  const sequence = await buildSequence(tenant.accountId, 'active');
  const outcome = await caller(tenant.key).sequences.trigger({ id: sequence.id, contact: { email: 'ada@example.com' } });
  if (!outcome.enrolled) throw new Error(`setup: not enrolled (${outcome.reason})`);
  return { ...tenant, runnerKey: runner.key, runnerKeyId: runner.id, sequenceId: sequence.id, ...outcome };
}

describe('procedures by key kind', () => {
  describe('runs.transition with an integration key', () => {
    it('is FORBIDDEN (403) and leaves the run as it was', async () => {
      const { key, runId } = await accountWithRun();
      const before = await runRow(runId);

      const error = await trpcRejection(caller(key).runs.transition({ runId, status: 'running' }));

      expect(error.code).to.equal('FORBIDDEN');
      expect(error.cause).to.be.instanceOf(ForbiddenError);
      expect(error.message).to.equal(FORBIDDEN);
      expect(getHTTPStatusCodeFromError(error)).to.equal(403);
      expect(await runRow(runId)).to.deep.equal(before);
    });

    it('is FORBIDDEN before its input is looked at', async () => {
      const { key, runId } = await accountWithRun();
      const before = await runRow(runId);
      for (const input of [{ runId, status: 'archived' }, {}, null]) {
        const error = await trpcRejection(caller(key).runs.transition(input as never));
        expect(error.code, JSON.stringify(input)).to.equal('FORBIDDEN');
      }
      expect(await runRow(runId)).to.deep.equal(before);
    });

    it('is UNAUTHORIZED, not FORBIDDEN, without a working key', async () => {
      const { runId, accountId } = await accountWithRun();
      const disabledRunner = await buildApiKey(accountId, { kind: 'runner', active: false });
      for (const key of [undefined, `svc_${'0'.repeat(40)}`, disabledRunner.key]) {
        const error = await trpcRejection(caller(key).runs.transition({ runId, status: 'running' }));
        expect(error.code).to.equal('UNAUTHORIZED');
      }
    });
  });

  describe('runs.transition with a runner key', () => {
    it('moves the account\'s run', async () => {
      const { runnerKey, runId, key, sequenceId, contactId } = await accountWithRun();
      const { run } = await caller(runnerKey).runs.transition({ runId, status: 'running' });
      expect(run).to.include({ id: runId, status: 'running' });
      expect((await runRow(runId)).status).to.equal('running');
      // The integration key sees the move.
      const status = await caller(key).sequences.enrollmentStatus({ id: sequenceId, contactId });
      expect(status).to.deep.equal({ enrolled: true, run });
    });

    it('validates the input once the key may call it', async () => {
      const { runnerKey, runId } = await accountWithRun();
      const error = await trpcRejection(caller(runnerKey).runs.transition({ runId, status: 'archived' as never }));
      expect(error.code).to.equal('BAD_REQUEST');
    });

    it('cannot reach another account\'s run', async () => {
      const { runId } = await accountWithRun();
      const other = await buildTenant({ kind: 'runner' });
      const error = await trpcRejection(caller(other.key).runs.transition({ runId, status: 'running' }));
      expect(error.code).to.equal('NOT_FOUND');
    });
  });

  it('lets a runner key do everything an integration key does', async () => {
    const { key: runnerKey, accountId } = await buildTenant({ kind: 'runner' });
    const sequence = await buildSequence(accountId, 'active');
    const runner = caller(runnerKey);

    const { contact } = await runner.contacts.create({ email: 'grace@example.com', tags: ['navy'] });
    expect((await runner.contacts.upsert({ email: 'GRACE@example.com', firstName: 'Grace' })).created).to.equal(false);
    expect((await runner.contacts.batch({ contacts: [{ email: 'a@example.com' }] })).summary.inserted).to.equal(1);
    expect((await runner.contacts.get({ id: contact.id })).contact.firstName).to.equal('Grace');
    expect((await runner.contacts.getByEmail({ email: 'grace@example.com' })).contact.id).to.equal(contact.id);
    await runner.contacts.update({ id: contact.id, lastName: 'Hopper' });
    await runner.contacts.updateSubscriptions({ id: contact.id, emailSubscriptionStatus: 'unsubscribed' });
    await runner.contacts.addTags({ id: contact.id, tags: ['cobol'] });
    expect((await runner.contacts.removeTags({ id: contact.id, tags: ['navy'] })).contact.tags).to.deep.equal(['cobol']);

    const triggered = await runner.sequences.trigger({ id: sequence.id, contact: { email: 'ada@example.com' } });
    expect(triggered.enrolled).to.equal(true);
    expect((await runner.sequences.enroll({ id: sequence.id, contactIds: [contact.id] })).summary.successful).to.equal(1);
    expect((await runner.sequences.enrollByEmail({ id: sequence.id, email: 'new@example.com' })).enrolled).to.equal(true);
    expect((await runner.sequences.unenroll({ id: sequence.id, contactIds: [contact.id] })).cancelled).to.equal(1);
    expect((await runner.sequences.enrollmentStatus({ id: sequence.id, contactId: contact.id })).enrolled).to.equal(false);
    await runner.contacts.delete({ id: contact.id });
  });
});
