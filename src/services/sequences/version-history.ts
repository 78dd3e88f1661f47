import type { Database } from '../../db/database';
import { parseJson, toIso } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
import type { Step } from '../../schemas/sequence-definition';
import { normalizeId } from '../ids';

// A sequence's versions, newest first, each with its steps: the dashboard's version history
// (docs/dashboard.md). One statement on sequence_versions' unique (sequence_id, version); a
// sequence has at most as many versions as times its steps were changed, and the page shows
// them all. The sequence is looked up apart only when it has none, to tell a sequence that
// never had steps from an unknown one (404, as on every route of one).

export interface SequenceVersion {
  version: number;
  steps: Step[];
  createdAt: string;
}

export const MAX_VERSIONS_LISTED = 200;

export async function listVersions(db: Database, input: { accountId: string; sequenceId: string }): Promise<SequenceVersion[]> {
  const id = normalizeId(input.sequenceId);
  if (!id) throw new NotFoundError('Sequence');
  const rows = await select<{ version: number | string; steps: unknown; created_at: unknown }>(
    db,
    `SELECT version, steps, created_at FROM sequence_versions WHERE sequence_id = ? AND account_id = ? ORDER BY version DESC LIMIT ${MAX_VERSIONS_LISTED}`,
    [id, input.accountId],
  );
  if (rows.length === 0) {
    const [sequence] = await select<{ id: string }>(db, 'SELECT id FROM sequences WHERE id = ? AND account_id = ?', [id, input.accountId]);
    if (!sequence) throw new NotFoundError('Sequence');
  }
  return rows.map((row) => ({ version: Number(row.version), steps: parseJson<Step[]>(row.steps as string), createdAt: toIso(row.created_at) }));
}
