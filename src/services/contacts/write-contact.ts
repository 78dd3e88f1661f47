import { UniqueConstraintError, type Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, insertRows } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { ConflictError, NotFoundError } from '../../errors/app-errors';
import type { ContactDto } from '../../schemas/contact';
import type { ContactChangeSource } from '../../schemas/event';
import { contactChangeEvents } from '../events/contact-events';
import { recordEvents } from '../events/record-events';
import { cancelRunsOnExit } from '../exit-rules/cancel-on-exit';
import { newRowId, normalizeId } from '../ids';
import { CONTACT_COLUMNS, rowValues, stateFromRow, toContactDto } from './contact-row';
import { assertWithinLimits, sameState, type ContactState } from './contact-state';
import { syncContactMirrors } from './contact-mirrors';
import { lockContactRow } from './lock-contacts';

const EMAIL_TAKEN = 'A contact with this email already exists';

export async function insertContact(
  db: Database,
  accountId: string,
  state: ContactState,
  transaction: Transaction,
): Promise<ContactDto> {
  const id = newRowId();
  const now = new Date();
  try {
    await insertRows(db, 'contacts', CONTACT_COLUMNS, [rowValues(id, accountId, state, now, now)], transaction);
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw new ConflictError(EMAIL_TAKEN, 'contact_exists');
    throw error;
  }
  await syncContactMirrors(
    db,
    [{ id, accountId, tags: state.tags, previousTags: null, email: state.emailNormalized, previousEmail: null, createdAt: now, updatedAt: now }],
    transaction,
  );
  const contact = toContactDto(id, state, now, now);
  await recordEvents(db, accountId, contactChangeEvents(null, contact), transaction);
  return contact;
}

const UPDATABLE = [
  ['email', (s: ContactState) => s.email],
  ['email_normalized', (s: ContactState) => s.emailNormalized],
  ['phone', (s: ContactState) => s.phone],
  ['first_name', (s: ContactState) => s.firstName],
  ['last_name', (s: ContactState) => s.lastName],
  ['tags', (s: ContactState) => JSON.stringify(s.tags)],
  ['custom_fields', (s: ContactState) => JSON.stringify(s.customFields)],
  ['email_subscription_status', (s: ContactState) => s.emailSubscriptionStatus],
  ['whatsapp_subscription_status', (s: ContactState) => s.whatsappSubscriptionStatus],
] as const;

// Read-modify-write of one contact: the contact is locked while `change` computes its new
// state, so concurrent writers to one contact queue instead of losing updates. A change that
// changes nothing writes nothing and records no event. options.source: where the change came
// from, when not from an API write; its events carry it.
export function modifyContact(
  db: Database,
  input: { accountId: string; id: string },
  change: (current: ContactState) => ContactState,
  options: { source?: ContactChangeSource } = {},
): Promise<ContactDto> {
  const id = normalizeId(input.id);
  if (!id) return Promise.reject(new NotFoundError('Contact'));
  return withTransaction(db, async (transaction) => {
    const row = await lockContactRow(db, { accountId: input.accountId, id }, transaction);
    if (!row) throw new NotFoundError('Contact');
    const current = stateFromRow(row);
    const next = change(current);
    assertWithinLimits(next);
    if (sameState(current, next)) return toContactDto(row.id, current, row.created_at, row.updated_at);
    const now = new Date();
    try {
      await execute(
        db,
        `UPDATE contacts SET ${UPDATABLE.map(([column]) => `${column} = ?`).join(', ')}, updated_at = ? WHERE id = ?`,
        [...UPDATABLE.map(([, read]) => read(next)), now, row.id],
        transaction,
      );
    } catch (error) {
      if (error instanceof UniqueConstraintError) throw new ConflictError(EMAIL_TAKEN, 'contact_exists');
      throw error;
    }
    // Every change moves updated_at, which the mirrors carry too.
    await syncContactMirrors(
      db,
      [
        {
          id: row.id,
          accountId: input.accountId,
          tags: next.tags,
          previousTags: current.tags,
          email: next.emailNormalized,
          previousEmail: current.emailNormalized,
          createdAt: row.created_at,
          updatedAt: now,
        },
      ],
      transaction,
    );
    const contact = toContactDto(row.id, next, row.created_at, now);
    // A change that meets a sequence's exit rule cancels its run with it (docs/sequences.md).
    const exits = await cancelRunsOnExit(db, input.accountId, [{ id: row.id, before: current, after: next }], transaction);
    await recordEvents(db, input.accountId, [...contactChangeEvents(current, contact, options.source), ...exits], transaction);
    return contact;
  });
}
