import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { ConflictError, NotFoundError } from '../../src/errors/app-errors';
import { execute } from '../../src/db/sql/statements';
import type { SequenceStatus } from '../../src/schemas/statuses';
import { batchUpsertContacts } from '../../src/services/contacts/contact-operations';
import { setSequenceStatus } from '../../src/services/sequences/sequence-admin';
import { api, caller, testApp } from '../support/app';
import { captureQueries, testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { countRows, storedEnrollments, storedRuns } from '../support/sequence-rows';
import { trpcRejection } from '../support/trpc';

// The Sequences API over REST (docs/api.md "Sequences"; docs/decisions.md "Account run limit", "Runs", "Sequence
// errors on every sequence operation", "Batch and bulk", "Trigger and enroll-by-email").

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOT_ACTIVE: SequenceStatus[] = ['draft', 'paused', 'archived'];

// An active sequence of a fresh account, and the account's key (a runner key where the test
// moves runs as the sequence runner does).
async function setup(options: Parameters<typeof buildTenant>[0] = {}) {
  const tenant = await buildTenant(options);
  const sequence = await buildSequence(tenant.accountId, 'active');
  return { ...tenant, sequenceId: sequence.id };
}

// Ids that name no sequence of the account: unknown, malformed, and another account's.
async function foreignSequenceIds() {
  const other = await buildTenant();
  const theirs = await buildSequence(other.accountId, 'active');
  return { unknown: randomUUID(), malformed: 'not-a-uuid', 'another account\'s': theirs.id };
}

function trigger(key: string, sequenceId: string, contact: Record<string, unknown>) {
  return api(key).post(`/sequences/${sequenceId}/trigger`).send({ contact });
}

function enroll(key: string, sequenceId: string, contactIds: unknown) {
  return api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds });
}

function unenroll(key: string, sequenceId: string, contactIds: unknown) {
  return api(key).post(`/sequences/${sequenceId}/unenroll`).send({ contactIds });
}

