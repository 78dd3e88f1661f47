import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { execute } from '../../src/db/sql/statements';
import { moveRun } from '../../src/services/sequences/run-transitions';
import { api, caller } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { trpcRejection } from '../support/trpc';

// GET /sequences, /sequences/{id}, /sequences/{id}/runs and /contacts/{id}/runs (issue 9), and
// their tRPC procedures.

async function setCreatedAt(table: 'sequences' | 'sequence_runs', id: string, minute: number) {
  await execute(testDb(), `UPDATE ${table} SET created_at = ? WHERE id = ?`, [new Date(Date.UTC(2026, 0, 1, 0, minute)), id]);
}

async function walk<T extends { id: string }>(get: (cursor?: string) => Promise<{ items: T[]; nextCursor: string | null }>) {
  const items: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await get(cursor);
    items.push(...page.items);
    if (!page.nextCursor) return items;
    cursor = page.nextCursor;
  }
}

async function enrolled(key: string, sequenceId: string, email: string): Promise<{ contactId: string; runId: string }> {
  const res = await api(key).post(`/sequences/${sequenceId}/trigger`).send({ contact: { email } });
  expect(res.status, res.text).to.equal(202);
  return res.body;
}

describe('GET /sequences', () => {
  it('lists newest first with activeRuns, filters by status, and pages to a last page of null', async () => {
    const { accountId, key } = await buildTenant();
    const draft = await buildSequence(accountId, 'draft');
    const active = await buildSequence(accountId, 'active');
    const paused = await buildSequence(accountId, 'paused');
    await Promise.all([draft, active, paused].map((s, i) => setCreatedAt('sequences', s.id, i)));
    await enrolled(key, active.id, 'one@x.io');
    const two = await enrolled(key, active.id, 'two@x.io');
    await moveRun(testDb(), { accountId, runId: two.runId, status: 'cancelled' });

    const first = await api(key).get('/sequences').query({ limit: 2 });
    expect(first.status, first.text).to.equal(200);
    expect(first.body.sequences.map((s: { id: string }) => s.id)).to.deep.equal([paused.id, active.id]);
    expect(first.body.sequences[1]).to.deep.include({ name: active.name, status: 'active', activeRuns: 1 });
    expect(Object.keys(first.body.sequences[1]).sort()).to.deep.equal(['activeRuns', 'createdAt', 'entry', 'exitWhen', 'goal', 'id', 'name', 'sendingWindow', 'status', 'steps', 'updatedAt', 'version']);
    expect(first.body.sequences[0].activeRuns).to.equal(0);
    const last = await api(key).get('/sequences').query({ limit: 2, cursor: first.body.nextCursor });
    expect(last.body).to.deep.equal({
      sequences: [{ ...last.body.sequences[0], id: draft.id, status: 'draft', activeRuns: 0 }],
      nextCursor: null,
    });

    const actives = await api(key).get('/sequences').query({ status: 'active' });
    expect(actives.body.sequences.map((s: { id: string }) => s.id)).to.deep.equal([active.id]);
    expect((await api(key).get('/sequences').query({ status: 'archived' })).body).to.deep.equal({ sequences: [], nextCursor: null });
  });

  it('breaks ties by id, newest first', async () => {
    const tenant = await buildTenant();
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) {
      const s = await buildSequence(tenant.accountId, 'draft');
      await setCreatedAt('sequences', s.id, 0);
      ids.push(s.id);
    }
    const walked = await walk(async (cursor) => {
      const res = await caller(tenant.key).sequences.list({ limit: 3, ...(cursor && { cursor }) });
      return { items: res.sequences, nextCursor: res.nextCursor };
    });
    expect(walked.map((s) => s.id)).to.deep.equal([...ids].sort().reverse());
  });

  it('answers 400 for a bad status, limit or cursor, and lists only the key\'s account', async () => {
    const { accountId, key } = await buildTenant();
    const other = await buildTenant();
    const mine = await buildSequence(accountId);
    await buildSequence(other.accountId);
    for (const [query, message] of [
      [{ status: 'deleted' }, /^status: /],
      [{ limit: 201 }, /^limit: limit must be an integer from 1 to 200$/],
      [{ cursor: 'x' }, /^cursor: Invalid cursor/],
    ] as const) {
      const res = await api(key).get('/sequences').query(query);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.error).to.match(message);
    }
    const listed = await api(key).get('/sequences');
    expect(listed.body.sequences.map((s: { id: string }) => s.id)).to.deep.equal([mine.id]);
  });
});

