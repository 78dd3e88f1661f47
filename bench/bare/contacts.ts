import { v7 as uuidv7 } from 'uuid';
import { byIndexOrder } from '../../src/db/sql/key-order';
import { type ContactDto, type ContactFields, normalizeEmail } from '../../src/schemas/contact';
import { isStorableText } from '../../src/schemas/text';
import {
  CONTACT_COLUMNS,
  CONTACT_SELECT,
  contactFromRow,
  rowValues,
  stateFromRow,
  toContactDto,
  type ContactRow,
} from '../../src/services/contacts/contact-row';
import { applyUpsert, assertWithinLimits, sameState, type ContactState } from '../../src/services/contacts/contact-state';
import type { NewEvent } from '../../src/services/events/record-events';
import { contactChangeEvents } from '../../src/services/events/contact-events';
import type { TaggedContact } from '../../src/services/contacts/contact-tags';
import type { EmailedContact } from '../../src/services/contacts/contact-email-prefixes';
import { syncEmailPrefixes } from './contact-email-prefixes';
import { syncContactTags } from './contact-tags';
import { recordEvents } from './events';
import { HttpError } from './http-error';
import { errno, marks, sqlTimestamp, type Sql, type Tx } from './sql';

// The contact operations of src/services/contacts, statement for statement, on bare mysql2.
// The pure rules (merge, limits) and the row layout are the service's own modules: the same
// work, without the ORM and the RPC layers around it.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function normalizeId(id: string): string | null {
  return UUID.test(id) ? id.toLowerCase() : null;
}

const contactNotFound = () => new HttpError(404, 'Contact not found');
const EMAIL_TAKEN = 'A contact with this email already exists';

const COLUMN_LIST = CONTACT_COLUMNS.join(', ');
const ROW_MARKS = `(${marks(CONTACT_COLUMNS.length)})`;

// rowValues() with its dates bound as the service binds them.
function bindRow(id: string, accountId: string, state: ContactState, createdAt: Date, updatedAt: Date): unknown[] {
  const values = rowValues(id, accountId, state, createdAt, updatedAt);
  return values.map((value) => (value instanceof Date ? sqlTimestamp(value) : value));
}

export async function getContact(sql: Sql, accountId: string, id: string): Promise<ContactDto> {
  return contactFromRow(await findContactRow(sql, accountId, id));
}

export async function findContactRow(sql: Sql, accountId: string, rawId: string, tx?: Tx): Promise<ContactRow> {
  const id = normalizeId(rawId);
  if (!id) throw contactNotFound();
  const lock = tx ? ' FOR UPDATE' : '';
  const [row] = await sql.rows<ContactRow>(`${CONTACT_SELECT} WHERE id = ? AND account_id = ?${lock}`, [id, accountId], tx);
  if (!row) throw contactNotFound();
  return row;
}

// src/services/contacts/lock-contacts.ts: the emails read first, then the contacts locked
// through the (account_id, email_normalized) index in its order; one whose email changed in
// between is looked up again.
export async function lockContactsById(sql: Sql, accountId: string, ids: readonly string[], tx: Tx): Promise<Set<string>> {
  const locked = new Set<string>();
  let pending = ids;
  while (pending.length > 0) {
    const found = await sql.rows<{ id: string; email_normalized: string }>(
      `SELECT id, email_normalized FROM contacts WHERE account_id = ? AND id IN (${marks(pending.length)})`,
      [accountId, ...pending],
      tx,
    );
    if (found.length === 0) break;
    const emails = found.map((row) => row.email_normalized).sort(byIndexOrder);
    const rows = await sql.rows<{ id: string }>(
      `SELECT id FROM contacts FORCE INDEX (contacts_account_email_unique) WHERE account_id = ? AND email_normalized IN (${marks(emails.length)}) FOR UPDATE`,
      [accountId, ...emails],
      tx,
    );
    const wanted = new Set(found.map((row) => row.id));
    rows.filter((row) => wanted.has(row.id)).forEach((row) => locked.add(row.id));
    pending = found.map((row) => row.id).filter((id) => !locked.has(id));
  }
  return locked;
}

export async function getContactByEmail(sql: Sql, accountId: string, email: string): Promise<ContactDto> {
  if (!isStorableText(email)) throw contactNotFound();
  const [row] = await sql.rows<ContactRow>(`${CONTACT_SELECT} WHERE account_id = ? AND email_normalized = ?`, [
    accountId,
    normalizeEmail(email),
  ]);
  if (!row) throw contactNotFound();
  return contactFromRow(row);
}

export async function createContact(sql: Sql, accountId: string, state: ContactState): Promise<ContactDto> {
  const id = uuidv7();
  const now = new Date();
  const contact = toContactDto(id, state, now, now);
  try {
    await sql.transaction(async (tx) => {
      await sql.run(`INSERT INTO contacts (${COLUMN_LIST}) VALUES ${ROW_MARKS}`, bindRow(id, accountId, state, now, now), tx);
      await syncContactTags(sql, [{ id, accountId, tags: state.tags, previousTags: null, createdAt: now, updatedAt: now }], tx);
      await syncEmailPrefixes(sql, [{ id, accountId, email: state.emailNormalized, previousEmail: null, createdAt: now, updatedAt: now }], tx);
      await recordEvents(sql, tx, accountId, contactChangeEvents(null, contact));
    });
  } catch (error) {
    if (errno(error) === 1062) throw new HttpError(409, EMAIL_TAKEN, undefined, 'contact_exists');
    throw error;
  }
  return contact;
}

