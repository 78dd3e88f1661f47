import { isDeepStrictEqual } from 'node:util';
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { byIndexOrder } from '../../db/sql/key-order';
import { parseJson, toDate, toIso } from '../../db/sql/rows';
import { insertIgnoringConflicts, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { ACTIVITY_CONFLICT, ConflictError, NotFoundError, ValidationError, type IssueDetail } from '../../errors/app-errors';
import type { ActivityInput } from '../../schemas/activity';
import { normalizeEmail } from '../../schemas/contact';
import { lockContactsById } from '../contacts/lock-contacts';
import { upsertContacts } from '../contacts/upsert-contacts';
import { recordEvents } from '../events/record-events';
import { newRowId, normalizeId } from '../ids';
import { onceForKey, type IdempotencyScope } from '../idempotency/key-in-transaction';
import { ACTIVITY_COLUMNS, type ActivityRow } from './activity-rows';
import type { ActivitySettings } from './activity-settings';
import { occurredAtProblem } from './occurred-at';
import { notifyDueWork } from '../runs/due-work';
import { remainingRunCapacity } from '../runs/runs';
import { enterSequences, entrySequences } from './enter-sequences';
import { matchWaits } from './match-waits';
import { meetGoals } from './meet-goals';
import type { StoredActivity } from './stored-activity';

// The intake of POST /activities and /activities/batch (docs/activities.md), set-based: one
// transaction of a handful of statements whatever the number of items.
//   1. Contacts named by id: locked through the email index (lockContactsById); one missing is
//      a 404 (a 400 naming the item in a batch), before anything is written.
//   2. Contacts named by email: upserted as the trigger's contact is (upsertContacts: created
//      when new, left as they are when not), in one set.
//   3. The activities: one multi-row INSERT that leaves alone any (account, id) already stored,
//      rows in id order (the unique index's own, so concurrent batches queue, not deadlock).
//      The database decides which of two concurrent posts of an id stores it: never a read first.
//   4. One SELECT of every id: a row carrying the row_id this request proposed is one it stored;
//      any other is an earlier activity, a duplicate when its name and properties are the same,
//      a 409 activity_conflict (everything rolled back) when not.
//   5. The contacts' events (contact.created), as the trigger records them. An activity itself
//      puts nothing in the events feed.
// With an Idempotency-Key, the outcome commits with the rows (docs/idempotency.md "Exactly once").

export interface RecordedActivity {
  id: string;
  contactId: string;
  name: string;
  occurredAt: string;
  duplicate: boolean;
}

interface Item {
  id: string;
  contact: { email?: string; id?: string };
  name: string;
  // As it is stored and compared: JSON's own form (what JSON.stringify keeps of it).
  properties: Record<string, unknown>;
  text: string;
  occurredAt: Date;
  // The item's place in the request, as its errors name it: `activities.3.` or ''.
  at: string;
  // An earlier item of the same batch with this id and the same name and properties.
  sameAs?: number;
}

export async function recordActivities(
  db: Database,
  input: { accountId: string; activities: readonly ActivityInput[]; batch: boolean; idempotency?: IdempotencyScope },
  settings: ActivitySettings,
): Promise<RecordedActivity[]> {
  const now = settings.now();
  const items = prepare(input.activities, input.batch, now, settings);
  const stored = await withTransaction(db, (transaction) =>
    onceForKey(db, input.idempotency, transaction, () => store(db, input.accountId, items, now, transaction)),
  );
  // Runs it enrolled or moved on: the engine looks now, not at its next due time.
  if (stored.due) notifyDueWork();
  return stored.activities;
}

// Everything that can be refused without the database, refused before it: occurredAt's bounds,
// and two items of one batch with one id that differ.
function prepare(activities: readonly ActivityInput[], batch: boolean, now: Date, settings: ActivitySettings): Item[] {
  const problems: IssueDetail[] = [];
  const firstWithId = new Map<string, number>();
  const items = activities.map((activity, index): Item => {
    const at = batch ? `activities.${index}.` : '';
    const occurredAt = activity.occurredAt === undefined ? now : new Date(activity.occurredAt);
    const problem = activity.occurredAt === undefined ? null : occurredAtProblem(occurredAt, now, settings);
    if (problem) problems.push({ path: `${at}occurredAt`, message: problem });
    const text = JSON.stringify(activity.properties ?? {});
    return {
      id: activity.id ?? newRowId(),
      contact: activity.contact,
      name: activity.name,
      properties: JSON.parse(text) as Record<string, unknown>,
      text,
      occurredAt,
      at,
    };
  });
  if (problems.length > 0) throw new ValidationError(`${problems[0]!.path}: ${problems[0]!.message}`, problems);
  items.forEach((item, index) => {
    const first = firstWithId.get(item.id);
    if (first === undefined) return void firstWithId.set(item.id, index);
    if (!sameActivity(items[first]!, item)) {
      const message = `${ACTIVITY_CONFLICT} (activities.${first} has this id)`;
      throw new ConflictError(`${item.at}id: ${message}`, 'activity_conflict', [{ path: `${item.at}id`, message }]);
    }
    item.sameAs = first;
  });
  return items;
}

function sameActivity(a: { name: string; properties: unknown }, b: { name: string; properties: unknown }): boolean {
  return a.name === b.name && isDeepStrictEqual(a.properties, b.properties);
}

async function store(
  db: Database,
  accountId: string,
  items: Item[],
  receivedAt: Date,
  transaction: Transaction,
): Promise<{ activities: RecordedActivity[]; due: boolean }> {
  // The sequences these names enroll in, and the run limit, before the contacts: the lock
  // order of every enrollment (enter-sequences.ts).
  const entries = await entrySequences(db, accountId, [...new Set(items.map((item) => item.name))], transaction);
  const capacity = entries.length > 0 ? await remainingRunCapacity(db, accountId, transaction) : null;
  const contactIds = await resolveContacts(db, accountId, items, transaction);
  const firsts = items.filter((item) => item.sameAs === undefined);
  const proposed = new Map(firsts.map((item) => [item.id, newRowId()]));
  const rows = [...firsts]
    .sort((a, b) => byIndexOrder(a.id, b.id))
    .map((item) => [proposed.get(item.id)!, accountId, item.id, contactIds.contactOf(item), item.name, item.text, item.occurredAt, receivedAt]);
  await insertIgnoringConflicts(db, 'activities', ACTIVITY_COLUMNS, rows, transaction);
  const stored = await select<ActivityRow>(
    db,
    'SELECT row_id, id, contact_id, name, properties, occurred_at, received_at FROM activities WHERE account_id = ? AND id IN (?)',
    [accountId, [...proposed.keys()]],
    transaction,
  );
  const byId = new Map(stored.map((row) => [row.id, row]));
  const results = items.map((item): RecordedActivity => {
    const row = byId.get(item.id)!;
    const ours = row.row_id === proposed.get(item.id);
    if (!ours && !sameActivity(item, { name: row.name, properties: parseJson(row.properties) })) {
      throw new ConflictError(`${item.at}id: ${ACTIVITY_CONFLICT}`, 'activity_conflict', [{ path: `${item.at}id`, message: ACTIVITY_CONFLICT }]);
    }
    return {
      id: row.id,
      contactId: row.contact_id,
      name: row.name,
      occurredAt: toIso(toDate(row.occurred_at)),
      duplicate: !ours || item.sameAs !== undefined,
    };
  });
  // What the new activities do to the sequences (a duplicate does nothing again): the waits
  // they match, the goals they meet, the sequences they enroll in, in this transaction.
  const fresh = items.flatMap((item, index): StoredActivity[] => {
    const result = results[index]!;
    if (result.duplicate) return [];
    return [{ id: result.id, contactId: result.contactId, name: item.name, properties: item.properties, occurredAt: result.occurredAt, occurredAtDate: item.occurredAt }];
  });
  const moved = await matchWaits(db, accountId, fresh, receivedAt, transaction);
  const converted = await meetGoals(db, accountId, fresh, receivedAt, transaction);
  const entered = await enterSequences(db, { accountId, sequences: entries, capacity, activities: fresh, now: receivedAt }, transaction);
  await recordEvents(db, accountId, [...contactIds.events, ...converted, ...entered.events], transaction);
  return { activities: results, due: moved > 0 || entered.due };
}

// Each item's contact id: by id (locked, must exist), or by email (upserted).
async function resolveContacts(db: Database, accountId: string, items: Item[], transaction: Transaction) {
  const byId = items.filter((item) => item.contact.id !== undefined);
  if (byId.length > 0) {
    const wanted = [...new Set(byId.map((item) => normalizeId(item.contact.id!)).filter((id): id is string => id !== null))];
    const found = wanted.length > 0 ? await lockContactsById(db, accountId, wanted, transaction) : new Set<string>();
    const missing = byId.filter((item) => !found.has(normalizeId(item.contact.id!) ?? ''));
    if (missing.length > 0 && missing[0]!.at === '') throw new NotFoundError('Contact');
    if (missing.length > 0) {
      const details = missing.map((item) => ({ path: `${item.at}contact.id`, message: 'Contact not found' }));
      throw new ValidationError(`${details[0]!.path}: ${details[0]!.message}`, details);
    }
  }
  // A new contact keeps the email as its first item spelt it.
  const spelt = new Map<string, string>();
  for (const item of items) if (item.contact.email !== undefined && !spelt.has(normalizeEmail(item.contact.email))) spelt.set(normalizeEmail(item.contact.email), item.contact.email);
  const emails = [...spelt.keys()];
  const upserted = emails.length > 0 ? await upsertContacts(db, accountId, emails.map((email) => ({ email: spelt.get(email)! })), transaction) : undefined;
  const idOfEmail = new Map(emails.map((email, index) => [email, upserted!.results[index]!.contact.id]));
  return {
    contactOf: (item: Item) =>
      item.contact.id !== undefined ? normalizeId(item.contact.id)! : idOfEmail.get(normalizeEmail(item.contact.email!))!,
    events: upserted?.events ?? [],
  };
}
