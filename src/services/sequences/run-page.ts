import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
import type { RunDetailDto } from '../../schemas/sequence';
import type { Step } from '../../schemas/sequence-definition';
import { normalizeId } from '../ids';
import { contentsOfRun, type MessageContent } from '../messages/message-contents';
import { getRunDetail } from './run-detail';
import { readSteps } from '../runs/sequence-versions';

// A run's own page in the dashboard, found by the run's id alone: the API's timeline
// (run-detail.ts), and what a person needs to read it: the sequence's name, the contact's
// email, the steps of the run's version (a webhook step names its endpoint by id), each
// endpoint's URL (null: deleted since), and what each message carried. A handful of
// statements, whatever the length of the timeline.

export interface RunPage {
  run: RunDetailDto;
  sequenceName: string;
  contactEmail: string;
  steps: Step[];
  endpoints: Record<string, string | null>;
  contents: Record<string, MessageContent>;
}

export async function getRunPage(db: Database, input: { accountId: string; runId: string }): Promise<RunPage> {
  const id = normalizeId(input.runId);
  const [row] = id
    ? await select<{ sequence_id: string; name: string; email: string }>(
        db,
        `SELECT r.sequence_id, s.name, c.email FROM sequence_runs r JOIN sequences s ON s.id = r.sequence_id JOIN contacts c ON c.id = r.contact_id
         WHERE r.id = ? AND r.account_id = ?`,
        [id, input.accountId],
      )
    : [];
  if (!row) throw new NotFoundError('Run');
  const run = await getRunDetail(db, { accountId: input.accountId, sequenceId: row.sequence_id, runId: id! });
  const steps = await readSteps(db, row.sequence_id, run.version);
  const endpointIds = [...new Set(steps.flatMap((step) => (step.type === 'webhook' ? [step.endpointId.toLowerCase()] : [])))];
  const found =
    endpointIds.length === 0
      ? []
      : await select<{ id: string; url: string }>(db, 'SELECT id, url FROM webhook_endpoints WHERE id IN (?) AND account_id = ?', [endpointIds, input.accountId]);
  const urls = new Map(found.map((endpoint) => [endpoint.id.toLowerCase(), endpoint.url]));
  return {
    run,
    sequenceName: row.name,
    contactEmail: row.email,
    steps,
    endpoints: Object.fromEntries(endpointIds.map((endpointId) => [endpointId, urls.get(endpointId) ?? null])),
    contents: await contentsOfRun(db, { accountId: input.accountId, runId: run.id }),
  };
}
