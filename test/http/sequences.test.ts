import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { SequenceStatus } from '../../src/schemas/statuses';
import { api, caller, testApp } from '../support/app';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { countRows, storedEnrollments, storedRuns } from '../support/sequence-rows';

// The Sequences API over REST (docs/api.md "Sequences"): paths, statuses and bodies, and the
// status chosen at run time (201 or 200 on enroll-by-email). What each procedure does:
// test/procedures/sequences.test.ts.

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
          version: null,
          currentStepId: null,
          reason: null,
        },
      });
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
      expect(res.body.summary).to.deep.equal({ processed: 3, successful: 3, failed: 0, skipped: 0, failures: [] });

      const runs = await storedRuns({ sequenceId });
      expect(runs.map((run) => run.contactId)).to.have.members(ids);
      for (const run of runs) {
        expect(run).to.include({ accountId, status: 'pending', completedAt: null });
        expect(run.startedAt).to.equal(run.createdAt);
        expectWithin(run.createdAt, before, after);
      }
      expect(await storedEnrollments({ sequenceId })).to.deep.equal([{ ...res.body.enrollment, accountId }]);
    });

    it('answers 201 for 500 unknown ids naming each in summary.failures, in request order, with not_found', async () => {
      const { key, sequenceId } = await setup();
      const ids = Array.from({ length: 500 }, () => randomUUID());
      const res = await enroll(key, sequenceId, ids);
      expect(res.status).to.equal(201);
      expect(res.body.summary).to.include({ processed: 500, successful: 0, failed: 500, skipped: 0 });
      expect(res.body.summary.failures).to.deep.equal(ids.map((contactId) => ({ contactId, reason: 'not_found' })));
      expect(res.body.enrollment).to.include({ totalContacts: 500, failedEnrollments: 500 });
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
      expect(res.body.run).to.have.all.keys('id', 'status', 'startedAt', 'completedAt', 'createdAt', 'version', 'currentStepId', 'reason');
      expect(res.body.run.createdAt).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(res.body.run.startedAt).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const [stored] = await storedRuns({ contactId: body.contactId });
      expect(res.body.run).to.deep.equal({
        id: body.runId,
        status: 'running',
        startedAt: stored.startedAt,
        completedAt: null,
        createdAt: stored.createdAt,
        version: null,
        currentStepId: null,
        reason: null,
      });
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

  describe('tRPC', () => {
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