function status(key: string, sequenceId: string, contactId: string) {
  return api(key).get(`/sequences/${sequenceId}/enrollments/${contactId}`);
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

describe('Sequences API (REST)', () => {
  describe('POST /sequences/:id/trigger', () => {
    it('creates the contact and a pending run: 202 { enrolled: true, contactId, runId }', async () => {
      const { key, accountId, sequenceId } = await setup();
      const before = Date.now();
      const res = await trigger(key, sequenceId, { email: 'Ada@Example.com', firstName: 'Ada', tags: ['vip'] });
      const after = Date.now();

      expect(res.status).to.equal(202);
      expect(res.body).to.have.all.keys('enrolled', 'contactId', 'runId');
      expect(res.body.enrolled).to.equal(true);
      expect(res.body.contactId).to.match(UUID);
      expect(res.body.runId).to.match(UUID);

      const contact = await api(key).get(`/contacts/${res.body.contactId}`);
      expect(contact.status).to.equal(200);
      expect(contact.body.contact).to.include({ email: 'Ada@Example.com', firstName: 'Ada' });
      expect(contact.body.contact.tags).to.deep.equal(['vip']);

      const runs = await storedRuns({ accountId });
      expect(runs).to.have.length(1);
      expect(runs[0]).to.include({
        id: res.body.runId,
        sequenceId,
        contactId: res.body.contactId,
        status: 'pending',
        completedAt: null,
      });
      expect(runs[0].startedAt).to.equal(runs[0].createdAt);
      expectWithin(runs[0].createdAt, before, after);

      const enrollment = await status(key, sequenceId, res.body.contactId);
      expect(enrollment.status).to.equal(200);
      expect(enrollment.body).to.deep.equal({
        enrolled: true,
        run: {
          id: res.body.runId,
          status: 'pending',
          startedAt: runs[0].createdAt,
          completedAt: null,
          createdAt: runs[0].createdAt,
        },
      });
    });

    it('enrolls an existing contact found by email case-insensitively, keeping the email as first given', async () => {
      const { key, accountId, sequenceId } = await setup();
      const existing = await buildContact(accountId, { email: 'Grace@Example.com' });
      const res = await trigger(key, sequenceId, { email: 'grace@EXAMPLE.com' });

      expect(res.status).to.equal(202);
      expect(res.body).to.include({ enrolled: true, contactId: existing.id });
      expect(await countRows('contacts', accountId)).to.equal(1);
      const contact = await api(key).get(`/contacts/${existing.id}`);
      expect(contact.body.contact.email).to.equal('Grace@Example.com');
    });

    it('accepts a whole contact object read back from the API, ignoring its read-only fields', async () => {
      const { key, accountId, sequenceId } = await setup();
      const existing = await buildContact(accountId, { email: 'whole@example.com', firstName: 'Old' });
      const { body } = await api(key).get(`/contacts/${existing.id}`);

      const res = await trigger(key, sequenceId.toUpperCase(), { ...body.contact, id: randomUUID(), firstName: 'New' });

      expect(res.status).to.equal(202);
      expect(res.body).to.include({ enrolled: true, contactId: existing.id });
      const after = await api(key).get(`/contacts/${existing.id}`);
      expect(after.body.contact).to.include({ firstName: 'New', createdAt: body.contact.createdAt });
      expect(await countRows('contacts', accountId)).to.equal(1);
      expect((await storedRuns({ contactId: existing.id }))[0].sequenceId).to.equal(sequenceId);
    });

    it('rejects an upsert whose merge would break the contact limits with 400, writing nothing', async () => {
      const { key, accountId, sequenceId } = await setup();
      const full = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
      const existing = await buildContact(accountId, { email: 'full@example.com', firstName: 'Kept', customFields: full });

      const res = await trigger(key, sequenceId, { email: 'full@example.com', firstName: 'Changed', customFields: { extra: 1 } });

      expect(res.status).to.equal(400);
      expect(res.body.error).to.be.a('string').that.is.not.empty;
      const { body } = await api(key).get(`/contacts/${existing.id}`);
      expect(body.contact.firstName).to.equal('Kept');
      expect(Object.keys(body.contact.customFields)).to.have.length(100);
      expect(await countRows('sequence_runs')).to.equal(0);
    });

    it('answers 202 active_run_exists for a contact already in the sequence, and still applies the upsert merge rules', async () => {
      const { key, accountId, sequenceId } = await setup();
      const existing = await buildContact(accountId, {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
        phone: '+441111',
        tags: ['vip'],
        customFields: { plan: 'pro', address: { city: 'Leeds' } },
      });
      const first = await trigger(key, sequenceId, { email: 'ada@example.com' });
      expect(first.body.enrolled).to.equal(true);

      const res = await trigger(key, sequenceId, {
        email: 'ada@example.com',
        firstName: 'Augusta',
        lastName: null,
        tags: [],
        customFields: { address: { zip: 'LS1' } },
        emailSubscriptionStatus: 'unsubscribed',
      });

      expect(res.status).to.equal(202);
      expect(res.body).to.deep.equal({ enrolled: false, reason: 'active_run_exists', contactId: existing.id });
      const { body } = await api(key).get(`/contacts/${existing.id}`);
      expect(body.contact).to.include({
        firstName: 'Augusta',
        lastName: 'Lovelace',
        phone: '+441111',
        emailSubscriptionStatus: 'unsubscribed',
        whatsappSubscriptionStatus: 'subscribed',
      });
      expect(body.contact.tags).to.deep.equal(['vip']);
      expect(body.contact.customFields).to.deep.equal({ plan: 'pro', address: { city: 'Leeds', zip: 'LS1' } });
      const runs = await storedRuns({ accountId });
      expect(runs.map((run) => run.id)).to.deep.equal([first.body.runId]);
    });

    it('answers 202 sequence_limit_reached when the account has maxActiveRuns active runs, and still upserts the contact', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      const first = await trigger(key, sequenceId, { email: 'first@example.com' });
      expect(first.body.enrolled).to.equal(true);

      const res = await trigger(key, sequenceId, { email: 'second@example.com', firstName: 'Second' });

      expect(res.status).to.equal(202);
      expect(res.body).to.have.all.keys('enrolled', 'reason', 'message', 'contactId');
      expect(res.body).to.include({ enrolled: false, reason: 'sequence_limit_reached' });
      expect(res.body.message).to.equal('The account has reached its limit of active runs (1)');
      const contact = await api(key).get(`/contacts/${res.body.contactId}`);
      expect(contact.status).to.equal(200);
      expect(contact.body.contact).to.include({ email: 'second@example.com', firstName: 'Second' });
      expect(await storedRuns({ accountId })).to.have.length(1);
      expect((await status(key, sequenceId, res.body.contactId)).body).to.deep.equal({ enrolled: false, run: null });
    });

    it('applies the merge rules to an existing contact when the limit is reached', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      await trigger(key, sequenceId, { email: 'first@example.com' });
      const existing = await buildContact(accountId, { email: 'old@example.com', firstName: 'Old', tags: ['a'] });

      const res = await trigger(key, sequenceId, { email: 'old@example.com', firstName: 'New', tags: ['b'] });

      expect(res.body).to.include({ enrolled: false, reason: 'sequence_limit_reached', contactId: existing.id });
      const { body } = await api(key).get(`/contacts/${existing.id}`);
      expect(body.contact.firstName).to.equal('New');
      expect(body.contact.tags).to.deep.equal(['b']);
    });

    it('counts the active runs of every sequence of the account against the limit', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      const second = await buildSequence(accountId, 'active');
      expect((await trigger(key, sequenceId, { email: 'a@example.com' })).body.enrolled).to.equal(true);

      const res = await trigger(key, second.id, { email: 'b@example.com' });

      expect(res.body.reason).to.equal('sequence_limit_reached');
      expect(await storedRuns({ sequenceId: second.id })).to.deep.equal([]);
    });

    it('does not count finished runs against the limit', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      const first = await trigger(key, sequenceId, { email: 'a@example.com' });
      await unenroll(key, sequenceId, [first.body.contactId]);

      const res = await trigger(key, sequenceId, { email: 'b@example.com' });

      expect(res.status).to.equal(202);
      expect(res.body.enrolled).to.equal(true);
      expect((await storedRuns({ accountId })).map((run) => run.status)).to.have.members(['cancelled', 'pending']);
    });

    it('does not let another account\'s runs count against the limit', async () => {
      const { key, sequenceId } = await setup({ maxActiveRuns: 1 });
      const other = await setup();
      await trigger(other.key, other.sequenceId, { email: 'x@example.com' });
      await trigger(other.key, other.sequenceId, { email: 'y@example.com' });

      const res = await trigger(key, sequenceId, { email: 'a@example.com' });
      expect(res.body.enrolled).to.equal(true);
    });

    it('answers 404 Sequence not found for an unknown, malformed or other account\'s sequence, writing nothing', async () => {
      const { key, accountId } = await setup();
      for (const [kind, id] of Object.entries(await foreignSequenceIds())) {
        const res = await trigger(key, id, { email: 'nobody@example.com' });
        expect(res.status, kind).to.equal(404);
        expect(res.body, kind).to.deep.include({ error: 'Sequence not found' });
      }
      expect(await countRows('contacts')).to.equal(0);
      expect(await countRows('sequence_runs')).to.equal(0);
      expect(await countRows('contacts', accountId)).to.equal(0);
    });

    it('answers 409 Sequence is not active for a draft, paused or archived sequence, writing nothing', async () => {
      const { key, accountId } = await setup();
      const existing = await buildContact(accountId, { email: 'kept@example.com', firstName: 'Kept' });
      for (const sequenceStatus of NOT_ACTIVE) {
        const sequence = await buildSequence(accountId, sequenceStatus);
        for (const email of ['new@example.com', 'kept@example.com']) {
          const res = await trigger(key, sequence.id, { email, firstName: 'Changed' });
          expect(res.status, sequenceStatus).to.equal(409);
          expect(res.body, sequenceStatus).to.deep.include({ error: 'Sequence is not active' });
        }
      }
      expect(await countRows('contacts')).to.equal(1);
      expect(await countRows('sequence_runs')).to.equal(0);
      const { body } = await api(key).get(`/contacts/${existing.id}`);
      expect(body.contact.firstName).to.equal('Kept');
    });

    it('rejects a missing contact, a missing or invalid email and wrongly typed fields with 400, writing nothing', async () => {
      const { key, sequenceId } = await setup();
      const bodies: Array<[string, unknown]> = [
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
      for (const [name, body] of bodies) {
        const res = await api(key).post(`/sequences/${sequenceId}/trigger`).send(body as object);
        expect(res.status, name).to.equal(400);
        expect(res.body.error, name).to.be.a('string').that.is.not.empty;
        expect(res.body.details, name).to.be.an('array').that.is.not.empty;
      }
      const invalid = await api(key).post(`/sequences/${sequenceId}/trigger`).send({ contact: { email: 'nope' } });
      expect(invalid.body.details.map((d: { path: string }) => d.path)).to.include('contact.email');
      expect(await countRows('contacts')).to.equal(0);
      expect(await countRows('sequence_runs')).to.equal(0);
    });
  });

  describe('POST /sequences/:id/enroll-by-email', () => {
    function enrollByEmail(key: string, sequenceId: string, body: Record<string, unknown>) {
      return api(key).post(`/sequences/${sequenceId}/enroll-by-email`).send(body);
    }

    it('answers 201 { enrolled: true, contactId, runId } with the fields at the top level, and stores both', async () => {
      const { key, accountId, sequenceId } = await setup();
      const res = await enrollByEmail(key, sequenceId, {
        email: 'lin@example.com',
        firstName: 'Lin',
        phone: '+4470000',
        tags: ['trial'],
        customFields: { source: 'shop' },
      });

      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys('enrolled', 'contactId', 'runId');
      expect(res.body.enrolled).to.equal(true);
      const { body } = await api(key).get(`/contacts/${res.body.contactId}`);
      expect(body.contact).to.include({ email: 'lin@example.com', firstName: 'Lin', phone: '+4470000' });
      expect(body.contact.tags).to.deep.equal(['trial']);
      expect(body.contact.customFields).to.deep.equal({ source: 'shop' });
      const runs = await storedRuns({ accountId });
      expect(runs).to.have.length(1);
      expect(runs[0]).to.include({ id: res.body.runId, contactId: res.body.contactId, status: 'pending', completedAt: null });
      expect(runs[0].startedAt).to.equal(runs[0].createdAt);
    });

    it('enrolls in the sequence of the path even when the body carries an id (a contact sent back whole)', async () => {
      const { key, accountId, sequenceId } = await setup();
      const other = await buildSequence(accountId, 'active');
      const existing = await buildContact(accountId, { email: 'back@example.com' });
      const { body } = await api(key).get(`/contacts/${existing.id}`);

      const res = await enrollByEmail(key, sequenceId, { ...body.contact, id: other.id });

      expect(res.status).to.equal(201);
      expect(res.body).to.include({ enrolled: true, contactId: existing.id });
      const runs = await storedRuns({ contactId: existing.id });
      expect(runs.map((run) => run.sequenceId)).to.deep.equal([sequenceId]);
    });

    it('answers 200 active_run_exists when the contact is already enrolled, and still upserts it', async () => {
      const { key, accountId, sequenceId } = await setup();
      const first = await enrollByEmail(key, sequenceId, { email: 'lin@example.com', customFields: { a: { b: 1 } } });
      const res = await enrollByEmail(key, sequenceId, { email: 'LIN@example.com', lastName: 'Zhao', customFields: { a: { c: 2 } } });

      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ enrolled: false, reason: 'active_run_exists', contactId: first.body.contactId });
      const { body } = await api(key).get(`/contacts/${first.body.contactId}`);
      expect(body.contact).to.include({ email: 'lin@example.com', lastName: 'Zhao' });
      expect(body.contact.customFields).to.deep.equal({ a: { b: 1, c: 2 } });
      expect(await storedRuns({ accountId })).to.have.length(1);
    });

    it('answers 200 sequence_limit_reached when the account is at its limit, and still upserts the contact', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      await enrollByEmail(key, sequenceId, { email: 'one@example.com' });
      const res = await enrollByEmail(key, sequenceId, { email: 'two@example.com', firstName: 'Two' });

      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('enrolled', 'reason', 'message', 'contactId');
      expect(res.body).to.include({ enrolled: false, reason: 'sequence_limit_reached' });
      expect(res.body.message).to.be.a('string').that.is.not.empty;
      const { body } = await api(key).get(`/contacts/${res.body.contactId}`);
      expect(body.contact.firstName).to.equal('Two');
      expect(await storedRuns({ accountId })).to.have.length(1);
    });

    it('answers 404 Sequence not found for an unknown, malformed or other account\'s sequence, writing nothing', async () => {
      const { key } = await setup();
      for (const [kind, id] of Object.entries(await foreignSequenceIds())) {
        const res = await enrollByEmail(key, id, { email: 'nobody@example.com' });
        expect(res.status, kind).to.equal(404);
        expect(res.body, kind).to.deep.include({ error: 'Sequence not found' });
      }
      expect(await countRows('contacts')).to.equal(0);
      expect(await countRows('sequence_runs')).to.equal(0);
    });

    it('answers 409 Sequence is not active for a draft, paused or archived sequence, writing nothing', async () => {
      const { key, accountId } = await setup();
      for (const sequenceStatus of NOT_ACTIVE) {
        const sequence = await buildSequence(accountId, sequenceStatus);
        const res = await enrollByEmail(key, sequence.id, { email: 'nobody@example.com' });
        expect(res.status, sequenceStatus).to.equal(409);
        expect(res.body, sequenceStatus).to.deep.include({ error: 'Sequence is not active' });
      }
      expect(await countRows('contacts')).to.equal(0);
      expect(await countRows('sequence_runs')).to.equal(0);
    });

    it('rejects a contact wrapper, a missing or invalid email with 400, writing nothing', async () => {
      const { key, sequenceId } = await setup();
      for (const body of [{}, { contact: { email: 'a@example.com' } }, { email: 'bad' }, { email: 'a@example.com', tags: 'x' }]) {
        const res = await enrollByEmail(key, sequenceId, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error).to.be.a('string').that.is.not.empty;
      }
      expect(await countRows('contacts')).to.equal(0);
    });
  });

  describe('POST /sequences/:id/enroll', () => {
    it('answers 201 with the enrollment record and summary, starts the runs and stores the record', async () => {
      const { key, accountId, sequenceId } = await setup();
      const ids = await contactIds(accountId, 3);
      const before = Date.now();
      const res = await enroll(key, sequenceId, ids);
      const after = Date.now();

      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys('enrollment', 'summary');
      expect(res.body.enrollment).to.have.all.keys(
        'id',
        'sequenceId',
        'status',
        'totalContacts',
        'successfulEnrollments',
        'failedEnrollments',
        'skippedDuplicates',
      );
      expect(res.body.enrollment.id).to.match(UUID);
      expect(res.body.enrollment).to.include({
        sequenceId,
        status: 'completed',
        totalContacts: 3,
        successfulEnrollments: 3,
        failedEnrollments: 0,
        skippedDuplicates: 0,
      });
      expect(res.body.summary).to.deep.equal({ processed: 3, successful: 3, failed: 0, skipped: 0 });

      const runs = await storedRuns({ sequenceId });
      expect(runs.map((run) => run.contactId)).to.have.members(ids);
      for (const run of runs) {
        expect(run).to.include({ accountId, status: 'pending', completedAt: null });
        expect(run.startedAt).to.equal(run.createdAt);
        expectWithin(run.createdAt, before, after);
      }
      expect(await storedEnrollments({ sequenceId })).to.deep.equal([{ ...res.body.enrollment, accountId }]);
    });

    it('counts repeated ids once, unknown and other-account ids as failed, contacts with an active run as skipped', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [fresh1, fresh2, enrolled] = await contactIds(accountId, 3);
      const before = await trigger(key, sequenceId, { email: (await api(key).get(`/contacts/${enrolled}`)).body.contact.email });
      expect(before.body).to.include({ enrolled: true, contactId: enrolled });
      const other = await buildTenant();
      const theirs = (await buildContact(other.accountId)).id;
      const unknown = randomUUID();

      const res = await enroll(key, sequenceId, [fresh1, fresh2, fresh1, enrolled, theirs, unknown, fresh2.toUpperCase()]);

      expect(res.status).to.equal(201);
      expect(res.body.summary).to.deep.equal({ processed: 5, successful: 2, failed: 2, skipped: 1 });
      expect(res.body.enrollment).to.include({
        totalContacts: 5,
        successfulEnrollments: 2,
        failedEnrollments: 2,
        skippedDuplicates: 1,
        status: 'completed',
      });
      const runs = await storedRuns({ sequenceId });
      expect(runs.map((run) => run.contactId)).to.have.members([fresh1, fresh2, enrolled]);
      expect(runs.find((run) => run.contactId === enrolled)?.id).to.equal(before.body.runId);
      expect(await storedRuns({ contactId: theirs })).to.deep.equal([]);
      const [stored] = await storedEnrollments({ sequenceId });
      expect(stored).to.deep.equal({ ...res.body.enrollment, accountId });
    });

    it('enrolls again a contact whose earlier run is finished', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [id] = await contactIds(accountId, 1);
      await enroll(key, sequenceId, [id]);
      await unenroll(key, sequenceId, [id]);

      const res = await enroll(key, sequenceId, [id]);

      expect(res.body.summary).to.deep.equal({ processed: 1, successful: 1, failed: 0, skipped: 0 });
      expect((await storedRuns({ contactId: id })).map((run) => run.status)).to.have.members(['cancelled', 'pending']);
    });

    it('counts the contacts beyond the account\'s active-run limit as failed', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 3 });
      await trigger(key, sequenceId, { email: 'already@example.com' });
      const ids = await contactIds(accountId, 4);

      const res = await enroll(key, sequenceId, ids);

      expect(res.status).to.equal(201);
      expect(res.body.summary).to.deep.equal({ processed: 4, successful: 2, failed: 2, skipped: 0 });
      expect(res.body.enrollment).to.include({ successfulEnrollments: 2, failedEnrollments: 2, skippedDuplicates: 0 });
      expect(await storedRuns({ accountId, status: 'pending' })).to.have.length(3);
    });

    it('answers 201 with everything failed when the account is already at its limit', async () => {
      const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
      await trigger(key, sequenceId, { email: 'already@example.com' });
      const ids = await contactIds(accountId, 2);

      const res = await enroll(key, sequenceId, ids);

      expect(res.status).to.equal(201);
      expect(res.body.summary).to.deep.equal({ processed: 2, successful: 0, failed: 2, skipped: 0 });
      expect(await storedRuns({ accountId })).to.have.length(1);
      expect(await storedEnrollments({ sequenceId })).to.have.length(1);
    });

    it('rejects no ids, 501 ids, a malformed UUID, a non-array and a missing list with 400, writing nothing', async () => {
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
      for (const [name, ids] of cases) {
        const res = await enroll(key, sequenceId, ids);
        expect(res.status, name).to.equal(400);
        expect(res.body.error, name).to.be.a('string').that.is.not.empty;
      }
      expect(await countRows('sequence_runs')).to.equal(0);
      expect(await countRows('enrollments')).to.equal(0);
    });

    it('accepts exactly 500 ids', async () => {
      const { key, sequenceId } = await setup();
      const res = await enroll(key, sequenceId, Array.from({ length: 500 }, () => randomUUID()));
      expect(res.status).to.equal(201);
      expect(res.body.summary).to.deep.equal({ processed: 500, successful: 0, failed: 500, skipped: 0 });
    });

    it('answers 404 Sequence not found and 409 Sequence is not active, writing nothing', async () => {
      const { key, accountId } = await setup();
      const ids = await contactIds(accountId, 2);
      for (const [kind, id] of Object.entries(await foreignSequenceIds())) {
        const res = await enroll(key, id, ids);
        expect(res.status, kind).to.equal(404);
        expect(res.body, kind).to.deep.include({ error: 'Sequence not found' });
      }
      for (const sequenceStatus of NOT_ACTIVE) {
        const sequence = await buildSequence(accountId, sequenceStatus);
        const res = await enroll(key, sequence.id, ids);
        expect(res.status, sequenceStatus).to.equal(409);
        expect(res.body, sequenceStatus).to.deep.include({ error: 'Sequence is not active' });
      }
      expect(await countRows('sequence_runs')).to.equal(0);
      expect(await countRows('enrollments')).to.equal(0);
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
        expect(five.result.body.summary, label).to.deep.equal({ processed: 5, successful: 5, failed: 0, skipped: 0 });
        expect(fiveHundred.result.body.summary, label).to.deep.equal({
          processed: 500,
          successful: 500,
          failed: 0,
          skipped: 0,
        });
        expect(fiveHundred.queries.length, label).to.be.at.most(five.queries.length);
        expect(fiveHundred.queries.length, label).to.be.at.most(20);
        expect(await storedRuns({ sequenceId: large.id }), label).to.have.length(500);
      }
    });
  });

  describe('POST /sequences/:id/unenroll', () => {
    it('cancels active runs and lists only the cancelled contacts, in request order', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [c1, c2, c3, notEnrolled] = await contactIds(accountId, 4);
      await enroll(key, sequenceId, [c1, c2, c3]);
      const before = Date.now();
      const res = await unenroll(key, sequenceId, [c3, randomUUID(), notEnrolled, c1, c3]);
      const after = Date.now();

      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ cancelled: 2, contactIds: [c3, c1] });
      for (const id of [c1, c3]) {
        const [run] = await storedRuns({ contactId: id });
        expect(run.status).to.equal('cancelled');
        expectWithin(run.completedAt, before, after);
      }
      const [untouched] = await storedRuns({ contactId: c2 });
      expect(untouched).to.include({ status: 'pending', completedAt: null });
      expect(await storedRuns({ contactId: notEnrolled })).to.deep.equal([]);
    });

    it('cancels running and paused runs as well as pending ones', async () => {
      const { key, accountId, sequenceId } = await setup({ kind: 'runner' });
      const [pending, running, paused] = await contactIds(accountId, 3);
      await enroll(key, sequenceId, [pending, running, paused]);
      const runId = async (contactId: string) => (await storedRuns({ contactId }))[0].id;
      await caller(key).runs.transition({ runId: await runId(running), status: 'running' });
      await caller(key).runs.transition({ runId: await runId(paused), status: 'running' });
      await caller(key).runs.transition({ runId: await runId(paused), status: 'paused' });

      const res = await unenroll(key, sequenceId, [paused, running, pending]);

      expect(res.body).to.deep.equal({ cancelled: 3, contactIds: [paused, running, pending] });
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

      const res = await unenroll(key, sequenceId, [completed, failed, cancelled]);

      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ cancelled: 0, contactIds: [] });
      expect(await storedRuns({ sequenceId })).to.deep.equal(stored);
    });

    it('leaves the contact\'s runs in other sequences alone', async () => {
      const { key, accountId, sequenceId } = await setup();
      const other = await buildSequence(accountId, 'active');
      const [id] = await contactIds(accountId, 1);
      await enroll(key, sequenceId, [id]);
      await enroll(key, other.id, [id]);

      const res = await unenroll(key, sequenceId, [id]);

      expect(res.body).to.deep.equal({ cancelled: 1, contactIds: [id] });
      expect((await storedRuns({ sequenceId: other.id }))[0].status).to.equal('pending');
    });

    it('works on a sequence that is no longer active', async () => {
      const { key, accountId, sequenceId } = await setup();
      const ids = await contactIds(accountId, 3);
      await enroll(key, sequenceId, ids);
      for (const [index, sequenceStatus] of NOT_ACTIVE.entries()) {
        await setSequenceStatus(testDb(), { id: sequenceId, status: sequenceStatus });
        const res = await unenroll(key, sequenceId, [ids[index]]);
        expect(res.status, sequenceStatus).to.equal(200);
        expect(res.body, sequenceStatus).to.deep.equal({ cancelled: 1, contactIds: [ids[index]] });
        expect((await storedRuns({ contactId: ids[index] }))[0].status).to.equal('cancelled');
      }
    });

    it('answers 404 Sequence not found for an unknown, malformed or other account\'s sequence', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [id] = await contactIds(accountId, 1);
      await enroll(key, sequenceId, [id]);
      for (const [kind, foreign] of Object.entries(await foreignSequenceIds())) {
        const res = await unenroll(key, foreign, [id]);
        expect(res.status, kind).to.equal(404);
        expect(res.body, kind).to.deep.include({ error: 'Sequence not found' });
      }
      expect((await storedRuns({ contactId: id }))[0].status).to.equal('pending');
    });

    it('rejects no ids, 501 ids, a malformed UUID and a non-array with 400, cancelling nothing', async () => {
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
      for (const [name, ids] of cases) {
        const res = await unenroll(key, sequenceId, ids);
        expect(res.status, name).to.equal(400);
        expect(res.body.error, name).to.be.a('string').that.is.not.empty;
      }
      expect((await storedRuns({ contactId: id }))[0].status).to.equal('pending');
    });

    it('lets the contact be triggered again: a new run, which enrollment status then shows', async () => {
      const { key, sequenceId } = await setup();
      const first = await trigger(key, sequenceId, { email: 'again@example.com' });
      await unenroll(key, sequenceId, [first.body.contactId]);

      const second = await trigger(key, sequenceId, { email: 'again@example.com' });

      expect(second.status).to.equal(202);
      expect(second.body).to.include({ enrolled: true, contactId: first.body.contactId });
      expect(second.body.runId).to.not.equal(first.body.runId);
      const runs = await storedRuns({ contactId: first.body.contactId });
      expect(runs.map((run) => [run.id, run.status])).to.deep.equal([
        [first.body.runId, 'cancelled'],
        [second.body.runId, 'pending'],
      ]);
      const res = await status(key, sequenceId, first.body.contactId);
      expect(res.body.enrolled).to.equal(true);
      expect(res.body.run).to.include({ id: second.body.runId, status: 'pending', completedAt: null });
    });

    it('is set-based: unenrolling 500 contacts costs no more SQL statements than unenrolling 5', async () => {
      const { key, accountId, sequenceId } = await setup();
      const ids = await manyContacts(accountId, 505);
      await enroll(key, sequenceId, ids.slice(0, 500));
      await enroll(key, sequenceId, ids.slice(500));

      const five = await captureQueries(() => unenroll(key, sequenceId, ids.slice(500)));
      const fiveHundred = await captureQueries(() => unenroll(key, sequenceId, ids.slice(0, 500)));

      expect(five.result.body.cancelled).to.equal(5);
      expect(fiveHundred.result.body.cancelled).to.equal(500);
      expect(fiveHundred.result.body.contactIds).to.deep.equal(ids.slice(0, 500));
      expect(fiveHundred.queries.length).to.be.at.most(five.queries.length);
    });
  });

  describe('GET /sequences/:id/enrollments/:contactId', () => {
    it('answers { enrolled: false, run: null } for a contact never enrolled', async () => {
      const { key, accountId, sequenceId } = await setup();
      const [id] = await contactIds(accountId, 1);
      const res = await status(key, sequenceId, id);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ enrolled: false, run: null });
    });

    it('answers enrolled with the run while the latest run is active', async () => {
      const { key, sequenceId } = await setup({ kind: 'runner' });
      const { body } = await trigger(key, sequenceId, { email: 'a@example.com' });
      await caller(key).runs.transition({ runId: body.runId, status: 'running' });

      const res = await status(key, sequenceId, body.contactId);

      expect(res.status).to.equal(200);
      expect(res.body.enrolled).to.equal(true);
      expect(res.body.run).to.have.all.keys('id', 'status', 'startedAt', 'completedAt', 'createdAt');
      expect(res.body.run.createdAt).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(res.body.run.startedAt).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const [stored] = await storedRuns({ contactId: body.contactId });
      expect(res.body.run).to.deep.equal({
        id: body.runId,
        status: 'running',
        startedAt: stored.startedAt,
        completedAt: null,
        createdAt: stored.createdAt,
      });
    });

    it('answers not enrolled with the run once it is cancelled by unenroll', async () => {
      const { key, sequenceId } = await setup();
      const { body } = await trigger(key, sequenceId, { email: 'a@example.com' });
      await unenroll(key, sequenceId, [body.contactId]);

      const res = await status(key, sequenceId, body.contactId);

      const [stored] = await storedRuns({ contactId: body.contactId });
      expect(res.body).to.deep.equal({
        enrolled: false,
        run: { id: body.runId, status: 'cancelled', startedAt: stored.startedAt, completedAt: stored.completedAt, createdAt: stored.createdAt },
      });
      expect(stored.completedAt).to.be.a('string');
    });

    it('answers not enrolled with the run once the runner completes it', async () => {
      const { key, sequenceId } = await setup({ kind: 'runner' });
      const { body } = await trigger(key, sequenceId, { email: 'a@example.com' });
      await caller(key).runs.transition({ runId: body.runId, status: 'running' });
      const { run } = await caller(key).runs.transition({ runId: body.runId, status: 'completed' });

      const res = await status(key, sequenceId, body.contactId);

      expect(res.body).to.deep.equal({ enrolled: false, run });
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

      const res = await status(key, sequenceId, id);

      expect(res.body).to.deep.equal({
        enrolled: false,
        run: {
          id: newest,
          status: 'failed',
          startedAt: '2026-03-01T10:00:00.002Z',
          completedAt: '2026-03-01T10:05:00.000Z',
          createdAt: '2026-03-01T10:00:00.002Z',
        },
      });
    });

    it('works on a sequence that is no longer active', async () => {
      const { key, sequenceId } = await setup();
      const { body } = await trigger(key, sequenceId, { email: 'a@example.com' });
      await setSequenceStatus(testDb(), { id: sequenceId, status: 'archived' });

      const res = await status(key, sequenceId, body.contactId);

      expect(res.status).to.equal(200);
      expect(res.body.enrolled).to.equal(true);
      expect(res.body.run.id).to.equal(body.runId);
    });

    it('answers 404 Sequence not found for an unknown, malformed or other account\'s sequence', async () => {
      const { key, accountId } = await setup();
      const [id] = await contactIds(accountId, 1);
      for (const [kind, foreign] of Object.entries(await foreignSequenceIds())) {
        const res = await status(key, foreign, id);
        expect(res.status, kind).to.equal(404);
        expect(res.body, kind).to.deep.include({ error: 'Sequence not found' });
      }
    });

    it('answers 404 Contact not found for an unknown, malformed or other account\'s contact', async () => {
      const { key, sequenceId } = await setup();
      const other = await setup();
      const theirs = await trigger(other.key, other.sequenceId, { email: 'theirs@example.com' });
      for (const [kind, id] of Object.entries({ unknown: randomUUID(), malformed: 'nope', 'another account\'s': theirs.body.contactId })) {
        const res = await status(key, sequenceId, id);
        expect(res.status, kind).to.equal(404);
        expect(res.body, kind).to.deep.include({ error: 'Contact not found' });
      }
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

      const res = await api(key).delete(`/contacts/${doomed}`);

      expect(res.status).to.equal(204);
      expect(await storedRuns({ contactId: doomed })).to.deep.equal([]);
      expect(await storedRuns({ contactId: kept })).to.have.length(1);
      const after = await status(key, sequenceId, doomed);
      expect(after.status).to.equal(404);
      expect(after.body).to.deep.include({ error: 'Contact not found' });
    });
  });

  describe('account isolation', () => {
    it('hides account A\'s sequence from account B on every operation', async () => {
      const a = await setup();
      const b = await setup();
      const { body: enrolled } = await trigger(a.key, a.sequenceId, { email: 'a@example.com' });
      const [aRun] = await storedRuns({ accountId: a.accountId });

      const responses = {
        trigger: await trigger(b.key, a.sequenceId, { email: 'b@example.com' }),
        enrollByEmail: await api(b.key).post(`/sequences/${a.sequenceId}/enroll-by-email`).send({ email: 'b@example.com' }),
        enroll: await enroll(b.key, a.sequenceId, [enrolled.contactId]),
        unenroll: await unenroll(b.key, a.sequenceId, [enrolled.contactId]),
        status: await status(b.key, a.sequenceId, enrolled.contactId),
      };

      for (const [operation, res] of Object.entries(responses)) {
        expect(res.status, operation).to.equal(404);
        expect(res.body, operation).to.deep.include({ error: 'Sequence not found' });
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

      const res = await enroll(b.key, b.sequenceId, [...aContacts, bContact]);

      expect(res.status).to.equal(201);
      expect(res.body.summary).to.deep.equal({ processed: 3, successful: 1, failed: 2, skipped: 0 });
      expect((await storedRuns({ sequenceId: b.sequenceId })).map((run) => run.contactId)).to.deep.equal([bContact]);
      expect(await countRows('sequence_runs', a.accountId)).to.equal(0);
    });

    it('does not cancel account A\'s runs through account B\'s sequence', async () => {
      const a = await setup();
      const b = await setup();
      const { body } = await trigger(a.key, a.sequenceId, { email: 'a@example.com' });

      const res = await unenroll(b.key, b.sequenceId, [body.contactId]);

      expect(res.body).to.deep.equal({ cancelled: 0, contactIds: [] });
      expect((await storedRuns({ contactId: body.contactId }))[0].status).to.equal('pending');
    });

    it('keeps contacts of the same email apart per account', async () => {
      const a = await setup();
      const b = await setup();
      const inA = await trigger(a.key, a.sequenceId, { email: 'same@example.com', firstName: 'A' });
      const inB = await trigger(b.key, b.sequenceId, { email: 'same@example.com', firstName: 'B' });

      expect(inB.body.enrolled).to.equal(true);
      expect(inB.body.contactId).to.not.equal(inA.body.contactId);
      expect((await api(a.key).get(`/contacts/${inA.body.contactId}`)).body.contact.firstName).to.equal('A');
    });
  });

  describe('tRPC', () => {
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
        run: { id: outcome.runId, status: 'pending', startedAt: stored.startedAt, completedAt: null, createdAt: stored.createdAt },
      });
    });

    it('enrolls by ids, by email and unenrolls through createCaller', async () => {
      const { key, accountId, sequenceId } = await setup();
      const ids = await contactIds(accountId, 2);
      const enrolled = await caller(key).sequences.enroll({ id: sequenceId, contactIds: ids });
      expect(enrolled.summary).to.deep.equal({ processed: 2, successful: 2, failed: 0, skipped: 0 });
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

    it('triggers over HTTP at POST /trpc/sequences.trigger', async () => {
      const { key, accountId, sequenceId } = await setup();
      const res = await request(testApp())
        .post('/trpc/sequences.trigger')
        .set('x-api-key', key)
        .send({ id: sequenceId, contact: { email: 'wire@example.com', firstName: 'Wire' } });

      expect(res.status).to.equal(200);
      const data = res.body.result.data;
      expect(data).to.have.all.keys('enrolled', 'contactId', 'runId');
      expect(data.enrolled).to.equal(true);
      const [stored] = await storedRuns({ accountId });
      expect(stored).to.include({ id: data.runId, contactId: data.contactId, status: 'pending' });

      const inactive = await buildSequence(accountId, 'paused');
      const conflict = await request(testApp())
        .post('/trpc/sequences.trigger')
        .set('x-api-key', key)
        .send({ id: inactive.id, contact: { email: 'wire2@example.com' } });
      expect(conflict.status).to.equal(409);
      expect(conflict.body.error).to.include({ message: 'Sequence is not active' });
      expect(conflict.body.error.data).to.include({ code: 'CONFLICT', httpStatus: 409 });
      expect(await countRows('contacts', accountId)).to.equal(1);
    });
  });
});
