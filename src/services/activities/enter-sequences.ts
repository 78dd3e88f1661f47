import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson, toDate } from '../../db/sql/rows';
import { forShare, forUpdate, select, upsertRows } from '../../db/sql/statements';
import type { NewEventOf } from '../../schemas/event';
import type { Entry, ExitRule } from '../../schemas/sequence-definition';
import { CONTACT_SELECT, stateFromRow, type ContactRow } from '../contacts/contact-row';
import { matchingExitRule } from '../exit-rules/exit-rules';
import type { RequiredSequence } from '../runs/required-sequence';
import { contactsWithActiveRun, runsCreatedEvents, startRuns } from '../runs/runs';
import { addDuration } from '../runs/schedule/durations';
import { readVersions, versionKey } from '../runs/sequence-versions';
import { snapshotText } from './activity-snapshot';
import { allHold } from './property-conditions';
import type { StoredActivity } from './stored-activity';

// Entry by event (docs/activities.md "Entry by event"): an activity that matches an active
// sequence's entry enrolls its contact in the activity's own transaction, so the run exists
// when the 202 answers, with every rule an enrollment has: one active run per contact (the
// unique index decides), the account's run limit, no run for a contact that already meets an
// exit rule, and the entry's `reentry`:
//   - after_exit (the default): again once the previous run has ended (the active-run rule);
//   - never: never a contact that had a run of this sequence by an activity;
//   - { after }: again once that long has passed since the previous such run started.
// The last two read sequence_entries, one row per (sequence, contact) ever entered by an
// activity, locked: a contact's activities already queue on the contact's lock, and the row
// keeps its answer when the runs' history is pruned. The API's trigger is not limited by
// reentry, and does not count as an entry.
//
// Locks in the order every enrollment takes them: the sequences (shared, before the contacts:
// entrySequences runs first), the account's run limit, the contacts (the intake's), the runs.

export interface EntrySequence extends RequiredSequence {
  entry: Entry;
}

export async function entrySequences(db: Database, accountId: string, names: readonly string[], transaction: Transaction): Promise<EntrySequence[]> {
  if (names.length === 0) return [];
  const rows = await select<{ id: string; version: number | string | null; exit_when: string | null; entry: string }>(
    db,
    `SELECT id, version, exit_when, entry FROM sequences WHERE account_id = ? AND entry_activity IN (?) AND status = 'active' ORDER BY id${forShare(db)}`,
    [accountId, [...names]],
    transaction,
  );
  if (rows.length === 0) return [];
  const wanted = rows.filter((row) => row.version !== null).map((row) => ({ sequenceId: row.id, version: Number(row.version) }));
  const versions = wanted.length > 0 ? await readVersions(db, wanted, transaction) : new Map();
  return rows.map((row) => {
    const version = row.version === null ? null : Number(row.version);
    const steps = version === null ? [] : (versions.get(versionKey(row.id, version)) ?? []);
    return {
      id: row.id,
      version,
      firstStepId: steps[0]?.id ?? null,
      exitWhen: row.exit_when ? parseJson<ExitRule[]>(row.exit_when) : [],
      entry: parseJson<Entry>(row.entry),
    };
  });
}

export async function enterSequences(
  db: Database,
  input: {
    accountId: string;
    sequences: readonly EntrySequence[];
    capacity: { remaining: number } | null;
    activities: readonly StoredActivity[];
    now: Date;
  },
  transaction: Transaction,
): Promise<{ events: NewEventOf[]; started: number; due: boolean }> {
  const { accountId, now } = input;
  // Each sequence's contacts to enroll, each by its first matching activity in request order.
  const wanted = new Map<EntrySequence, Map<string, StoredActivity>>();
  for (const sequence of input.sequences) {
    const byContact = new Map<string, StoredActivity>();
    for (const activity of input.activities) {
      if (activity.name !== sequence.entry.activity || byContact.has(activity.contactId)) continue;
      if (allHold(sequence.entry.where, activity.properties)) byContact.set(activity.contactId, activity);
    }
    if (byContact.size > 0) wanted.set(sequence, byContact);
  }
  if (wanted.size === 0) return { events: [], started: 0, due: false };
  const contacts = await contactStates(db, accountId, [...wanted].filter(([sequence]) => sequence.exitWhen.length > 0).flatMap(([, map]) => [...map.keys()]), transaction);
  let remaining = input.capacity?.remaining ?? Infinity;
  const events: NewEventOf[] = [];
  let started = 0;
  let due = false;
  for (const [sequence, byContact] of wanted) {
    const ids = [...byContact.keys()];
    const active = await contactsWithActiveRun(db, sequence.id, ids, transaction);
    const entered = await previousEntries(db, sequence, ids, transaction);
    const allowed = ids.filter((id) => {
      if (active.has(id)) return false;
      const contact = contacts.get(id);
      if (sequence.exitWhen.length > 0 && contact && matchingExitRule(sequence.exitWhen, contact) !== null) return false;
      return reentryAllows(sequence.entry, entered.get(id), now);
    });
    const taken = allowed.slice(0, Math.max(0, Math.min(allowed.length, remaining)));
    if (taken.length === 0) continue;
    const triggers = new Map(taken.map((id) => [id, snapshotText(byContact.get(id)!)]));
    const runs = await startRuns(db, { accountId, sequence, contactIds: taken, triggers }, transaction);
    remaining -= runs.size;
    started += runs.size;
    if (runs.size > 0 && sequence.firstStepId !== null) due = true;
    await recordEntries(db, sequence.id, [...runs.keys()], now, transaction);
    events.push(...runsCreatedEvents(sequence.id, runs));
  }
  return { events, started, due };
}

function reentryAllows(entry: Entry, previousStart: Date | undefined, now: Date): boolean {
  if (previousStart === undefined) return true;
  const rule = entry.reentry ?? 'after_exit';
  if (rule === 'after_exit') return true;
  if (rule === 'never') return false;
  return addDuration(previousStart, rule.after, 'UTC').getTime() <= now.getTime();
}

// The start of each contact's latest run of this sequence by an activity, locked (only the
// rules that read it read it).
async function previousEntries(db: Database, sequence: EntrySequence, contactIds: readonly string[], transaction: Transaction): Promise<Map<string, Date>> {
  const rows = await select<{ contact_id: string; last_started_at: unknown }>(
    db,
    `SELECT contact_id, last_started_at FROM sequence_entries WHERE sequence_id = ? AND contact_id IN (?)${forUpdate(db)}`,
    [sequence.id, contactIds],
    transaction,
  );
  return new Map(rows.map((row) => [row.contact_id, toDate(row.last_started_at)]));
}

async function recordEntries(db: Database, sequenceId: string, contactIds: readonly string[], now: Date, transaction: Transaction): Promise<void> {
  const rows = [...contactIds].sort().map((id) => [sequenceId, id, now]);
  await upsertRows(db, 'sequence_entries', ['sequence_id', 'contact_id', 'last_started_at'], rows, ['sequence_id', 'contact_id'], ['last_started_at'], transaction);
}

// The contacts as the intake locked them, for the exit rules (a plain read: they are ours).
async function contactStates(db: Database, accountId: string, ids: readonly string[], transaction: Transaction) {
  if (ids.length === 0) return new Map();
  const rows = await select<ContactRow>(db, `${CONTACT_SELECT} WHERE account_id = ? AND id IN (?)`, [accountId, [...new Set(ids)]], transaction);
  return new Map(rows.map((row) => [row.id, stateFromRow(row)]));
}
