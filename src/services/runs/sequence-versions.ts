import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson } from '../../db/sql/rows';
import { insertRows, select } from '../../db/sql/statements';
import type { Step } from '../../schemas/sequence-definition';
import { newRowId } from '../ids';
import { LruMap } from '../lru-map';

// The steps of each version of a sequence. A version is never changed once written, so what
// was read once is kept (per database, a bounded number of versions, the least recently used
// dropped first): the engine and the enrollments ask for the same few versions all day.

const MAX_CACHED = 2_000;
const cache = new WeakMap<Database, LruMap<string, Step[]>>();

function cacheOf(db: Database): LruMap<string, Step[]> {
  let versions = cache.get(db);
  if (!versions) cache.set(db, (versions = new LruMap(MAX_CACHED)));
  return versions;
}

const key = (sequenceId: string, version: number) => `${sequenceId}/${version}`;

export async function writeVersion(
  db: Database,
  input: { accountId: string; sequenceId: string; version: number; steps: readonly Step[] },
  transaction: Transaction,
): Promise<void> {
  await insertRows(
    db,
    'sequence_versions',
    ['id', 'account_id', 'sequence_id', 'version', 'steps', 'created_at'],
    [[newRowId(), input.accountId, input.sequenceId, input.version, JSON.stringify(input.steps), new Date()]],
    transaction,
  );
}

// The steps of each (sequence, version) asked for, in one statement for those not yet known.
export async function readVersions(
  db: Database,
  wanted: ReadonlyArray<{ sequenceId: string; version: number }>,
  transaction?: Transaction,
): Promise<Map<string, Step[]>> {
  const known = cacheOf(db);
  const found = new Map<string, Step[]>();
  const missing: Array<{ sequenceId: string; version: number }> = [];
  for (const item of wanted) {
    const steps = known.get(key(item.sequenceId, item.version));
    if (steps) found.set(key(item.sequenceId, item.version), steps);
    else if (!missing.some((m) => m.sequenceId === item.sequenceId && m.version === item.version)) missing.push(item);
  }
  if (missing.length > 0) {
    const rows = await select<{ sequence_id: string; version: number; steps: string }>(
      db,
      `SELECT sequence_id, version, steps FROM sequence_versions WHERE ${missing.map(() => '(sequence_id = ? AND version = ?)').join(' OR ')}`,
      missing.flatMap((m) => [m.sequenceId, m.version]),
      transaction,
    );
    for (const row of rows) {
      const steps = parseJson<Step[]>(row.steps);
      known.set(key(row.sequence_id, Number(row.version)), steps);
      found.set(key(row.sequence_id, Number(row.version)), steps);
    }
  }
  return found;
}

export async function readSteps(db: Database, sequenceId: string, version: number | null, transaction?: Transaction): Promise<Step[]> {
  if (version === null) return [];
  const found = await readVersions(db, [{ sequenceId, version }], transaction);
  return found.get(key(sequenceId, version)) ?? [];
}

export function versionKey(sequenceId: string, version: number): string {
  return key(sequenceId, version);
}
