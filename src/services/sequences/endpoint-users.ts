import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { ConflictError, type IssueDetail } from '../../errors/app-errors';
import { normalizeId } from '../ids';
import { readVersions, versionKey } from '../runs/sequence-versions';

// A webhook endpoint that a webhook step of an active or paused sequence sends to cannot be
// deleted (409 webhook_in_use, naming each sequence and step): its runs would fail at that step
// at once. Draft and archived sequences do not hold it, nor do older versions (docs/webhooks.md).
//
// Race-free with sequence writes, inside the delete's transaction, by the endpoint's row lock:
// the delete locks it for update before calling this, and a sequence create or change that
// names the endpoint share-locks it (checkWebhookEndpoints). So a write under way is waited for
// and then read here (this read comes after the lock, and sees what committed), and one that
// comes later finds the endpoint gone (400). A status change (a draft set active) names no
// endpoint and takes no lock: raced with a delete, it commits as if it came after it, which is
// what it would do then too (drafts do not hold an endpoint).
export async function refuseDeletingUsedEndpoint(db: Database, accountId: string, endpointId: string, transaction: Transaction): Promise<void> {
  const sequences = await select<{ id: string; name: string; status: string; version: number | string }>(
    db,
    "SELECT id, name, status, version FROM sequences WHERE account_id = ? AND status IN ('active', 'paused') AND version IS NOT NULL ORDER BY created_at, id",
    [accountId],
    transaction,
  );
  if (sequences.length === 0) return;
  const versions = await readVersions(db, sequences.map((s) => ({ sequenceId: s.id, version: Number(s.version) })), transaction);
  const details: IssueDetail[] = [];
  const named: string[] = [];
  for (const sequence of sequences) {
    const steps = versions.get(versionKey(sequence.id, Number(sequence.version))) ?? [];
    const users = steps.flatMap((step, index) =>
      step.type === 'webhook' && normalizeId(step.endpointId) === endpointId ? [{ step, index }] : [],
    );
    if (users.length === 0) continue;
    named.push(`"${sequence.name}" (${users.map(({ step }) => `step "${step.id}"`).join(', ')})`);
    for (const { step, index } of users) {
      details.push({
        path: `sequences.${sequence.id}.steps.${index}`,
        message: `Step ${index + 1} "${step.id}" of the ${sequence.status} sequence "${sequence.name}" (version ${sequence.version}) sends to this endpoint`,
      });
    }
  }
  if (details.length === 0) return;
  throw new ConflictError(
    `The webhook endpoint is used by ${named.length === 1 ? 'the sequence' : 'the sequences'} ${named.join(', ')}: ` +
      'change those steps, or archive the sequence, before deleting it',
    'webhook_in_use',
    details,
  );
}
