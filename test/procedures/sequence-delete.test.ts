import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { select } from '../../src/db/sql/statements';
import { SEQUENCE_HAS_RUNS } from '../../src/services/sequences/delete-sequence';
import { caller } from '../support/app';
import { testDb } from '../support/db';
import { buildSequence, buildTenant } from '../support/factories';
import { storedRuns } from '../support/sequence-rows';
import { badRequest, rejectedWith } from '../support/trpc';

// sequences.delete and the list's archived sequences through createCaller (docs/decisions.md
// "Deleting and archiving sequences"). Paths, statuses and bodies: test/http/sequence-delete.test.ts.

const SEQUENCE_NOT_FOUND = { error: 'Sequence not found', code: 'not_found' };

async function sequenceRows(accountId: string) {
  const rows = await select<{ id: string; status: string }>(testDb(), 'SELECT id, status FROM sequences WHERE account_id = ? ORDER BY id', [accountId]);
  const versions = await select<{ sequence_id: string }>(testDb(), 'SELECT sequence_id FROM sequence_versions WHERE account_id = ?', [accountId]);
  return { sequences: rows.map((row) => `${row.id} ${row.status}`), versions: versions.length };
}

describe('sequences.delete', () => {
  it('deletes a draft that never ran, with its steps; get and list no longer find it', async () => {
    const { key, accountId } = await buildTenant();
    const { sequence } = await caller(key).sequences.create({ name: 'Scratch', steps: [{ type: 'wait', duration: 'PT1H' }] } as never);
    const kept = await buildSequence(accountId, 'draft');
    expect((await sequenceRows(accountId)).versions).to.equal(1);

    expect(await caller(key).sequences.delete({ id: sequence.id })).to.equal(undefined);

    expect(await sequenceRows(accountId)).to.deep.equal({ sequences: [`${kept.id} draft`], versions: 0 });
    await rejectedWith(caller(key).sequences.get({ id: sequence.id }), 'NOT_FOUND', SEQUENCE_NOT_FOUND);
    expect((await caller(key).sequences.list({ limit: 50 })).sequences.map((s) => s.id)).to.deep.equal([kept.id]);
    // Deleting it again: it is not there.
    await rejectedWith(caller(key).sequences.delete({ id: sequence.id }), 'NOT_FOUND', SEQUENCE_NOT_FOUND);
  });

  it('refuses a sequence that has runs with CONFLICT sequence_has_runs, saying to archive it; archiving works', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'active');
    const outcome = await caller(key).sequences.trigger({ id: sequence.id, contact: { email: 'ada@example.com' } } as never);
    expect(outcome.enrolled).to.equal(true);
    await caller(key).sequences.unenroll({ id: sequence.id, contactIds: [outcome.contactId] });
    const before = await sequenceRows(accountId);

    const error = await rejectedWith(caller(key).sequences.delete({ id: sequence.id }), 'CONFLICT', {
      error: SEQUENCE_HAS_RUNS,
      code: 'sequence_has_runs',
    });
    expect(error.message).to.match(/archive it instead/);
    expect(await sequenceRows(accountId)).to.deep.equal(before);
    expect((await storedRuns({ sequenceId: sequence.id })).map((run) => run.status)).to.deep.equal(['cancelled']);

    await caller(key).sequences.update({ id: sequence.id, status: 'archived' } as never);
    expect((await caller(key).sequences.list({ limit: 50 })).sequences).to.deep.equal([]);
  });

  it('answers NOT_FOUND for an unknown id or another account\'s, deleting nothing', async () => {
    const { key } = await buildTenant();
    const other = await buildTenant();
    const theirs = await buildSequence(other.accountId, 'draft');
    for (const id of [randomUUID(), theirs.id]) await rejectedWith(caller(key).sequences.delete({ id }), 'NOT_FOUND', SEQUENCE_NOT_FOUND);
    expect((await sequenceRows(other.accountId)).sequences).to.deep.equal([`${theirs.id} draft`]);
  });

  it('answers BAD_REQUEST naming id for an id that is not a UUID, before anything is read', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'draft');
    for (const id of ['not-a-uuid', `${sequence.id}x`, '', 42]) {
      const error = await badRequest(caller(key).sequences.delete({ id } as never), 'id');
      expect(error.message).to.match(/must be a UUID|expected string/);
    }
    expect((await sequenceRows(accountId)).sequences).to.have.length(1);
  });
});

describe('sequences.list and archived sequences', () => {
  it('leaves archived sequences out by default and lists only them with status archived, each walk keyset-paged', async () => {
    const { key, accountId } = await buildTenant();
    // Archived and not interleaved, so that pages of 2 step over archived rows.
    const made: Array<{ id: string; status: string }> = [];
    for (const status of ['draft', 'archived', 'active', 'archived', 'paused', 'archived', 'draft'] as const) {
      made.push({ id: (await buildSequence(accountId, status)).id, status });
    }
    const walk = async (input: { status?: 'archived' }) => {
      const ids: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages += 1) {
        const page = await caller(key).sequences.list({ limit: 2, ...input, ...(cursor && { cursor }) });
        ids.push(...page.sequences.map((s) => s.id));
        if (!page.nextCursor) return ids;
        cursor = page.nextCursor;
      }
      return expect.fail('the walk did not end');
    };
    const newestFirst = [...made].reverse();
    expect(await walk({})).to.deep.equal(newestFirst.filter((s) => s.status !== 'archived').map((s) => s.id));
    expect(await walk({ status: 'archived' })).to.deep.equal(newestFirst.filter((s) => s.status === 'archived').map((s) => s.id));

    // Archiving one mid-walk: the walk goes on, without it.
    const first = await caller(key).sequences.list({ limit: 2 });
    expect(first.sequences.map((s) => s.id)).to.deep.equal([newestFirst[0]!.id, newestFirst[2]!.id]);
    expect(newestFirst[4]!.status).to.equal('active');
    await caller(key).sequences.update({ id: newestFirst[4]!.id, status: 'archived' } as never);
    const rest = await caller(key).sequences.list({ limit: 10, cursor: first.nextCursor! });
    expect(rest).to.deep.equal({ sequences: [{ ...rest.sequences[0]!, id: newestFirst[6]!.id }], nextCursor: null });
  });
});