const UPDATED_ON_UPSERT = [
  'phone',
  'first_name',
  'last_name',
  'tags',
  'custom_fields',
  'email_subscription_status',
  'whatsapp_subscription_status',
  'updated_at',
];
const ON_DUPLICATE_UPDATE = ` ON DUPLICATE KEY UPDATE ${UPDATED_ON_UPSERT.map((c) => `${c} = VALUES(${c})`).join(', ')}`;

export interface UpsertOutcome {
  results: Array<{ contact: ContactDto; created: boolean }>;
  inserted: number;
  updated: number;
  events: NewEvent[];
}

// src/services/contacts/upsert-contacts.ts: INSERT ... ON DUPLICATE KEY UPDATE id = id (rows
// in index order), the rows read back (already locked by the INSERT), then one multi-row
// upsert of those that changed, and the tag mirror; the caller records the events.
export async function upsertContacts(
  sql: Sql,
  accountId: string,
  items: readonly ContactFields[],
  tx: Tx,
): Promise<UpsertOutcome> {
  const now = new Date();
  const byEmail = new Map<string, Array<{ index: number; fields: ContactFields }>>();
  items.forEach((fields, index) => {
    const email = normalizeEmail(fields.email);
    const group = byEmail.get(email) ?? [];
    group.push({ index, fields });
    byEmail.set(email, group);
  });
  const emails = [...byEmail.keys()].sort(byIndexOrder);
  const proposedIds = new Map(emails.map((email) => [email, uuidv7()]));
  const freshStates = new Map(emails.map((email) => [email, foldItems(null, byEmail.get(email)!)]));

  await sql.run(
    `INSERT INTO contacts (${COLUMN_LIST}) VALUES ${emails.map(() => ROW_MARKS).join(', ')} ON DUPLICATE KEY UPDATE id = id`,
    emails.flatMap((email) => bindRow(proposedIds.get(email)!, accountId, freshStates.get(email)!.final, now, now)),
    tx,
  );
  const rows = await sql.rows<ContactRow>(
    `${CONTACT_SELECT} WHERE account_id = ? AND email_normalized IN (${marks(emails.length)})`,
    [accountId, ...emails],
    tx,
  );
  const rowByEmail = new Map(rows.map((row) => [row.email_normalized, row]));
  const changedAt = new Date();

  const results: UpsertOutcome['results'] = new Array(items.length);
  const toUpdate: unknown[][] = [];
  const written: TaggedContact[] = [];
  const emailed: EmailedContact[] = [];
  const events: NewEvent[] = [];
  let inserted = 0;
  for (const email of emails) {
    const row = rowByEmail.get(email);
    if (!row) throw new Error(`upsert lost the row for an email of account ${accountId}`);
    const created = row.id === proposedIds.get(email);
    const current = created ? null : stateFromRow(row);
    const folded = current ? foldItems(current, byEmail.get(email)!) : freshStates.get(email)!;
    const changed = !current || !sameState(current, folded.final);
    const createdAt = created ? now : row.created_at;
    const updatedAt = created ? now : changed ? changedAt : row.updated_at;
    if (created) inserted += 1;
    else if (changed) toUpdate.push(bindRow(row.id, accountId, folded.final, changedAt, changedAt));
    if (changed) {
      written.push({ id: row.id, accountId, tags: folded.final.tags, previousTags: current?.tags ?? null, createdAt, updatedAt: created ? now : changedAt });
      emailed.push({ id: row.id, accountId, email, previousEmail: current ? email : null, createdAt, updatedAt: created ? now : changedAt });
      events.push(...contactChangeEvents(current, toContactDto(row.id, folded.final, createdAt, updatedAt)));
    }
    folded.steps.forEach(({ index, state }, step) => {
      assertWithinLimits(state, items.length > 1 ? `contacts.${index}.` : '');
      results[index] = { contact: toContactDto(row.id, state, createdAt, updatedAt), created: created && step === 0 };
    });
  }

  if (toUpdate.length > 0) {
    await sql.run(
      `INSERT INTO contacts (${COLUMN_LIST}) VALUES ${toUpdate.map(() => ROW_MARKS).join(', ')}${ON_DUPLICATE_UPDATE}`,
      toUpdate.flat(),
      tx,
    );
  }
  await syncContactTags(sql, written, tx);
  await syncEmailPrefixes(sql, emailed, tx);
  return { results, inserted, updated: items.length - inserted, events };
}

function foldItems(start: ContactState | null, group: Array<{ index: number; fields: ContactFields }>) {
  const steps: Array<{ index: number; state: ContactState }> = [];
  let state = start;
  for (const { index, fields } of group) {
    state = applyUpsert(state, fields);
    steps.push({ index, state });
  }
  return { steps, final: state! };
}
