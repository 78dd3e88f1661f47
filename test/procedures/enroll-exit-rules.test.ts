import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { batchUpsertContacts } from '../../src/services/contacts/contact-operations';
import { listEvents } from '../../src/services/events/list-events';
import { caller } from '../support/app';
import { captureQueries, testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { storedEnrollments, storedRuns } from '../support/sequence-rows';

// A contact that already meets one of a sequence's exit rules is not enrolled in it
// (docs/decisions.md "Runs"): trigger and enroll-by-email answer `exit_rule_met`, enroll by ids
// counts it as failed with that reason, and no run is written for it. The contact upsert of
// trigger and enroll-by-email still stands.

type CreateInput = Parameters<ReturnType<typeof caller>['sequences']['create']>[0];

const EXIT_WHEN = [{ tag: 'purchased' }, { unsubscribed: 'email' }] as const;
const STEPS = [{ id: 'w', type: 'wait', duration: 'P1D' }, { id: 'end', type: 'exit' }] as const;

async function setup(options: { maxActiveRuns?: number; steps?: boolean } = {}) {
  const tenant = await buildTenant({ maxActiveRuns: options.maxActiveRuns });
  const input = { name: 'Onboarding', status: 'active', exitWhen: EXIT_WHEN, ...(options.steps === false ? {} : { steps: STEPS }) };
  const { sequence } = await caller(tenant.key).sequences.create(input as unknown as CreateInput);
  return { ...tenant, sequenceId: sequence.id };
}

async function eventTypes(accountId: string): Promise<string[]> {
  const { events } = await listEvents(testDb(), { accountId, limit: 100 });
  return events.map((event) => event.type);
}

describe('enrolling a contact that meets an exit rule (procedures)', () => {
  describe('trigger', () => {
    it('answers exit_rule_met for a contact that has the exit tag: no run, the upsert stands', async () => {
      const { key, accountId, sequenceId } = await setup();
      const contact = await buildContact(accountId, { tags: ['purchased'] });
      const eventsBefore = await eventTypes(accountId);

      const outcome = await caller(key).sequences.trigger({ id: sequenceId, contact: { email: contact.email, firstName: 'Ada' } });
      expect(outcome).to.deep.equal({ enrolled: false, reason: 'exit_rule_met', contactId: contact.id });
      expect(await storedRuns({ contactId: contact.id })).to.deep.equal([]);
      expect((await caller(key).contacts.get({ id: contact.id })).contact.firstName).to.equal('Ada');
      expect((await eventTypes(accountId)).slice(eventsBefore.length)).to.deep.equal(['contact.updated']);
    });

    it('answers exit_rule_met when the trigger itself gives the contact the tag, or unsubscribes it: the contact is created', async () => {
      const { key, accountId, sequenceId } = await setup();
      const tagged = await caller(key).sequences.trigger({ id: sequenceId, contact: { email: 'new@example.com', tags: ['purchased'] } });
      expect(tagged).to.include({ enrolled: false, reason: 'exit_rule_met' });
      const unsubscribed = await caller(key).sequences.trigger({
        id: sequenceId,
        contact: { email: 'gone@example.com', emailSubscriptionStatus: 'unsubscribed' },
      });
      expect(unsubscribed).to.include({ enrolled: false, reason: 'exit_rule_met' });
      const created = await caller(key).contacts.getByEmail({ email: 'new@example.com' });
      expect(created.contact.id).to.equal((tagged as { contactId: string }).contactId);
      expect(await storedRuns({ accountId })).to.deep.equal([]);
      expect(await eventTypes(accountId)).to.deep.equal(['contact.created', 'contact.created']);
    });

    it('enrolls a contact that meets no rule, and answers active_run_exists before exit_rule_met', async () => {
      const { key, accountId, sequenceId } = await setup();
      const contact = await buildContact(accountId);
      const first = await caller(key).sequences.trigger({ id: sequenceId, contact: { email: contact.email } });
      expect(first).to.include({ enrolled: true, contactId: contact.id });
      // A rule added after the contact enrolled: its run is the one to report (the engine
      // cancels it before its next step).
      await caller(key).sequences.update({ id: sequenceId, exitWhen: [{ tag: 'vip' }] });
      await testDb().sequelize.query(`UPDATE contacts SET tags = '["vip"]' WHERE id = '${contact.id}'`);
      const second = await caller(key).sequences.trigger({ id: sequenceId, contact: { email: contact.email } });
      expect(second).to.deep.equal({ enrolled: false, reason: 'active_run_exists', contactId: contact.id });
    });

    it('answers exit_rule_met for a sequence without steps too, and before sequence_limit_reached', async () => {
      const { key, accountId, sequenceId } = await setup({ steps: false, maxActiveRuns: 0 });
      const contact = await buildContact(accountId, { tags: ['purchased'] });
      const outcome = await caller(key).sequences.trigger({ id: sequenceId, contact: { email: contact.email } });
      expect(outcome).to.deep.equal({ enrolled: false, reason: 'exit_rule_met', contactId: contact.id });
      expect(await storedRuns({ accountId })).to.deep.equal([]);
    });
  });

  describe('enroll-by-email', () => {
    it('answers exit_rule_met, with the upsert applied and no run', async () => {
      const { key, accountId, sequenceId } = await setup();
      const contact = await buildContact(accountId, { emailSubscriptionStatus: 'unsubscribed' });
      const outcome = await caller(key).sequences.enrollByEmail({ id: sequenceId, email: contact.email, tags: ['webinar'] });
      expect(outcome).to.deep.equal({ enrolled: false, reason: 'exit_rule_met', contactId: contact.id });
      expect((await caller(key).contacts.get({ id: contact.id })).contact.tags).to.deep.equal(['webinar']);
      expect(await storedRuns({ accountId })).to.deep.equal([]);
    });
  });

  describe('enroll by ids', () => {
    it('counts a contact that meets a rule as failed with exit_rule_met, in request order; the others enroll', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 2 });
      const ok = await buildContact(accountId);
      const tagged = await buildContact(accountId, { tags: ['purchased'] });
      const unsubscribed = await buildContact(accountId, { emailSubscriptionStatus: 'unsubscribed' });
      const alsoOk = await buildContact(accountId);
      const overLimit = await buildContact(accountId);
      const unknown = randomUUID();

      const { enrollment, summary } = await caller(key).sequences.enroll({
        id: sequenceId,
        contactIds: [tagged.id, ok.id, unknown, unsubscribed.id, alsoOk.id, overLimit.id],
      });
      expect(summary).to.deep.equal({
        processed: 6,
        successful: 2,
        failed: 4,
        skipped: 0,
        failures: [
          { contactId: tagged.id, reason: 'exit_rule_met' },
          { contactId: unknown, reason: 'not_found' },
          { contactId: unsubscribed.id, reason: 'exit_rule_met' },
          { contactId: overLimit.id, reason: 'sequence_limit_reached' },
        ],
      });
      expect(enrollment).to.include({ totalContacts: 6, successfulEnrollments: 2, failedEnrollments: 4, skippedDuplicates: 0 });
      expect((await storedEnrollments({ sequenceId }))[0]).to.include({ successfulEnrollments: 2, failedEnrollments: 4 });
      expect((await storedRuns({ sequenceId })).map((run) => run.contactId).sort()).to.deep.equal([ok.id, alsoOk.id].sort());
    });

    it('is set-based with exit rules: 500 ids cost no more statements than 5', async () => {
      const { key, accountId } = await setup();
      const emails = Array.from({ length: 505 }, (_, i) => `exit-${String(i).padStart(4, '0')}@example.com`);
      for (let start = 0; start < emails.length; start += 100) {
        // Every other contact has the exit tag.
        const chunk = emails.slice(start, start + 100).map((email, i) => ({ email, tags: (start + i) % 2 === 0 ? ['purchased'] : [] }));
        await batchUpsertContacts(testDb(), { accountId, contacts: chunk });
      }
      const rows = await testDb().sequelize.query(`SELECT id, email FROM contacts WHERE account_id = '${accountId}' ORDER BY email`, { type: 'SELECT' });
      const ids = (rows as Array<{ id: string }>).map((row) => row.id);
      const create = async () =>
        (await caller(key).sequences.create({ name: 'Bulk', status: 'active', steps: STEPS, exitWhen: EXIT_WHEN } as unknown as CreateInput)).sequence.id;
      const [small, large] = [await create(), await create()];

      const five = await captureQueries(() => caller(key).sequences.enroll({ id: small, contactIds: ids.slice(0, 5) }));
      const fiveHundred = await captureQueries(() => caller(key).sequences.enroll({ id: large, contactIds: ids.slice(5) }));
      expect(five.result.summary).to.include({ processed: 5, successful: 2, failed: 3 });
      expect(fiveHundred.result.summary).to.include({ processed: 500, successful: 250, failed: 250, skipped: 0 });
      expect(fiveHundred.result.summary.failures.every((failure) => failure.reason === 'exit_rule_met')).to.equal(true);
      expect(fiveHundred.queries.length).to.be.at.most(five.queries.length);
      expect(await storedRuns({ sequenceId: large })).to.have.length(250);
    });
  });
});
