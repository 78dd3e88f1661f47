import type { Database } from '../../db/database';
import { toIso } from '../../db/sql/rows';
import { execute, forUpdate, insertRows, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { NotFoundError, ValidationError } from '../../errors/app-errors';
import type { Entry, ExitRule, Goal, SendingWindow, Step, StepInput } from '../../schemas/sequence-definition';
import type { SequenceDto } from '../../schemas/sequence';
import type { SequenceStatus } from '../../schemas/statuses';
import { notifyDueWork } from '../runs/due-work';
import { newRowId, normalizeId } from '../ids';
import type { ChannelSettings } from '../channels/channel-settings';
import { sendingRules, type SendingRules } from '../channels/sending-domains';
import { checkEntryAndGoal, checkSendingWindow, checkStepSenders, checkSteps, checkWebhookEndpoints, requireSenders } from './definition-rules';
import { getSequence } from './list-sequences';
import { moveRunsToVersion, type MovedRuns } from './move-runs';
import { refuseEmptyingWithRuns } from './stranded-runs';
import { keepIds, sameSteps, canonicalText } from './same-steps';
import { readSteps, writeVersion } from '../runs/sequence-versions';
import { resumeStepPauses } from './step-pauses';
import { notifyReleaseRequested, requestRelease, type ReleaseKind } from './park-runs';

// Creating and changing sequences: the API (POST and PATCH /sequences), the dashboard and the
// admin command line, with the same rules (docs/sequences.md). A change of the steps writes a
// new version; runs keep the version they started on unless the change moves them.

export interface SequenceDefinitionInput {
  steps?: StepInput[];
  // The senders' settings, for the checks of the email steps' From (definition-rules.ts,
  // checkStepSenders, requireSenders); absent: not checked here (sends still refuse an
  // unverified From, and fail without one).
  channels?: ChannelSettings;
  exitWhen?: ExitRule[];
  sendingWindow?: SendingWindow | null;
  entry?: Entry | null;
  goal?: Goal | null;
}

export interface SequenceSummary {
  id: string;
  accountId: string;
  name: string;
  status: SequenceStatus;
  createdAt: string;
  updatedAt: string;
}

interface SequenceRow {
  id: string;
  account_id: string;
  name: string;
  status: SequenceStatus;
  version: number | string | null;
  exit_when: string | null;
  sending_window: string | null;
  entry: string | null;
  goal: string | null;
  created_at: unknown;
  updated_at: unknown;
}

const COLUMNS = 'id, account_id, name, status, version, exit_when, sending_window, entry, goal, created_at, updated_at';
const INSERT_COLUMNS = [...COLUMNS.split(', '), 'entry_activity', 'goal_activity'];

// The checks that need no database, before any transaction starts: a bad definition is refused
// without a write.
function checkDefinition(input: SequenceDefinitionInput): { steps?: Step[] } {
  if (input.sendingWindow) checkSendingWindow(input.sendingWindow);
  checkEntryAndGoal(input);
  return { steps: input.steps === undefined ? undefined : checkSteps(input.steps) };
}

export async function createSequence(
  db: Database,
  input: { accountId: string; name: string; status?: SequenceStatus } & SequenceDefinitionInput,
): Promise<SequenceDto & { accountId: string }> {
  const { steps } = checkDefinition(input);
  // Before the transaction: it reads only the account's sender settings.
  if (steps && input.channels && steps.some((step) => step.type === 'email')) {
    const sender = await sendingRules(db, input.accountId, input.channels);
    checkStepSenders(steps, sender, input.steps);
    if (input.status === 'active') requireSenders(steps, sender, input.steps);
  }
  const id = newRowId();
  await withTransaction(db, async (transaction) => {
    const [account] = await select<{ id: string }>(db, `SELECT id FROM accounts WHERE id = ?`, [input.accountId], transaction);
    if (!account) throw new NotFoundError('Account');
    if (steps) await checkWebhookEndpoints(db, account.id, steps, transaction, input.steps);
    const now = new Date();
    const version = steps && steps.length > 0 ? 1 : null;
    await insertRows(
      db,
      'sequences',
      INSERT_COLUMNS,
      [[
        id,
        account.id,
        input.name,
        input.status ?? 'draft',
        version,
        rulesText(input.exitWhen),
        windowText(input.sendingWindow),
        jsonText(input.entry),
        jsonText(input.goal),
        now,
        now,
        input.entry?.activity ?? null,
        input.goal?.activity ?? null,
      ]],
      transaction,
    );
    if (version !== null) await writeVersion(db, { accountId: account.id, sequenceId: id, version, steps: steps! }, transaction);
  });
  return { ...(await getSequence(db, { accountId: input.accountId, id })), accountId: input.accountId };
}

export async function updateSequence(
  db: Database,
  input: {
    id: string;
    // The CLI is the operator's and reaches every account; the API and the dashboard pass theirs.
    accountId?: string;
    name?: string;
    status?: SequenceStatus;
    moveRuns?: { stepMap: Record<string, string> };
  } & SequenceDefinitionInput,
): Promise<SequenceDto & { accountId: string }> {
  return (await changeSequence(db, input)).sequence;
}

// updateSequence, answering also what a moveRuns moved: how many runs from each older version
// (null without moveRuns).
export async function changeSequence(
  db: Database,
  input: Parameters<typeof updateSequence>[1],
): Promise<{ sequence: SequenceDto & { accountId: string }; moved: MovedRuns[] | null }> {
  const { steps: checked } = checkDefinition(input);
  const id = normalizeId(input.id);
  if (!id) throw new NotFoundError('Sequence');
  // The account's senders, before the transaction (it reads only the sender settings), for new
  // steps or an activation: the operator's command line names no account, the sequence does.
  // New steps without an email step need them only if the sequence is (or becomes) active.
  let sender: SendingRules | null = null;
  if (input.channels && (checked?.some((step) => step.type === 'email') || input.status === 'active')) {
    const accountId = input.accountId ?? (await select<{ account_id: string }>(db, 'SELECT account_id FROM sequences WHERE id = ?', [id]))[0]?.account_id;
    if (accountId !== undefined) sender = await sendingRules(db, accountId, input.channels);
  }
  if (checked && sender) checkStepSenders(checked, sender, input.steps);
  const outcome = await withTransaction(db, async (transaction) => {
    const scope = input.accountId === undefined ? '' : ' AND account_id = ?';
    const [row] = await select<SequenceRow>(
      db,
      `SELECT ${COLUMNS} FROM sequences WHERE id = ?${scope}${forUpdate(db)}`,
      input.accountId === undefined ? [id] : [id, input.accountId],
      transaction,
    );
    if (!row) throw new NotFoundError('Sequence');
    const accountId = row.account_id;
    const currentVersion = row.version === null ? null : Number(row.version);
    const changes: Array<[string, unknown]> = [];
    if (input.name !== undefined && input.name !== row.name) changes.push(['name', input.name]);
    if (input.status !== undefined && input.status !== row.status) changes.push(['status', input.status]);
    // Compared as JSON values: the same rules or window spelled in another key order change nothing.
    if (input.exitWhen !== undefined && !sameText(rulesText(input.exitWhen), row.exit_when)) changes.push(['exit_when', rulesText(input.exitWhen)]);
    if (input.sendingWindow !== undefined && !sameText(windowText(input.sendingWindow), row.sending_window)) {
      changes.push(['sending_window', windowText(input.sendingWindow)]);
    }
    // The activity names beside the definitions: what an activity finds its sequences by.
    if (input.entry !== undefined && !sameText(jsonText(input.entry), row.entry)) {
      changes.push(['entry', jsonText(input.entry)], ['entry_activity', input.entry?.activity ?? null]);
    }
    if (input.goal !== undefined && !sameText(jsonText(input.goal), row.goal)) {
      changes.push(['goal', jsonText(input.goal)], ['goal_activity', input.goal?.activity ?? null]);
    }
    let version = currentVersion;
    const activating = input.status === 'active' && row.status !== 'active';
    // The current steps, needed only to compare new ones with, to move runs onto, or to check
    // that an activated sequence's emails have a sender.
    let steps = input.steps || input.moveRuns || (activating && sender) ? await readSteps(db, id, currentVersion, transaction) : [];
    // The steps as the caller named them (a step is named by a generated id only if it had one).
    let named: readonly StepInput[] = steps;
    if (input.steps) {
      const current = steps;
      // Checked again with the ids the current version gave: the same steps sent again without
      // their ids are the same steps, not a new version.
      const sent = keepIds(input.steps, current);
      named = sent;
      steps = checkSteps(sent);
      await checkWebhookEndpoints(db, accountId, steps, transaction, sent);
      if (steps.length === 0 && current.length > 0) await refuseEmptyingWithRuns(db, id, transaction);
      if (!sameSteps(current, steps) && !(currentVersion === null && steps.length === 0)) {
        version = (currentVersion ?? 0) + 1;
        await writeVersion(db, { accountId, sequenceId: id, version, steps }, transaction);
        changes.push(['version', version]);
      }
    }
    // Active after this change, with steps sent or just activated: every email has a sender.
    if (sender && (input.status ?? row.status) === 'active' && (input.steps || activating)) requireSenders(steps, sender, named);
    // Saving the steps is the answer to a step's template pause: the paused steps' waiting sends
    // take the step as saved, and send again (channels/channel-pauses.ts).
    let resumed = 0;
    if (input.steps && version !== null) resumed = await resumeStepPauses(db, { accountId, sequenceId: id, version, steps }, transaction);
    let moved: MovedRuns[] | null = null;
    if (input.moveRuns) {
      if (version === null || steps.length === 0) {
        throw new ValidationError('moveRuns: the sequence has no steps to move runs to', [{ path: 'moveRuns', message: 'The sequence has no steps to move runs to' }]);
      }
      // The steps in hand, not read back: a version written in this transaction must not reach
      // the versions' cache before it commits.
      moved = await moveRunsToVersion(db, { sequenceId: id, version, steps, stepMap: input.moveRuns.stepMap }, transaction);
    }
    if (changes.length > 0) {
      // Setting what it already is changes nothing, updatedAt included.
      await execute(
        db,
        `UPDATE sequences SET ${changes.map(([column]) => `${column} = ?`).join(', ')}, updated_at = ? WHERE id = ?`,
        [...changes.map(([, value]) => value), new Date(), id],
        transaction,
      );
    }
    // A new window applies at once, and once active again the runs the engine set aside while
    // it was not carry on: recorded here and carried out in chunks after the answer
    // (park-runs.ts), so that the change costs the same whatever the number of runs.
    const releases: ReleaseKind[] = [];
    if (changes.some(([column]) => column === 'sending_window')) releases.push('window');
    if (input.status === 'active' && row.status !== 'active') releases.push('unpark');
    const at = new Date();
    for (const kind of releases) await requestRelease(db, { accountId, sequenceId: id, kind, at }, transaction);
    const movedRuns = (moved ?? []).reduce((sum, item) => sum + item.runs, 0);
    return { accountId, moved, due: movedRuns > 0 || resumed > 0, released: releases.length > 0 };
  });
  if (outcome.due) notifyDueWork();
  if (outcome.released) notifyReleaseRequested();
  const sequence = { ...(await getSequence(db, { accountId: outcome.accountId, id })), accountId: outcome.accountId };
  return { sequence, moved: outcome.moved };
}

export function setSequenceStatus(
  db: Database,
  input: { id: string; status: SequenceStatus; accountId?: string; channels?: ChannelSettings },
): Promise<SequenceDto & { accountId: string }> {
  return updateSequence(db, input);
}

// The command line's sequence:list: every sequence of the account, oldest first; as the API's
// list, archived ones only when asked for by status.
export async function listSequences(db: Database, input: { accountId: string; status?: SequenceStatus }): Promise<SequenceSummary[]> {
  const [filter, values] = input.status ? ['status = ?', [input.status]] : ["status <> 'archived'", []];
  const rows = await select<SequenceRow>(
    db,
    `SELECT ${COLUMNS} FROM sequences WHERE account_id = ? AND ${filter} ORDER BY created_at, id`,
    [input.accountId, ...values],
  );
  return rows.map((row) => ({
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    status: row.status,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  }));
}

function rulesText(rules: readonly ExitRule[] | undefined): string | null {
  return rules && rules.length > 0 ? JSON.stringify(rules) : null;
}

function jsonText(value: Entry | Goal | null | undefined): string | null {
  return value ? JSON.stringify(value) : null;
}

function windowText(window: SendingWindow | null | undefined): string | null {
  return window ? JSON.stringify(window) : null;
}

function sameText(a: string | null, b: string | null): boolean {
  return a === b || (a !== null && b !== null && canonicalText(JSON.parse(a)) === canonicalText(JSON.parse(b)));
}
