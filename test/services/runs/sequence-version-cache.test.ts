import { expect } from 'chai';
import { insertRows } from '../../../src/db/sql/statements';
import { withTransaction } from '../../../src/db/sql/transaction';
import type { Step } from '../../../src/schemas/sequence-definition';
import { newRowId } from '../../../src/services/ids';
import { readSteps, readVersions } from '../../../src/services/runs/sequence-versions';
import { captureQueries, testDb } from '../../support/db';
import { buildAccount, buildSequence } from '../../support/factories';

// The steps of a version are kept once read, up to 2,000 versions per database. A full cache
// drops the version used least recently: the versions the engine asks for all day stay, however
// many others (an old version's straggling runs, a list of every sequence) pass through.

const CAPACITY = 2_000;

const stepsOf = (version: number) => [{ id: `t${version}`, type: 'tag', add: [`v${version}`] }] as Step[];

async function storeVersions(accountId: string, sequenceId: string, count: number) {
  const rows = Array.from({ length: count }, (_, i) => [newRowId(), accountId, sequenceId, i + 1, JSON.stringify(stepsOf(i + 1)), new Date()]);
  await withTransaction(testDb(), async (transaction) => {
    for (let at = 0; at < rows.length; at += 250) {
      await insertRows(testDb(), 'sequence_versions', ['id', 'account_id', 'sequence_id', 'version', 'steps', 'created_at'], rows.slice(at, at + 250), transaction);
    }
  });
}

describe('the sequence version cache', () => {
  it('keeps a version read all day while 2,000 others pass through, and drops the least recently used', async () => {
    const account = await buildAccount();
    const sequence = await buildSequence(account.id);
    const cold = CAPACITY + 100;
    await storeVersions(account.id, sequence.id, 1 + cold);

    const first = await captureQueries(() => readSteps(testDb(), sequence.id, 1));
    expect(first.result).to.deep.equal(stepsOf(1));
    expect(first.queries, 'the first read goes to the database').to.have.length(1);

    // Versions 2 .. 2,101 are read 100 at a time; version 1 is read between every two batches.
    const hotStatements: string[] = [];
    for (let from = 2; from <= 1 + cold; from += 100) {
      const batch = Array.from({ length: 100 }, (_, i) => ({ sequenceId: sequence.id, version: from + i }));
      const read = await readVersions(testDb(), batch);
      expect(read.size).to.equal(100);
      const hot = await captureQueries(() => readSteps(testDb(), sequence.id, 1));
      expect(hot.result).to.deep.equal(stepsOf(1));
      hotStatements.push(...hot.queries);
    }
    expect(hotStatements, 'version 1, in use all along, is never read from the database again').to.deep.equal([]);

    // Bounded all the same: the versions used least recently (the first batches) were dropped,
    // the last batch is still kept.
    const oldest = await captureQueries(() => readSteps(testDb(), sequence.id, 2));
    expect(oldest.result).to.deep.equal(stepsOf(2));
    expect(oldest.queries).to.have.length(1);
    const recent = await captureQueries(() => readSteps(testDb(), sequence.id, 1 + cold));
    expect(recent.result).to.deep.equal(stepsOf(1 + cold));
    expect(recent.queries).to.deep.equal([]);
  });
});
