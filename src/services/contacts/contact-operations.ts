import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { NotFoundError } from '../../errors/app-errors';
import { type ContactDto, type ContactFields, type ContactUpdate, normalizeEmail } from '../../schemas/contact';
import type { SubscriptionStatus } from '../../schemas/statuses';
import { contactDeletedEvent } from '../events/contact-events';
import { recordEvents } from '../events/record-events';
import { normalizeId } from '../ids';
import { countRunsDeletedWithContact } from '../run-status/run-status-counts';
import { assertWithinLimits, newContactState, uniqueTags } from './contact-state';
import { upsertContacts } from './upsert-contacts';
import { lockContactRow } from './lock-contacts';
import { insertContact, modifyContact } from './write-contact';

// The Contacts API's operations (docs/api.md "Contacts"), each one transaction.

export function createContact(db: Database, input: { accountId: string } & ContactFields): Promise<ContactDto> {
  const state = newContactState(input);
  assertWithinLimits(state);
  return withTransaction(db, (transaction) => insertContact(db, input.accountId, state, transaction));
}

export async function upsertContact(
  db: Database,
  input: { accountId: string } & ContactFields,
): Promise<{ contact: ContactDto; created: boolean }> {
  const outcome = await withTransaction(db, (transaction) => upsertAndRecord(db, input.accountId, [input], transaction));
  return outcome.results[0];
}

export async function batchUpsertContacts(
  db: Database,
  input: { accountId: string; contacts: ContactFields[] },
): Promise<{ total: number; inserted: number; updated: number }> {
  const outcome = await withTransaction(db, (transaction) =>
    upsertAndRecord(db, input.accountId, input.contacts, transaction),
  );
  return { total: input.contacts.length, inserted: outcome.inserted, updated: outcome.updated };
}

// One recordEvents for the whole batch: its events cost the same statements for 1 or 100.
async function upsertAndRecord(db: Database, accountId: string, items: ContactFields[], transaction: Transaction) {
  const outcome = await upsertContacts(db, accountId, items, transaction);
  await recordEvents(db, accountId, outcome.events, transaction);
  return outcome;
}

export function updateContact(
  db: Database,
  input: { accountId: string; id: string } & ContactUpdate,
): Promise<ContactDto> {
  return modifyContact(db, input, (current) => ({
    ...current,
    ...(input.email !== undefined && { email: input.email, emailNormalized: normalizeEmail(input.email) }),
    ...(input.phone !== undefined && { phone: input.phone }),
    ...(input.firstName !== undefined && { firstName: input.firstName }),
    ...(input.lastName !== undefined && { lastName: input.lastName }),
    ...(input.tags !== undefined && { tags: uniqueTags(input.tags) }),
    ...(input.customFields !== undefined && { customFields: input.customFields }),
    ...(input.emailSubscriptionStatus && { emailSubscriptionStatus: input.emailSubscriptionStatus }),
    ...(input.whatsappSubscriptionStatus && { whatsappSubscriptionStatus: input.whatsappSubscriptionStatus }),
  }));
}

export function updateSubscriptions(
  db: Database,
  input: {
    accountId: string;
    id: string;
    emailSubscriptionStatus?: SubscriptionStatus;
    whatsappSubscriptionStatus?: SubscriptionStatus;
  },
): Promise<ContactDto> {
  return modifyContact(db, input, (current) => ({
    ...current,
    emailSubscriptionStatus: input.emailSubscriptionStatus ?? current.emailSubscriptionStatus,
    whatsappSubscriptionStatus: input.whatsappSubscriptionStatus ?? current.whatsappSubscriptionStatus,
  }));
}

// A recipient's one-click unsubscribe (src/services/unsubscribe): the same write as
// updateSubscriptions, its events marked with their source.
export function unsubscribeContact(
  db: Database,
  input: { accountId: string; id: string; channel: 'email' | 'whatsapp' },
): Promise<ContactDto> {
  const field = input.channel === 'email' ? 'emailSubscriptionStatus' : 'whatsappSubscriptionStatus';
  return modifyContact(db, input, (current) => ({ ...current, [field]: 'unsubscribed' }), { source: 'unsubscribe' });
}

// New tags are appended in request order; tags already there stay where they are.
export function addTags(db: Database, input: { accountId: string; id: string; tags: string[] }): Promise<ContactDto> {
  return modifyContact(db, input, (current) => ({ ...current, tags: uniqueTags([...current.tags, ...input.tags]) }));
}

export function removeTags(
  db: Database,
  input: { accountId: string; id: string; tags: string[] },
): Promise<ContactDto> {
  const removed = new Set(input.tags);
  return modifyContact(db, input, (current) => ({ ...current, tags: current.tags.filter((t) => !removed.has(t)) }));
}

// Permanent; the contact's runs go with it (ON DELETE CASCADE). Locked first as every
// writer locks a contact: the delete removes its email index entry too.
export async function deleteContact(db: Database, input: { accountId: string; id: string }): Promise<void> {
  const id = normalizeId(input.id);
  if (!id) throw new NotFoundError('Contact');
  const deleted = await withTransaction(db, async (transaction) => {
    const row = await lockContactRow(db, { accountId: input.accountId, id }, transaction);
    if (!row) return 0;
    await countRunsDeletedWithContact(db, id, transaction);
    const deleted = await execute(db, 'DELETE FROM contacts WHERE id = ? AND account_id = ?', [id, input.accountId], transaction);
    if (deleted > 0) await recordEvents(db, input.accountId, [contactDeletedEvent(row)], transaction);
    return deleted;
  });
  if (deleted === 0) throw new NotFoundError('Contact');
}
