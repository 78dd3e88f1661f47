import { expect } from 'chai';
import type { Response } from 'supertest';
import { batchUpsertContacts } from '../../src/services/contacts/contact-operations';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildSequence, buildTenant } from '../support/factories';
import { countRows, storedRuns } from '../support/sequence-rows';

// Parallel requests against one sequence (docs/decisions.md "Runs", "Account run limit"): the
// one-active-run rule and the account limit hold, and a clash is an answer, never a 500.
// On SQLite the transactions queue; MariaDB is where these bite.

async function setup(options: { maxActiveRuns?: number | null } = {}) {
  const tenant = await buildTenant(options);
  const sequence = await buildSequence(tenant.accountId, 'active');
  return { ...tenant, sequenceId: sequence.id };
}

async function manyContacts(accountId: string, count: number) {
  const emails = Array.from({ length: count }, (_, i) => `parallel-${String(i).padStart(4, '0')}@example.com`);
  for (let start = 0; start < count; start += 100) {
    await batchUpsertContacts(testDb(), { accountId, contacts: emails.slice(start, start + 100).map((email) => ({ email })) });
  }
  const rows = (await testDb().sequelize.query('SELECT id FROM contacts WHERE account_id = ?', {
    replacements: [accountId],
    type: 'SELECT',
  })) as Array<{ id: string }>;
  expect(rows).to.have.length(count);
  return rows.map((row) => row.id);
}

function expectNoServerErrors(responses: Response[]) {
  const failures = responses.filter((res) => res.status >= 500).map((res) => `${res.status} ${JSON.stringify(res.body)}`);
  expect(failures).to.deep.equal([]);
}

function activeRunsPerContact(runs: Array<{ contactId: string; status: string }>) {
  const counts = new Map<string, number>();
  for (const run of runs) {
    if (['pending', 'running', 'paused'].includes(run.status)) counts.set(run.contactId, (counts.get(run.contactId) ?? 0) + 1);
  }
  return counts;
}