describe('GET /sequences/{id}', () => {
  it('answers the sequence, or 404 Sequence not found for unknown, malformed and other accounts\' ids', async () => {
    const { accountId, key } = await buildTenant();
    const sequence = await buildSequence(accountId, 'paused');
    const res = await api(key).get(`/sequences/${sequence.id}`);
    expect(res.status).to.equal(200);
    expect(res.body.sequence).to.deep.equal({
      id: sequence.id,
      name: sequence.name,
      status: 'paused',
      activeRuns: 0,
      version: null,
      steps: [],
      exitWhen: [],
      sendingWindow: null,
      entry: null,
      goal: null,
      createdAt: sequence.createdAt,
      updatedAt: sequence.updatedAt,
    });
    expect((await caller(key).sequences.get({ id: sequence.id.toUpperCase() })).sequence.id).to.equal(sequence.id);

    const other = await buildTenant();
    const theirs = await buildSequence(other.accountId);
    for (const id of [randomUUID(), 'not-a-uuid', theirs.id]) {
      const missing = await api(key).get(`/sequences/${id}`);
      expect(missing.status).to.equal(404);
      expect(missing.body).to.include({ error: 'Sequence not found', code: 'not_found' });
    }
    expect((await trpcRejection(caller(key).sequences.get({ id: theirs.id }))).code).to.equal('NOT_FOUND');
  });
});

