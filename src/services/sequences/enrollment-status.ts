import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { RunDto } from '../../schemas/sequence';
import { findContactRow } from '../contacts/find-contact';
import { requireSequence } from './find-sequence';
import { isActive, RUN_SELECT, runFromRow, type RunRow } from '../runs/runs';

// Whether the contact is enrolled now, and its latest run (newest created, ties by id).
export async function enrollmentStatus(
  db: Database,
  input: { accountId: string; sequenceId: string; contactId: string },
): Promise<{ enrolled: boolean; run: RunDto | null }> {
  const sequenceId = await requireSequence(db, { ...input, mustBeActive: false });
  const contact = await findContactRow(db, { accountId: input.accountId, id: input.contactId });
  const [latest] = await select<RunRow>(
    db,
    `${RUN_SELECT} WHERE sequence_id = ? AND contact_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
    [sequenceId, contact.id],
  );
  if (!latest) return { enrolled: false, run: null };
  return { enrolled: isActive(latest.status), run: runFromRow(latest) };
}
