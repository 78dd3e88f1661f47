import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '../../src/errors/app-errors';
import { execute } from '../../src/db/sql/statements';
import type { SequenceStatus } from '../../src/schemas/statuses';
import { batchUpsertContacts } from '../../src/services/contacts/contact-operations';
import { setSequenceStatus } from '../../src/services/sequences/sequence-admin';
import { caller } from '../support/app';
import { captureQueries, testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { countRows, storedEnrollments, storedRuns } from '../support/sequence-rows';
import { rejectedWith, trpcRejection } from '../support/trpc';
import { issueDetails } from '../../src/trpc/errors';

// The sequences procedures through tRPC's createCaller (docs/decisions.md "Account run limit",
// "Runs", "Sequence errors on every sequence operation", "Batch and bulk", "Trigger and
// enroll-by-email"): the outcomes, what is stored, the limits. Paths, statuses and bodies:
// test/http/sequences.test.ts.

const NOT_ACTIVE: SequenceStatus[] = ['draft', 'paused', 'archived'];
const SEQUENCE_NOT_FOUND = { error: 'Sequence not found', code: 'not_found' };
const CONTACT_NOT_FOUND = { error: 'Contact not found', code: 'not_found' };
const SEQUENCE_NOT_ACTIVE = { error: 'Sequence is not active', code: 'sequence_not_active' };

// An active sequence of a fresh account, and the account's key (a runner key where the test
// moves runs as the sequence runner does).
async function setup(options: Parameters<typeof buildTenant>[0] = {}) {
  const tenant = await buildTenant(options);
  const sequence = await buildSequence(tenant.accountId, 'active');
  return { ...tenant, sequenceId: sequence.id };
}

function trigger(key: string, sequenceId: string, contact: Record<string, unknown>) {
  return caller(key).sequences.trigger({ id: sequenceId, contact } as never);
}

// The ids of a trigger that enrolled; fails the test otherwise.
async function triggered(key: string, sequenceId: string, contact: Record<string, unknown>) {
  const outcome = await trigger(key, sequenceId, contact);
  if (!outcome.enrolled) return expect.fail(`not enrolled: ${JSON.stringify(outcome)}`);
  return outcome;
}

function enroll(key: string, sequenceId: string, contactIds: unknown) {
  return caller(key).sequences.enroll({ id: sequenceId, contactIds } as never);
}

function unenroll(key: string, sequenceId: string, contactIds: unknown) {
  return caller(key).sequences.unenroll({ id: sequenceId, contactIds } as never);
}

function status(key: string, sequenceId: string, contactId: string) {
  return caller(key).sequences.enrollmentStatus({ id: sequenceId, contactId });
}

function getContact(key: string, id: string) {
  return caller(key).contacts.get({ id }).then(({ contact }) => contact);
}

// A BAD_REQUEST with a message and at least one issue (REST's 400 `error` and `details`).
async function badInput(promise: Promise<unknown>, label: string) {
  const error = await trpcRejection(promise);
  expect(error.code, label).to.equal('BAD_REQUEST');
  expect(error.message, label).to.be.a('string').that.is.not.empty;
  expect(issueDetails(error), label).to.be.an('array').that.is.not.empty;
  return error;
}

async function contactIds(accountId: string, count: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push((await buildContact(accountId)).id);
  return ids;
}

// Contacts made fast: batch upserts of 100, then their ids, in email order.
async function manyContacts(accountId: string, count: number, prefix = 'bulk') {
  const emails = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}@example.com`);
  for (let start = 0; start < count; start += 100) {
    const chunk = emails.slice(start, start + 100).map((email) => ({ email }));
    await batchUpsertContacts(testDb(), { accountId, contacts: chunk });
  }
  const rows = (await testDb().sequelize.query(
    'SELECT id FROM contacts WHERE account_id = ? AND email_normalized IN (?) ORDER BY email_normalized',
    { replacements: [accountId, emails], type: 'SELECT' },
  )) as Array<{ id: string }>;
  expect(rows).to.have.length(count);
  return rows.map((row) => row.id);
}

function expectWithin(iso: string | null, before: number, after: number) {
  expect(iso).to.be.a('string');
  expect(Date.parse(iso as string), `${iso} within the request`).to.be.within(before, after);
}

describe('sequences procedures', () => {
  describe('trigger', () => {
    it('enrolls an existing contact found by email case-insensitively, keeping the email as first given', async () => {
      const { key, accountId, sequenceId } = await setup();
      const existing = await buildContact(accountId, { email: 'Grace@Example.com' });
      const outcome = await trigger(key, sequenceId, { email: 'grace@EXAMPLE.com' });

      expect(outcome).to.include({ enrolled: true, contactId: existing.id });
      expect(await countRows('contacts', accountId)).to.equal(1);
      expect((await getContact(key, existing.id)).email).to.equal('Grace@Example.com');
    });

    it('accepts a whole contact object read back from the API, ignoring its read-only fields', async () => {
      const { key, accountId, sequenceId } = await setup();
      const existing = await buildContact(accountId, { email: 'whole@example.com', firstName: 'Old' });
      const read = await getContact(key, existing.id);

      const outcome = await trigger(key, sequenceId.toUpperCase(), { ...read, id: randomUUID(), firstName: 'New' });

      expect(outcome).to.include({ enrolled: true, contactId: existing.id });
      expect(await getContact(key, existing.id)).to.include({ firstName: 'New', createdAt: read.createdAt });
      expect(await countRows('contacts', accountId)).to.equal(1);
      expect((await storedRuns({ contactId: existing.id }))[0].sequenceId).to.equal(sequenceId);
    });

    it('rejects an upsert whose merge would break the contact limits with BAD_REQUEST, writing nothing', async () => {
      const { key, accountId, sequenceId } = await setup();
      const full = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
      const existing = await buildContact(accountId, { email: 'full@example.com', firstName: 'Kept', customFields: full });

      const error = await trpcRejection(
        trigger(key, sequenceId, { email: 'full@example.com', firstName: 'Changed', customFields: { extra: 1 } }),
      );

      expect(error.code).to.equal('BAD_REQUEST');
      expect(error.message).to.be.a('string').that.is.not.empty;
      const contact = await getContact(key, existing.id);
      expect(contact.firstName).to.equal('Kept');
      expect(Object.keys(contact.customFields)).to.have.length(100);
      expect(await countRows('sequence_runs')).to.equal(0);
    });

    it('answers active_run_exists for a contact already in the sequence, and still applies the upsert merge rules', async () => {
      const { key, accountId, sequenceId } = await setup();
      const existing = await buildContact(accountId, {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
        phone: '+441111',
        tags: ['vip'],
        customFields: { plan: 'pro', address: { city: 'Leeds' } },
      });
      const first = await triggered(key, sequenceId, { email: 'ada@example.com' });

      const outcome = await trigger(key, sequenceId, {
        email: 'ada@example.com',
        firstName: 'Augusta',
        lastName: null,
        tags: [],
        customFields: { address: { zip: 'LS1' } },
        emailSubscriptionStatus: 'unsubscribed',
      });

      expect(outcome).to.deep.equal({ enrolled: false, reason: 'active_run_exists', contactId: existing.id });
      const contact = await getContact(key, existing.id);
      expect(contact).to.include({
        firstName: 'Augusta',
        lastName: 'Lovelace',
        phone: '+441111',
        emailSubscriptionStatus: 'unsubscribed',
        whatsappSubscriptionStatus: 'subscribed',
      });
      expect(contact.tags).to.deep.equal(['vip']);
      expect(contact.customFields).to.deep.equal({ plan: 'pro', address: { city: 'Leeds', zip: 'LS1' } });
      const runs = await storedRuns({ accountId });
      expect(runs.map((run) => run.id)).to.deep.equal([first.runId]);
    });

    it('answers sequence_limit_reached when the account has maxActiveRuns active runs, and still upserts the contact', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      await triggered(key, sequenceId, { email: 'first@example.com' });

      const outcome = await trigger(key, sequenceId, { email: 'second@example.com', firstName: 'Second' });

      expect(outcome).to.have.all.keys('enrolled', 'reason', 'message', 'contactId');
      expect(outcome).to.include({ enrolled: false, reason: 'sequence_limit_reached' });
      expect(outcome).to.have.property('message', 'The account has reached its limit of active runs (1)');
      expect(await getContact(key, outcome.contactId)).to.include({ email: 'second@example.com', firstName: 'Second' });
      expect(await storedRuns({ accountId })).to.have.length(1);
      expect(await status(key, sequenceId, outcome.contactId)).to.deep.equal({ enrolled: false, run: null });
    });

    it('applies the merge rules to an existing contact when the limit is reached', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      await trigger(key, sequenceId, { email: 'first@example.com' });
      const existing = await buildContact(accountId, { email: 'old@example.com', firstName: 'Old', tags: ['a'] });

      const outcome = await trigger(key, sequenceId, { email: 'old@example.com', firstName: 'New', tags: ['b'] });

      expect(outcome).to.include({ enrolled: false, reason: 'sequence_limit_reached', contactId: existing.id });
      const contact = await getContact(key, existing.id);
      expect(contact.firstName).to.equal('New');
      expect(contact.tags).to.deep.equal(['b']);
    });

    it('counts the active runs of every sequence of the account against the limit', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      const second = await buildSequence(accountId, 'active');
      expect((await trigger(key, sequenceId, { email: 'a@example.com' })).enrolled).to.equal(true);

      const outcome = await trigger(key, second.id, { email: 'b@example.com' });

      expect(outcome).to.have.property('reason', 'sequence_limit_reached');
      expect(await storedRuns({ sequenceId: second.id })).to.deep.equal([]);
    });

    it('does not count finished runs against the limit', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      const first = await trigger(key, sequenceId, { email: 'a@example.com' });
      await unenroll(key, sequenceId, [first.contactId]);

      const outcome = await trigger(key, sequenceId, { email: 'b@example.com' });

      expect(outcome.enrolled).to.equal(true);
      expect((await storedRuns({ accountId })).map((run) => run.status)).to.have.members(['cancelled', 'pending']);
    });

    it('does not let another account\'s runs count against the limit', async () => {
      const { key, sequenceId } = await setup({ maxActiveRuns: 1 });
      const other = await setup();
      await trigger(other.key, other.sequenceId, { email: 'x@example.com' });
      await trigger(other.key, other.sequenceId, { email: 'y@example.com' });

      const outcome = await trigger(key, sequenceId, { email: 'a@example.com' });
      expect(outcome.enrolled).to.equal(true);
    });

    it('fails with CONFLICT Sequence is not active for a draft, paused or archived sequence, writing nothing', async () => {
      const { key, accountId } = await setup();
      const existing = await buildContact(accountId, { email: 'kept@example.com', firstName: 'Kept' });
      for (const sequenceStatus of NOT_ACTIVE) {
        const sequence = await buildSequence(accountId, sequenceStatus);
        for (const email of ['new@example.com', 'kept@example.com']) {
          await rejectedWith(trigger(key, sequence.id, { email, firstName: 'Changed' }), 'CONFLICT', SEQUENCE_NOT_ACTIVE);
        }
      }
      expect(await countRows('contacts')).to.equal(1);
      expect(await countRows('sequence_runs')).to.equal(0);
      expect((await getContact(key, existing.id)).firstName).to.equal('Kept');
    });

    it('rejects a missing contact, a missing or invalid email and wrongly typed fields with BAD_REQUEST, writing nothing', async () => {
      const { key, sequenceId } = await setup();
      const inputs: Array<[string, Record<string, unknown>]> = [
        ['no body fields', {}],
        ['contact not an object', { contact: 'ada@example.com' }],
        ['contact without email', { contact: { firstName: 'Ada' } }],
        ['invalid email', { contact: { email: 'not-an-email' } }],
        ['email not a string', { contact: { email: 42 } }],
        ['tags not an array', { contact: { email: 'a@example.com', tags: 'vip' } }],
        ['firstName not a string', { contact: { email: 'a@example.com', firstName: 5 } }],
        ['customFields not an object', { contact: { email: 'a@example.com', customFields: [1, 2] } }],
        ['unknown subscription status', { contact: { email: 'a@example.com', emailSubscriptionStatus: 'maybe' } }],
        ['phone too short', { contact: { email: 'a@example.com', phone: '12' } }],
        ['top-level fields instead of contact', { email: 'a@example.com' }],
      ];
      for (const [name, input] of inputs) {
        await badInput(caller(key).sequences.trigger({ id: sequenceId, ...input } as never), name);
      }
      const invalid = await badInput(trigger(key, sequenceId, { email: 'nope' }), 'invalid email');
      expect(issueDetails(invalid)?.map((d) => d.path)).to.include('contact.email');
      expect(await countRows('contacts')).to.equal(0);
      expect(await countRows('sequence_runs')).to.equal(0);
    });
  });

  describe('enrollByEmail', () => {
    function enrollByEmail(key: string, sequenceId: string, input: Record<string, unknown>) {
      return caller(key).sequences.enrollByEmail({ id: sequenceId, ...input } as never);
    }

    it('fails with CONFLICT Sequence is not active for a draft, paused or archived sequence, writing nothing', async () => {
      const { key, accountId } = await setup();
      for (const sequenceStatus of NOT_ACTIVE) {
        const sequence = await buildSequence(accountId, sequenceStatus);
        await rejectedWith(enrollByEmail(key, sequence.id, { email: 'nobody@example.com' }), 'CONFLICT', SEQUENCE_NOT_ACTIVE);
      }
      expect(await countRows('contacts')).to.equal(0);
      expect(await countRows('sequence_runs')).to.equal(0);
    });

    it('rejects a contact wrapper, a missing or invalid email with BAD_REQUEST, writing nothing', async () => {
      const { key, sequenceId } = await setup();
      for (const input of [{}, { contact: { email: 'a@example.com' } }, { email: 'bad' }, { email: 'a@example.com', tags: 'x' }]) {
        const error = await trpcRejection(enrollByEmail(key, sequenceId, input));
        expect(error.code, JSON.stringify(input)).to.equal('BAD_REQUEST');
        expect(error.message).to.be.a('string').that.is.not.empty;
      }
      expect(await countRows('contacts')).to.equal(0);
    });
  });

  describe('enroll', () => {
    it('counts repeated ids once, unknown and other-account ids as failed, contacts with an active run as skipped', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [fresh1, fresh2, enrolled] = await contactIds(accountId, 3);
      const before = await trigger(key, sequenceId, { email: (await getContact(key, enrolled)).email });
      expect(before).to.include({ enrolled: true, contactId: enrolled });
      const other = await buildTenant();
      const theirs = (await buildContact(other.accountId)).id;
      const unknown = randomUUID();

      const result = await enroll(key, sequenceId, [fresh1, fresh2, fresh1, enrolled, theirs, unknown, fresh2.toUpperCase()]);

      expect(result.summary).to.deep.equal({
        processed: 5,
        successful: 2,
        failed: 2,
        skipped: 1,
        failures: [
          { contactId: theirs, reason: 'not_found' },
          { contactId: unknown, reason: 'not_found' },
        ],
      });
      expect(result.enrollment).to.include({
        totalContacts: 5,
        successfulEnrollments: 2,
        failedEnrollments: 2,
        skippedDuplicates: 1,
        status: 'completed',
      });
      const runs = await storedRuns({ sequenceId });
      expect(runs.map((run) => run.contactId)).to.have.members([fresh1, fresh2, enrolled]);
      expect(runs.find((run) => run.contactId === enrolled)?.id).to.equal((before as { runId: string }).runId);
      expect(await storedRuns({ contactId: theirs })).to.deep.equal([]);
      const [stored] = await storedEnrollments({ sequenceId });
      expect(stored).to.deep.equal({ ...result.enrollment, accountId });
    });

    it('enrolls again a contact whose earlier run is finished', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [id] = await contactIds(accountId, 1);
      await enroll(key, sequenceId, [id]);
      await unenroll(key, sequenceId, [id]);

      const result = await enroll(key, sequenceId, [id]);

      expect(result.summary).to.deep.equal({ processed: 1, successful: 1, failed: 0, skipped: 0, failures: [] });
      expect((await storedRuns({ contactId: id })).map((run) => run.status)).to.have.members(['cancelled', 'pending']);
    });

    it('counts the contacts beyond the account\'s active-run limit as failed', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 3 });
      await trigger(key, sequenceId, { email: 'already@example.com' });
      const ids = await contactIds(accountId, 4);

      const result = await enroll(key, sequenceId, ids);

      expect(result.summary).to.deep.equal({
        processed: 4,
        successful: 2,
        failed: 2,
        skipped: 0,
        failures: [
          { contactId: ids[2], reason: 'sequence_limit_reached' },
          { contactId: ids[3], reason: 'sequence_limit_reached' },
        ],
      });
      expect(result.enrollment).to.include({ successfulEnrollments: 2, failedEnrollments: 2, skippedDuplicates: 0 });
      expect(await storedRuns({ accountId, status: 'pending' })).to.have.length(3);
    });

    it('answers with everything failed when the account is already at its limit', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      await trigger(key, sequenceId, { email: 'already@example.com' });
      const ids = await contactIds(accountId, 2);

      const result = await enroll(key, sequenceId, ids);

      expect(result.summary).to.deep.equal({
        processed: 2,
        successful: 0,
        failed: 2,
        skipped: 0,
        failures: ids.map((contactId) => ({ contactId, reason: 'sequence_limit_reached' })),
      });
      expect(await storedRuns({ accountId })).to.have.length(1);
      expect(await storedEnrollments({ sequenceId })).to.have.length(1);
    });

    it('names every failed id with its reason, in request order, as the request spelled it, and no other id', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 3 });
      const [enrolled, fresh1, fresh2, over1, over2] = await contactIds(accountId, 5);
      await enroll(key, sequenceId, [enrolled]);
      const other = await buildTenant();
      const theirs = (await buildContact(other.accountId)).id;
      const unknown = randomUUID().toUpperCase();

      const result = await enroll(key, sequenceId, [unknown, fresh1, enrolled, fresh2, over1.toUpperCase(), theirs, unknown.toLowerCase(), over2]);

      // The limit leaves room for two: the first two new contacts in request order get it.
      expect(result.summary).to.deep.equal({
        processed: 7,
        successful: 2,
        failed: 4,
        skipped: 1,
        failures: [
          { contactId: unknown, reason: 'not_found' },
          { contactId: over1.toUpperCase(), reason: 'sequence_limit_reached' },
          { contactId: theirs, reason: 'not_found' },
          { contactId: over2, reason: 'sequence_limit_reached' },
        ],
      });
      expect((await storedRuns({ sequenceId })).map((run) => run.contactId)).to.have.members([enrolled, fresh1, fresh2]);
    });

    it('rejects no ids, 501 ids, a malformed UUID, a non-array and a missing list with BAD_REQUEST, writing nothing', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [id] = await contactIds(accountId, 1);
      const cases: Array<[string, unknown]> = [
        ['no ids', []],
        ['501 ids', Array.from({ length: 501 }, () => randomUUID())],
        ['a malformed UUID', [id, 'not-a-uuid']],
        ['a string', id],
        ['numbers', [1, 2]],
        ['missing', undefined],
      ];
      for (const [name, ids] of cases) await badInput(enroll(key, sequenceId, ids), name);
      expect(await countRows('sequence_runs')).to.equal(0);
      expect(await countRows('enrollments')).to.equal(0);
    });

    it('accepts exactly 500 ids', async () => {
      const { key, sequenceId } = await setup();
      const ids = Array.from({ length: 500 }, () => randomUUID());
      const result = await enroll(key, sequenceId, ids);
      expect(result.summary).to.deep.equal({
        processed: 500,
        successful: 0,
        failed: 500,
        skipped: 0,
        failures: ids.map((contactId) => ({ contactId, reason: 'not_found' })),
      });
    });

    it('is set-based: enrolling 500 contacts costs no more SQL statements than enrolling 5', async () => {
      for (const maxActiveRuns of [null, 10_000]) {
        const { key, accountId } = await setup({ maxActiveRuns });
        const ids = await manyContacts(accountId, 505);
        const small = await buildSequence(accountId, 'active');
        const large = await buildSequence(accountId, 'active');

        const five = await captureQueries(() => enroll(key, small.id, ids.slice(0, 5)));
        const fiveHundred = await captureQueries(() => enroll(key, large.id, ids.slice(5)));

        const label = `maxActiveRuns ${maxActiveRuns}`;
        expect(five.result.summary, label).to.deep.equal({ processed: 5, successful: 5, failed: 0, skipped: 0, failures: [] });
        expect(fiveHundred.result.summary, label).to.deep.equal({ processed: 500, successful: 500, failed: 0, skipped: 0, failures: [] });
        expect(fiveHundred.queries.length, label).to.be.at.most(five.queries.length);
        expect(fiveHundred.queries.length, label).to.be.at.most(20);
        expect(await storedRuns({ sequenceId: large.id }), label).to.have.length(500);
      }
    });
  });

  describe('unenroll', () => {
    it('cancels running and paused runs as well as pending ones', async () => {
      const { key, accountId, sequenceId } = await setup({ kind: 'runner' });
      const [pending, running, paused] = await contactIds(accountId, 3);
      await enroll(key, sequenceId, [pending, running, paused]);
      const runId = async (contactId: string) => (await storedRuns({ contactId }))[0].id;
      await caller(key).runs.transition({ runId: await runId(running), status: 'running' });
      await caller(key).runs.transition({ runId: await runId(paused), status: 'running' });
      await caller(key).runs.transition({ runId: await runId(paused), status: 'paused' });

      const result = await unenroll(key, sequenceId, [paused, running, pending]);

      expect(result).to.deep.equal({ cancelled: 3, contactIds: [paused, running, pending] });
      const runs = await storedRuns({ sequenceId });
      expect(runs.map((run) => run.status)).to.deep.equal(['cancelled', 'cancelled', 'cancelled']);
      expect(runs.every((run) => run.completedAt !== null)).to.equal(true);
    });

    it('skips runs that are already completed, failed or cancelled, leaving them as they were', async () => {
      const { key, accountId, sequenceId } = await setup({ kind: 'runner' });
      const [completed, failed, cancelled] = await contactIds(accountId, 3);
      await enroll(key, sequenceId, [completed, failed, cancelled]);
      const runId = async (contactId: string) => (await storedRuns({ contactId }))[0].id;
      await caller(key).runs.transition({ runId: await runId(completed), status: 'running' });
      await caller(key).runs.transition({ runId: await runId(completed), status: 'completed' });
      await caller(key).runs.transition({ runId: await runId(failed), status: 'failed' });
      await unenroll(key, sequenceId, [cancelled]);
      const stored = await storedRuns({ sequenceId });

      const result = await unenroll(key, sequenceId, [completed, failed, cancelled]);

      expect(result).to.deep.equal({ cancelled: 0, contactIds: [] });
      expect(await storedRuns({ sequenceId })).to.deep.equal(stored);
    });

    it('leaves the contact\'s runs in other sequences alone', async () => {
      const { key, accountId, sequenceId } = await setup();
      const other = await buildSequence(accountId, 'active');
      const [id] = await contactIds(accountId, 1);
      await enroll(key, sequenceId, [id]);
      await enroll(key, other.id, [id]);

      const result = await unenroll(key, sequenceId, [id]);

      expect(result).to.deep.equal({ cancelled: 1, contactIds: [id] });
      expect((await storedRuns({ sequenceId: other.id }))[0].status).to.equal('pending');
    });

    it('works on a sequence that is no longer active', async () => {
      const { key, accountId, sequenceId } = await setup();
      const ids = await contactIds(accountId, 3);
      await enroll(key, sequenceId, ids);
      for (const [index, sequenceStatus] of NOT_ACTIVE.entries()) {
        await setSequenceStatus(testDb(), { id: sequenceId, status: sequenceStatus });
        const result = await unenroll(key, sequenceId, [ids[index]]);
        expect(result, sequenceStatus).to.deep.equal({ cancelled: 1, contactIds: [ids[index]] });
        expect((await storedRuns({ contactId: ids[index] }))[0].status).to.equal('cancelled');
      }
    });

    it('rejects no ids, 501 ids, a malformed UUID and a non-array with BAD_REQUEST, cancelling nothing', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [id] = await contactIds(accountId, 1);
      await enroll(key, sequenceId, [id]);
      const cases: Array<[string, unknown]> = [
        ['no ids', []],
        ['501 ids', [id, ...Array.from({ length: 500 }, () => randomUUID())]],
        ['a malformed UUID', [id, 'not-a-uuid']],
        ['a string', id],
        ['missing', undefined],
      ];
      for (const [name, ids] of cases) await badInput(unenroll(key, sequenceId, ids), name);
      expect((await storedRuns({ contactId: id }))[0].status).to.equal('pending');
    });

    it('lets the contact be triggered again: a new run, which enrollment status then shows', async () => {
      const { key, sequenceId } = await setup();
      const first = await triggered(key, sequenceId, { email: 'again@example.com' });
      await unenroll(key, sequenceId, [first.contactId]);

      const second = await triggered(key, sequenceId, { email: 'again@example.com' });

      expect(second).to.include({ enrolled: true, contactId: first.contactId });
      expect(second.runId).to.not.equal(first.runId);
      const runs = await storedRuns({ contactId: first.contactId });
      expect(runs.map((run) => [run.id, run.status])).to.deep.equal([
        [first.runId, 'cancelled'],
        [second.runId, 'pending'],
      ]);
      const current = await status(key, sequenceId, first.contactId);
      expect(current.enrolled).to.equal(true);
      expect(current.run).to.include({ id: second.runId, status: 'pending', completedAt: null });
    });

    it('is set-based: unenrolling 500 contacts costs no more SQL statements than unenrolling 5', async () => {
      const { key, accountId, sequenceId } = await setup();
      const ids = await manyContacts(accountId, 505);
      await enroll(key, sequenceId, ids.slice(0, 500));
      await enroll(key, sequenceId, ids.slice(500));

      const five = await captureQueries(() => unenroll(key, sequenceId, ids.slice(500)));
      const fiveHundred = await captureQueries(() => unenroll(key, sequenceId, ids.slice(0, 500)));

      expect(five.result.cancelled).to.equal(5);
      expect(fiveHundred.result.cancelled).to.equal(500);
      expect(fiveHundred.result.contactIds).to.deep.equal(ids.slice(0, 500));
      expect(fiveHundred.queries.length).to.be.at.most(five.queries.length);
    });
  });

  describe('enrollmentStatus', () => {
    it('answers not enrolled with the run once it is cancelled by unenroll', async () => {
      const { key, sequenceId } = await setup();
      const outcome = await triggered(key, sequenceId, { email: 'a@example.com' });
      await unenroll(key, sequenceId, [outcome.contactId]);

      const current = await status(key, sequenceId, outcome.contactId);

      const [stored] = await storedRuns({ contactId: outcome.contactId });
      expect(current).to.deep.equal({
        enrolled: false,
        run: {
          id: outcome.runId,
          status: 'cancelled',
          startedAt: stored.startedAt,
          completedAt: stored.completedAt,
          createdAt: stored.createdAt,
          version: null,
          currentStepId: null,
          reason: 'unenrolled',
        },
      });
      expect(stored.completedAt).to.be.a('string');
    });

    it('answers not enrolled with the run once the runner completes it', async () => {
      const { key, sequenceId } = await setup({ kind: 'runner' });
      const outcome = await triggered(key, sequenceId, { email: 'a@example.com' });
      await caller(key).runs.transition({ runId: outcome.runId, status: 'running' });
      const { run } = await caller(key).runs.transition({ runId: outcome.runId, status: 'completed' });

      const current = await status(key, sequenceId, outcome.contactId);

      expect(current).to.deep.equal({ enrolled: false, run });
      expect(run.completedAt).to.be.a('string');
    });

    it('reports the most recently created run, whatever the order runs were written or finished in', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [id] = await contactIds(accountId, 1);
      // Written directly, with chosen timestamps (execute keeps their milliseconds on MySQL).
      const insert = (runId: string, runStatus: string, createdAt: string, completedAt: string) =>
        execute(
          testDb(),
          `INSERT INTO sequence_runs (id, account_id, sequence_id, contact_id, status, started_at, completed_at, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [runId, accountId, sequenceId, id, runStatus, new Date(createdAt), new Date(completedAt), new Date(createdAt), new Date(completedAt)],
        );
      const newest = randomUUID();
      // Written out of order; the oldest finished last.
      await insert(newest, 'failed', '2026-03-01T10:00:00.002Z', '2026-03-01T10:05:00.000Z');
      await insert(randomUUID(), 'completed', '2026-03-01T10:00:00.001Z', '2026-03-02T00:00:00.000Z');
      await insert(randomUUID(), 'cancelled', '2026-02-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z');

      const current = await status(key, sequenceId, id);

      expect(current).to.deep.equal({
        enrolled: false,
        run: {
          id: newest,
          status: 'failed',
          startedAt: '2026-03-01T10:00:00.002Z',
          completedAt: '2026-03-01T10:05:00.000Z',
          createdAt: '2026-03-01T10:00:00.002Z',
          version: null,
          currentStepId: null,
          reason: null,
        },
      });
    });

    it('works on a sequence that is no longer active', async () => {
      const { key, sequenceId } = await setup();
      const outcome = await triggered(key, sequenceId, { email: 'a@example.com' });
      await setSequenceStatus(testDb(), { id: sequenceId, status: 'archived' });

      const current = await status(key, sequenceId, outcome.contactId);

      expect(current.enrolled).to.equal(true);
      expect(current.run?.id).to.equal(outcome.runId);
    });
  });

  describe('deleting a contact', () => {
    it('deletes its runs in every sequence', async () => {
      const { key, accountId, sequenceId } = await setup();
      const other = await buildSequence(accountId, 'active');
      const [doomed, kept] = await contactIds(accountId, 2);
      await enroll(key, sequenceId, [doomed, kept]);
      await enroll(key, other.id, [doomed]);
      await unenroll(key, other.id, [doomed]);
      await enroll(key, other.id, [doomed]);
      expect(await storedRuns({ contactId: doomed })).to.have.length(3);

      expect(await caller(key).contacts.delete({ id: doomed })).to.equal(undefined);

      expect(await storedRuns({ contactId: doomed })).to.deep.equal([]);
      expect(await storedRuns({ contactId: kept })).to.have.length(1);
      await rejectedWith(status(key, sequenceId, doomed), 'NOT_FOUND', CONTACT_NOT_FOUND);
    });
  });

  describe('account isolation', () => {
    it('hides account A\'s sequence from account B on every operation', async () => {
      const a = await setup();
      const b = await setup();
      const enrolled = await triggered(a.key, a.sequenceId, { email: 'a@example.com' });
      const [aRun] = await storedRuns({ accountId: a.accountId });

      const calls: Record<string, () => Promise<unknown>> = {
        trigger: () => trigger(b.key, a.sequenceId, { email: 'b@example.com' }),
        enrollByEmail: () => caller(b.key).sequences.enrollByEmail({ id: a.sequenceId, email: 'b@example.com' }),
        enroll: () => enroll(b.key, a.sequenceId, [enrolled.contactId]),
        unenroll: () => unenroll(b.key, a.sequenceId, [enrolled.contactId]),
        status: () => status(b.key, a.sequenceId, enrolled.contactId),
      };

      for (const [operation, call] of Object.entries(calls)) {
        const error = await trpcRejection(call());
        expect(error.code, operation).to.equal('NOT_FOUND');
        expect(error.message, operation).to.equal(SEQUENCE_NOT_FOUND.error);
      }
      expect(await countRows('contacts', b.accountId)).to.equal(0);
      expect(await countRows('sequence_runs', b.accountId)).to.equal(0);
      expect(await countRows('enrollments')).to.equal(0);
      expect(await storedRuns({ accountId: a.accountId })).to.deep.equal([aRun]);
    });

    it('does not enroll account A\'s contacts in account B\'s sequence: they count as failed', async () => {
      const a = await setup();
      const b = await setup();
      const aContacts = await contactIds(a.accountId, 2);
      const [bContact] = await contactIds(b.accountId, 1);

      const result = await enroll(b.key, b.sequenceId, [...aContacts, bContact]);

      expect(result.summary).to.deep.equal({
        processed: 3,
        successful: 1,
        failed: 2,
        skipped: 0,
        failures: aContacts.map((contactId) => ({ contactId, reason: 'not_found' })),
      });
      expect((await storedRuns({ sequenceId: b.sequenceId })).map((run) => run.contactId)).to.deep.equal([bContact]);
      expect(await countRows('sequence_runs', a.accountId)).to.equal(0);
    });

    it('does not cancel account A\'s runs through account B\'s sequence', async () => {
      const a = await setup();
      const b = await setup();
      const outcome = await trigger(a.key, a.sequenceId, { email: 'a@example.com' });

      const result = await unenroll(b.key, b.sequenceId, [outcome.contactId]);

      expect(result).to.deep.equal({ cancelled: 0, contactIds: [] });
      expect((await storedRuns({ contactId: outcome.contactId }))[0].status).to.equal('pending');
    });

    it('keeps contacts of the same email apart per account', async () => {
      const a = await setup();
      const b = await setup();
      const inA = await trigger(a.key, a.sequenceId, { email: 'same@example.com', firstName: 'A' });
      const inB = await trigger(b.key, b.sequenceId, { email: 'same@example.com', firstName: 'B' });

      expect(inB.enrolled).to.equal(true);
      expect(inB.contactId).to.not.equal(inA.contactId);
      expect((await getContact(a.key, inA.contactId)).firstName).to.equal('A');
    });
  });

  describe('through createCaller', () => {
    it('triggers and reads the enrollment status through createCaller', async () => {
      const { key, accountId, sequenceId } = await setup();
      const outcome = await caller(key).sequences.trigger({ id: sequenceId, contact: { email: 'rpc@example.com' } });
      expect(outcome.enrolled).to.equal(true);
      if (!outcome.enrolled) return;

      const again = await caller(key).sequences.trigger({ id: sequenceId, contact: { email: 'rpc@example.com' } });
      expect(again).to.deep.equal({ enrolled: false, reason: 'active_run_exists', contactId: outcome.contactId });

      const current = await caller(key).sequences.enrollmentStatus({ id: sequenceId, contactId: outcome.contactId });
      const [stored] = await storedRuns({ accountId });
      expect(current).to.deep.equal({
        enrolled: true,
        run: {
          id: outcome.runId,
          status: 'pending',
          startedAt: stored.startedAt,
          completedAt: null,
          createdAt: stored.createdAt,
          version: null,
          currentStepId: null,
          reason: null,
        },
      });
    });

    it('enrolls by ids, by email and unenrolls through createCaller', async () => {
      const { key, accountId, sequenceId } = await setup();
      const ids = await contactIds(accountId, 2);
      const enrolled = await caller(key).sequences.enroll({ id: sequenceId, contactIds: ids });
      expect(enrolled.summary).to.deep.equal({ processed: 2, successful: 2, failed: 0, skipped: 0, failures: [] });
      const byEmail = await caller(key).sequences.enrollByEmail({ id: sequenceId, email: 'rpc@example.com' });
      expect(byEmail.enrolled).to.equal(true);
      const cancelled = await caller(key).sequences.unenroll({ id: sequenceId, contactIds: [ids[1], ids[0]] });
      expect(cancelled).to.deep.equal({ cancelled: 2, contactIds: [ids[1], ids[0]] });
      expect(await storedRuns({ sequenceId, status: 'cancelled' })).to.have.length(2);
    });

    it('maps the sequence errors to NOT_FOUND and CONFLICT', async () => {
      const { key, accountId } = await setup();
      const missing = await trpcRejection(
        caller(key).sequences.trigger({ id: randomUUID(), contact: { email: 'rpc@example.com' } }),
      );
      expect(missing.code).to.equal('NOT_FOUND');
      expect(missing.cause).to.be.instanceOf(NotFoundError);
      expect(missing.message).to.equal('Sequence not found');

      const draft = await buildSequence(accountId, 'draft');
      const inactive = await trpcRejection(
        caller(key).sequences.trigger({ id: draft.id, contact: { email: 'rpc@example.com' } }),
      );
      expect(inactive.code).to.equal('CONFLICT');
      expect(inactive.cause).to.be.instanceOf(ConflictError);
      expect(inactive.message).to.equal('Sequence is not active');
      expect(await countRows('contacts')).to.equal(0);
    });
  });
});