describe('run lists', () => {
  // Two sequences; three contacts with runs in various states.
  async function fixture() {
    const tenant = await buildTenant({ kind: 'runner' });
    const s1 = await buildSequence(tenant.accountId);
    const s2 = await buildSequence(tenant.accountId);
    const a = await enrolled(tenant.key, s1.id, 'a@x.io');
    const b = await enrolled(tenant.key, s1.id, 'b@x.io');
    const c = await enrolled(tenant.key, s1.id, 'c@x.io');
    const a2 = await enrolled(tenant.key, s2.id, 'a@x.io');
    await moveRun(testDb(), { accountId: tenant.accountId, runId: b.runId, status: 'running' });
    await moveRun(testDb(), { accountId: tenant.accountId, runId: c.runId, status: 'cancelled' });
    const a3 = await enrolled(tenant.key, s1.id, 'c@x.io');
    const runs = [a.runId, b.runId, c.runId, a2.runId, a3.runId];
    await Promise.all(runs.map((id, minute) => setCreatedAt('sequence_runs', id, minute)));
    return { ...tenant, s1: s1.id, s2: s2.id, a, b, c, a2, a3 };
  }

  const runIds = (body: { runs: Array<{ id: string }> }) => body.runs.map((r) => r.id);

  it('GET /sequences/{id}/runs: newest first with sequenceId and contactId, by status and active', async () => {
    const f = await fixture();
    const all = await api(f.key).get(`/sequences/${f.s1}/runs`);
    expect(all.status, all.text).to.equal(200);
    expect(runIds(all.body)).to.deep.equal([f.a3.runId, f.c.runId, f.b.runId, f.a.runId]);
    expect(all.body.nextCursor).to.equal(null);
    expect(all.body.runs[2]).to.deep.include({ id: f.b.runId, sequenceId: f.s1, contactId: f.b.contactId, status: 'running', completedAt: null });
    expect(Object.keys(all.body.runs[0]).sort()).to.deep.equal(
      ['completedAt', 'contactId', 'createdAt', 'currentStepId', 'dueAt', 'id', 'reason', 'sequenceId', 'startedAt', 'status', 'version', 'waitingFor'],
    );

    expect(runIds((await api(f.key).get(`/sequences/${f.s1}/runs`).query({ active: 'true' })).body)).to.deep.equal([
      f.a3.runId,
      f.b.runId,
      f.a.runId,
    ]);
    expect(runIds((await api(f.key).get(`/sequences/${f.s1}/runs`).query({ active: 'false' })).body)).to.deep.equal([f.c.runId]);
    expect(runIds((await api(f.key).get(`/sequences/${f.s1}/runs`).query({ status: 'pending' })).body)).to.deep.equal([
      f.a3.runId,
      f.a.runId,
    ]);
    expect(runIds((await api(f.key).get(`/sequences/${f.s1}/runs`).query({ status: 'cancelled', active: 'true' })).body)).to.deep.equal([]);

    const walked = await walk(async (cursor) => {
      const res = await api(f.key).get(`/sequences/${f.s1}/runs`).query({ limit: 1, ...(cursor && { cursor }) });
      expect(res.status, res.text).to.equal(200);
      return { items: res.body.runs as Array<{ id: string }>, nextCursor: res.body.nextCursor };
    });
    expect(walked.map((r) => r.id)).to.deep.equal(runIds(all.body));
  });

  it('GET /contacts/{id}/runs: the contact\'s runs in every sequence, newest first', async () => {
    const f = await fixture();
    const res = await api(f.key).get(`/contacts/${f.a.contactId}/runs`);
    expect(res.status, res.text).to.equal(200);
    expect(runIds(res.body)).to.deep.equal([f.a2.runId, f.a.runId]);
    expect(res.body.runs.map((r: { sequenceId: string }) => r.sequenceId)).to.deep.equal([f.s2, f.s1]);
    const c = await caller(f.key).contacts.runs({ id: f.c.contactId, limit: 1 });
    expect(c.runs.map((r) => r.id)).to.deep.equal([f.a3.runId]);
    const rest = await caller(f.key).contacts.runs({ id: f.c.contactId, limit: 1, cursor: c.nextCursor! });
    expect(rest).to.deep.equal({ runs: [{ ...rest.runs[0], id: f.c.runId, status: 'cancelled' }], nextCursor: null });
    expect(runIds((await api(f.key).get(`/contacts/${f.c.contactId}/runs`).query({ active: 'true' })).body)).to.deep.equal([f.a3.runId]);
    expect(runIds((await api(f.key).get(`/contacts/${f.c.contactId}/runs`).query({ status: 'cancelled' })).body)).to.deep.equal([f.c.runId]);
  });

  it('404 for a sequence or contact that is unknown, malformed or another account\'s; 400 for bad filters', async () => {
    const f = await fixture();
    const other = await buildTenant();
    const theirSequence = await buildSequence(other.accountId);
    const theirContact = await buildContact(other.accountId);
    for (const id of [randomUUID(), 'nope', theirSequence.id]) {
      const res = await api(f.key).get(`/sequences/${id}/runs`);
      expect(res.status).to.equal(404);
      expect(res.body).to.include({ error: 'Sequence not found', code: 'not_found' });
    }
    for (const id of [randomUUID(), 'nope', theirContact.id]) {
      const res = await api(f.key).get(`/contacts/${id}/runs`);
      expect(res.status).to.equal(404);
      expect(res.body).to.include({ error: 'Contact not found', code: 'not_found' });
    }
    for (const [query, message] of [
      [{ status: 'done' }, /^status: /],
      [{ active: 'yes' }, /^active: Must be true or false$/],
      [{ limit: 0 }, /^limit: /],
      [{ cursor: 'abc' }, /^cursor: Invalid cursor/],
    ] as const) {
      const res = await api(f.key).get(`/sequences/${f.s1}/runs`).query(query);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.error).to.match(message);
    }
    // A cursor of one sequence's runs is not one of another's, nor of a contact's runs.
    const page = await api(f.key).get(`/sequences/${f.s1}/runs`).query({ limit: 1 });
    const elsewhere = await api(f.key).get(`/sequences/${f.s2}/runs`).query({ cursor: page.body.nextCursor });
    expect(elsewhere.status).to.equal(400);
    const contactRuns = await api(f.key).get(`/contacts/${f.a.contactId}/runs`).query({ cursor: page.body.nextCursor });
    expect(contactRuns.status).to.equal(400);
  });
});
