import { expect } from 'chai';
import type { Response } from 'supertest';
import { select } from '../../src/db/sql/statements';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';

// GET /api/v1/sequences/{id}/stats over REST (docs/analytics.md): statuses and bodies. What the
// figures count as runs move: test/services/analytics/sequence-stats.test.ts.

function expectError(res: Response, status: number, code: string, keys: string[] = ['error', 'code', 'requestId']) {
  expect(res.status, res.text).to.equal(status);
  expect(res.body).to.have.all.keys(...keys);
  expect(res.body).to.include({ code, requestId: res.headers['x-request-id'] });
}

async function sequenceWithRuns(key: string, accountId: string) {
  const res = await api(key)
    .post('/sequences')
    .send({ name: 'Stats', status: 'active', steps: [{ id: 'pause', type: 'wait', duration: 'P1D' }, { id: 'done', type: 'exit' }] });
  expect(res.status, res.text).to.equal(201);
  const id = res.body.sequence.id as string;
  const contacts = [await buildContact(accountId), await buildContact(accountId)];
  const enrolled = await api(key).post(`/sequences/${id}/enroll`).send({ contactIds: contacts.map((c) => c.id) });
  expect(enrolled.status, enrolled.text).to.be.oneOf([200, 201, 207]);
  return id;
}

describe('GET /sequences/{id}/stats', () => {
  it('answers the steps and 30 days of a sequence', async () => {
    const { key, accountId } = await buildTenant();
    const id = await sequenceWithRuns(key, accountId);
    const res = await api(key).get(`/sequences/${id}/stats`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.have.all.keys('stats');
    const { stats } = res.body;
    const today = new Date().toISOString().slice(0, 10);
    expect(stats.to).to.equal(today);
    expect(stats.days).to.have.length(30);
    expect(stats.days[29]).to.deep.equal({ date: today, enrollments: 2, completions: 0, exits: {}, messages: { sent: 0, delivered: 0, read: 0, failed: 0, bounced: 0, complained: 0 } });
    expect(stats.from).to.equal(stats.days[0].date);
    expect(stats.steps).to.deep.equal([
      { stepId: 'pause', type: 'wait', reached: 2, completed: 0, skipped: {}, failed: 0, bounced: 0, complained: 0, waiting: 2 },
      { stepId: 'done', type: 'exit', reached: 0, completed: 0, skipped: {}, failed: 0, bounced: 0, complained: 0, waiting: 0 },
    ]);
  });

  it('answers the days asked for, 1 to 90', async () => {
    const { key, accountId } = await buildTenant();
    const id = await sequenceWithRuns(key, accountId);
    for (const days of [1, 7, 90]) {
      const res = await api(key).get(`/sequences/${id}/stats?days=${days}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.stats.days).to.have.length(days);
    }
  });

  it('answers 400 naming days when it is not a whole number from 1 to 90, and writes nothing', async () => {
    const { key, accountId } = await buildTenant();
    const id = await sequenceWithRuns(key, accountId);
    const [{ n: before }] = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM sequence_days', []);
    for (const days of ['0', '91', '2.5', 'many', '-1']) {
      const res = await api(key).get(`/sequences/${id}/stats?days=${days}`);
      expectError(res, 400, 'validation_failed', ['error', 'code', 'requestId', 'details']);
      expect(res.body.error, days).to.match(/days/);
    }
    const [{ n: after }] = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM sequence_days', []);
    expect(Number(after)).to.equal(Number(before));
  });

  it("answers 404 for another account's sequence, an unknown one, and an id that is no UUID", async () => {
    const owner = await buildTenant();
    const id = await sequenceWithRuns(owner.key, owner.accountId);
    const other = await buildTenant();
    for (const path of [`/sequences/${id}/stats`, '/sequences/00000000-0000-4000-8000-000000000000/stats', '/sequences/not-a-uuid/stats']) {
      const res = await api(other.key).get(path);
      expectError(res, 404, 'not_found');
      expect(res.body.error).to.equal('Sequence not found');
    }
  });

  it('answers 401 without a key', async () => {
    const { key, accountId } = await buildTenant();
    const id = await sequenceWithRuns(key, accountId);
    const res = await api().get(`/sequences/${id}/stats`);
    expect(res.status).to.equal(401);
  });
});