describe('Sequences API under concurrency', function () {
  this.timeout(60_000);

  it('enrolls one new email once when 20 triggers for it arrive together', async () => {
    const { key, accountId, sequenceId } = await setup();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api(key)
          .post(`/sequences/${sequenceId}/trigger`)
          .send({ contact: { email: 'Rush@Example.com', customFields: { [`k${i}`]: i } } }),
      ),
    );

    expectNoServerErrors(responses);
    expect(responses.map((res) => res.status)).to.deep.equal(Array(20).fill(202));
    const enrolled = responses.filter((res) => res.body.enrolled === true);
    const existing = responses.filter((res) => res.body.reason === 'active_run_exists');
    expect(enrolled).to.have.length(1);
    expect(existing).to.have.length(19);
    const contactId = enrolled[0].body.contactId;
    expect(new Set(responses.map((res) => res.body.contactId))).to.deep.equal(new Set([contactId]));

    expect(await countRows('contacts', accountId)).to.equal(1);
    const runs = await storedRuns({ accountId });
    expect(runs).to.have.length(1);
    expect(runs[0]).to.include({ id: enrolled[0].body.runId, contactId, status: 'pending' });
    // Every upsert stood: the custom fields of all twenty merged.
    const { body } = await api(key).get(`/contacts/${contactId}`);
    expect(Object.keys(body.contact.customFields)).to.have.length(20);
  });

  it('gives each of 500 contacts exactly one run when 10 enrolls of the same ids arrive together', async () => {
    const { key, accountId, sequenceId } = await setup();
    const ids = await manyContacts(accountId, 500);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: ids })),
    );

    expectNoServerErrors(responses);
    expect(responses.map((res) => res.status)).to.deep.equal(Array(10).fill(201));
    const summaries = responses.map((res) => res.body.summary);
    for (const summary of summaries) {
      expect(summary.processed).to.equal(500);
      expect(summary.failed).to.equal(0);
      expect(summary.successful + summary.skipped).to.equal(500);
    }
    expect(summaries.reduce((sum, s) => sum + s.successful, 0)).to.equal(500);
    expect(summaries.reduce((sum, s) => sum + s.skipped, 0)).to.equal(4500);

    const runs = await storedRuns({ sequenceId });
    expect(runs).to.have.length(500);
    expect(new Set(runs.map((run) => run.contactId))).to.deep.equal(new Set(ids));
    expect(await countRows('enrollments', accountId)).to.equal(10);
  });

  it('holds the account limit of 5 when 20 triggers of different emails arrive together', async () => {
    const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 5 });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api(key).post(`/sequences/${sequenceId}/trigger`).send({ contact: { email: `limit-${i}@example.com` } }),
      ),
    );

    expectNoServerErrors(responses);
    expect(responses.map((res) => res.status)).to.deep.equal(Array(20).fill(202));
    const enrolled = responses.filter((res) => res.body.enrolled === true);
    const limited = responses.filter((res) => res.body.reason === 'sequence_limit_reached');
    expect(enrolled).to.have.length(5);
    expect(limited).to.have.length(15);

    const runs = await storedRuns({ accountId });
    expect(runs).to.have.length(5);
    expect(runs.every((run) => run.status === 'pending')).to.equal(true);
    expect(runs.map((run) => run.id)).to.have.members(enrolled.map((res) => res.body.runId));
    // The limit refuses the run, not the contact: all twenty stand.
    expect(await countRows('contacts', accountId)).to.equal(20);
  });

  it('answers active_run_exists, not sequence_limit_reached, to the losers of a race for one email at the limit', async () => {
    const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 1 });
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        api(key).post(`/sequences/${sequenceId}/trigger`).send({ contact: { email: 'only@example.com' } }),
      ),
    );

    expectNoServerErrors(responses);
    expect(responses.filter((res) => res.body.enrolled === true)).to.have.length(1);
    expect(responses.filter((res) => res.body.reason === 'active_run_exists')).to.have.length(9);
    expect(await storedRuns({ accountId })).to.have.length(1);
  });

  it('holds the account limit when parallel enrolls by ids and triggers compete for it', async () => {
    const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 30 });
    const ids = await manyContacts(accountId, 100);
    const responses = await Promise.all([
      ...[0, 25, 50, 75].map((start) =>
        api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: ids.slice(start, start + 25) }),
      ),
      ...Array.from({ length: 10 }, (_, i) =>
        api(key).post(`/sequences/${sequenceId}/trigger`).send({ contact: { email: `extra-${i}@example.com` } }),
      ),
    ]);

    expectNoServerErrors(responses);
    const viaEnroll = responses.slice(0, 4).reduce((sum, res) => sum + res.body.summary.successful, 0);
    const viaTrigger = responses.slice(4).filter((res) => res.body.enrolled === true).length;
    expect(viaEnroll + viaTrigger).to.equal(30);
    expect(await storedRuns({ accountId })).to.have.length(30);
  });

  it('leaves at most one active run per contact when triggers and unenrolls interleave, without a 500', async () => {
    const { key, accountId, sequenceId } = await setup();
    const emails = Array.from({ length: 8 }, (_, i) => `mix-${i}@example.com`);
    const first = await Promise.all(
      emails.map((email) => api(key).post(`/sequences/${sequenceId}/trigger`).send({ contact: { email } })),
    );
    const contactIds = first.map((res) => res.body.contactId as string);

    const triggerCalls: Array<Promise<Response>> = [];
    const unenrollCalls: Array<Promise<Response>> = [];
    for (let round = 0; round < 4; round += 1) {
      emails.forEach((email, i) => {
        triggerCalls.push(api(key).post(`/sequences/${sequenceId}/trigger`).send({ contact: { email } }));
        if (round % 2 === 0) {
          unenrollCalls.push(api(key).post(`/sequences/${sequenceId}/unenroll`).send({ contactIds: [contactIds[i]] }));
        }
      });
      // One unenroll of everyone, in reverse order, per round.
      unenrollCalls.push(api(key).post(`/sequences/${sequenceId}/unenroll`).send({ contactIds: [...contactIds].reverse() }));
    }
    const [triggers, unenrolls] = await Promise.all([Promise.all(triggerCalls), Promise.all(unenrollCalls)]);

    expectNoServerErrors([...triggers, ...unenrolls]);
    expect(triggers.every((res) => res.status === 202)).to.equal(true);
    expect(unenrolls.every((res) => res.status === 200)).to.equal(true);

    const runs = await storedRuns({ accountId });
    for (const [contactId, active] of activeRunsPerContact(runs)) expect(active, contactId).to.equal(1);
    // Every answer matches what was written: one run per enrolled:true, one cancelled run per
    // listed contact.
    const enrolledAnswers = [...first, ...triggers].filter((res) => res.body.enrolled === true).length;
    expect(runs).to.have.length(enrolledAnswers);
    const cancelledAnswers = unenrolls.reduce((sum, res) => sum + res.body.cancelled, 0);
    expect(runs.filter((run) => run.status === 'cancelled')).to.have.length(cancelledAnswers);
    for (const res of unenrolls) expect(res.body.contactIds).to.have.length(res.body.cancelled);
    for (const run of runs) {
      if (run.status === 'cancelled') expect(run.completedAt).to.be.a('string');
      else expect(run.completedAt).to.equal(null);
    }
  });

  it('never starts a run for a deleted contact when 50 deletes race two enrolls of the same ids', async () => {
    const { key, accountId, sequenceId } = await setup();
    const ids = await manyContacts(accountId, 50);
    const enroll = () => api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: ids });
    const [first, ...rest] = await Promise.all([
      enroll(),
      ...ids.map((id) => api(key).delete(`/contacts/${id}`)),
      enroll(),
    ]);
    const enrolls = [first, rest[rest.length - 1]];
    const deletes = rest.slice(0, -1);
    const responses = [...enrolls, ...deletes];

    expectNoServerErrors(responses);
    expect(responses.filter((res) => ![201, 204, 404].includes(res.status)).map((res) => `${res.status} ${res.text}`)).to.deep.equal([]);
    expect(enrolls.map((res) => res.status)).to.deep.equal([201, 201]);
    // Each contact is deleted once; a delete's 204 is the contact's end.
    expect(deletes.map((res) => res.status)).to.deep.equal(Array(50).fill(204));
    for (const { body } of enrolls) {
      expect(body.summary.processed).to.equal(50);
      expect(body.summary.successful + body.summary.failed + body.summary.skipped).to.equal(50);
    }

    expect(await countRows('contacts', accountId)).to.equal(0);
    const [{ n }] = (await testDb().sequelize.query(
      `SELECT COUNT(*) AS n FROM sequence_runs r LEFT JOIN contacts c ON c.id = r.contact_id
        WHERE r.account_id = ? AND c.id IS NULL`,
      { replacements: [accountId], type: 'SELECT' },
    )) as Array<{ n: number | string }>;
    expect(Number(n), 'runs whose contact is gone').to.equal(0);
    expect(await storedRuns({ accountId })).to.deep.equal([]);
  });

  it('holds an account limit of 20 under parallel triggers, overlapping batch upserts and enrolls by ids', async () => {
    const { key, accountId, sequenceId } = await setup({ maxActiveRuns: 20 });
    const ids = await manyContacts(accountId, 40);
    const email = (i: number) => `parallel-${String(i).padStart(4, '0')}@example.com`;
    const enrollBodies = [ids.slice(0, 20), ids.slice(10, 30), ids.slice(20, 40), [...ids].reverse()];
    const batchEmails = Array.from({ length: 25 }, (_, i) => email(25 + i));
    const batches = [batchEmails, [...batchEmails].reverse(), batchEmails.slice(10), batchEmails.slice(0, 15).reverse()];

    const [enrolls, triggers, upserts] = await Promise.all([
      Promise.all(enrollBodies.map((contactIds) => api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds }))),
      Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          api(key).post(`/sequences/${sequenceId}/trigger`).send({ contact: { email: email(30 + i), tags: [`t${i}`] } }),
        ),
      ),
      Promise.all(
        batches.map((emails, b) =>
          api(key)
            .post('/contacts/batch')
            .send({ contacts: emails.map((e) => ({ email: e, customFields: { [`batch${b}`]: true } })) }),
        ),
      ),
    ]);

    expectNoServerErrors([...enrolls, ...triggers, ...upserts]);
    expect(enrolls.map((res) => res.status)).to.deep.equal([201, 201, 201, 201]);
    expect(triggers.map((res) => res.status)).to.deep.equal(Array(15).fill(202));
    expect(upserts.map((res) => res.status)).to.deep.equal([201, 201, 201, 201]);

    const runs = await storedRuns({ accountId });
    const active = runs.filter((run) => ['pending', 'running', 'paused'].includes(run.status));
    // 45 distinct contacts asked for a run, so the limit is reached exactly, never passed.
    expect(active).to.have.length(20);
    expect(runs).to.have.length(20);
    for (const [contactId, count] of activeRunsPerContact(runs)) expect(count, contactId).to.equal(1);
    const answeredEnrolled =
      enrolls.reduce((sum, res) => sum + res.body.summary.successful, 0) + triggers.filter((res) => res.body.enrolled === true).length;
    expect(answeredEnrolled).to.equal(20);
    for (const res of triggers.filter((r) => r.body.enrolled === false)) {
      expect(res.body.reason).to.be.oneOf(['sequence_limit_reached', 'active_run_exists']);
    }
    // Every upsert stood, limit or not: 40 + 10 new contacts; one in all four batches and a
    // trigger carries all of their changes.
    expect(await countRows('contacts', accountId)).to.equal(50);
    const { body } = await api(key).get(`/contacts/by-email/${encodeURIComponent(email(35))}`);
    expect(body.contact.customFields).to.deep.equal({ batch0: true, batch1: true, batch2: true, batch3: true });
    expect(body.contact.tags).to.deep.equal(['t5']);
  });
});
