import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { select } from '../../src/db/sql/statements';
import { SEQUENCE_HAS_RUNS } from '../../src/services/sequences/delete-sequence';
import { api, testApp } from '../support/app';
import { testDb } from '../support/db';
import { buildSequence, buildTenant } from '../support/factories';
import { storedRuns } from '../support/sequence-rows';

// DELETE /sequences/{id} and the list's archived sequences over REST and tRPC (docs/api.md
// "Sequences", "Lists"): statuses, bodies, and nothing written on a refusal. What the
// procedure does: test/procedures/sequence-delete.test.ts; the race with enrolling:
// test/services/sequences/delete-sequence.test.ts.

async function storedSequences(accountId: string): Promise<string[]> {
  const rows = await select<{ id: string }>(testDb(), 'SELECT id FROM sequences WHERE account_id = ? ORDER BY id', [accountId]);
  return rows.map((row) => row.id);
}

describe('DELETE /sequences/{id}', () => {
  it('answers 204 with no body for a sequence that never had a run, which is then gone', async () => {
    const { key, accountId } = await buildTenant();
    const created = await api(key).post('/sequences').send({ name: 'Trying things', steps: [{ type: 'wait', duration: 'P1D' }] });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.sequence.id as string;

    const res = await api(key).delete(`/sequences/${id}`);
    expect(res.status, res.text).to.equal(204);
    expect(res.text).to.equal('');
    expect(res.headers['x-request-id']).to.be.a('string');
    expect(res.headers.ratelimit).to.be.a('string');

    expect(await storedSequences(accountId)).to.deep.equal([]);
    expect(await select(testDb(), 'SELECT id FROM sequence_versions WHERE sequence_id = ?', [id])).to.deep.equal([]);
    const gone = await api(key).get(`/sequences/${id}`);
    expect(gone.status).to.equal(404);
  });

  it('answers 409 sequence_has_runs for a sequence with runs, and keeps it and its runs', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'active');
    const triggered = await api(key).post(`/sequences/${sequence.id}/trigger`).send({ contact: { email: 'ada@example.com' } });
    expect(triggered.body.enrolled).to.equal(true);

    const res = await api(key).delete(`/sequences/${sequence.id}`);
    expect(res.status, res.text).to.equal(409);
    expect(res.body).to.deep.equal({ error: SEQUENCE_HAS_RUNS, code: 'sequence_has_runs', requestId: res.headers['x-request-id'] });
    expect(await storedSequences(accountId)).to.deep.equal([sequence.id]);
    expect((await storedRuns({ sequenceId: sequence.id })).map((run) => run.id)).to.deep.equal([triggered.body.runId]);

    // What the message says to do instead: archive it, and the list leaves it out.
    const archived = await api(key).patch(`/sequences/${sequence.id}`).send({ status: 'archived' });
    expect(archived.status).to.equal(200);
    expect((await api(key).get('/sequences')).body).to.deep.equal({ sequences: [], nextCursor: null });
  });

  it('answers 404 Sequence not found for an unknown or another account\'s sequence, deleting nothing', async () => {
    const { key } = await buildTenant();
    const other = await buildTenant();
    const theirs = await buildSequence(other.accountId, 'draft');
    for (const id of [randomUUID(), theirs.id]) {
      const res = await api(key).delete(`/sequences/${id}`);
      expect(res.status, id).to.equal(404);
      expect(res.body).to.include({ error: 'Sequence not found', code: 'not_found' });
    }
    expect(await storedSequences(other.accountId)).to.deep.equal([theirs.id]);
  });

  it('answers 400 naming id for an id that is not a UUID, and 401 before that without a key', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'draft');
    for (const id of ['not-a-uuid', `${sequence.id}0`, '%20']) {
      const res = await api(key).delete(`/sequences/${id}`);
      expect(res.status, `${id}: ${res.text}`).to.equal(400);
      expect(res.body).to.include({ error: 'id: must be a UUID', code: 'validation_failed' });
      expect(res.body.details).to.deep.equal([{ path: 'id', message: 'must be a UUID' }]);
    }
    expect((await api().delete('/sequences/not-a-uuid')).status).to.equal(401);
    expect(await storedSequences(accountId)).to.deep.equal([sequence.id]);
  });

  it('is sequences.delete on tRPC, with the same outcomes', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'paused');
    const rpc = (id: string) => request(testApp()).post('/trpc/sequences.delete').set('x-api-key', key).send({ id });
    const bad = await rpc('nope');
    expect(bad.status).to.equal(400);
    expect(bad.body.error.data).to.include({ appCode: 'validation_failed' });
    const ok = await rpc(sequence.id);
    expect(ok.status, ok.text).to.equal(200);
    const again = await rpc(sequence.id);
    expect(again.status).to.equal(404);
    expect(again.body.error.message).to.equal('Sequence not found');
    expect(await storedSequences(accountId)).to.deep.equal([]);
  });
});

describe('GET /sequences and archived sequences', () => {
  it('leaves archived sequences out unless status=archived asks for them', async () => {
    const { key, accountId } = await buildTenant();
    const draft = await buildSequence(accountId, 'draft');
    const archived = await buildSequence(accountId, 'archived');
    const active = await buildSequence(accountId, 'active');
    const ids = async (query: Record<string, string>) => {
      const res = await api(key).get('/sequences').query(query);
      expect(res.status, res.text).to.equal(200);
      return res.body.sequences.map((s: { id: string }) => s.id);
    };
    expect(await ids({})).to.deep.equal([active.id, draft.id]);
    expect(await ids({ status: 'archived' })).to.deep.equal([archived.id]);
    expect(await ids({ status: 'draft' })).to.deep.equal([draft.id]);
    // There is no switch for "archived too": a parameter the list does not take is a 400 naming
    // it, never a silent list of everything.
    const unknown = await api(key).get('/sequences').query({ includeArchived: 'true' });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error).to.include('includeArchived');
  });
});
