import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { byIndexOrder } from '../../db/sql/key-order';
import { forUpdate, select } from '../../db/sql/statements';
import { CONTACT_SELECT, type ContactRow } from './contact-row';

// How a transaction locks contacts it knows by id: the same way, and in the same order, as
// the upsert's INSERT locks them (docs/idempotency.md "Concurrency and retries"). That INSERT locks a
// contact's entry in the (account_id, email_normalized) index first and its row second,
// contacts in email order. Locked by id instead, a row would come before its index entry (a
// delete or an email change then waits for the entry while a batch holding the entry waits
// for the row), and several contacts would come in id order: both deadlock with a batch.
//
// So the emails are read first (no lock), then the contacts locked through the index, in
// email order. A contact whose email changed in between is looked up again; one deleted in
// between is simply not there. The locks last until the transaction ends.
//
// SQLite has one writer at a time and needs no locks: one read.

// Locks the account's contacts among `ids`; returns the ids that exist.
export async function lockContactsById(
  db: Database,
  accountId: string,
  ids: readonly string[],
  transaction: Transaction,
): Promise<Set<string>> {
  const rows = await lockThroughEmailIndex<{ id: string }>(db, 'SELECT id FROM contacts', accountId, ids, transaction);
  return new Set(rows.map((row) => row.id));
}

// Locks the account's contacts among `ids`; returns their rows. `knownEmails`: the emails the
// caller read a moment ago (the engine, at its claim), tried first instead of reading them
// again; a contact whose email changed since is read and locked as any other.
export function lockContactRows(
  db: Database,
  accountId: string,
  ids: readonly string[],
  transaction: Transaction,
  knownEmails?: ReadonlyMap<string, string>,
): Promise<ContactRow[]> {
  return lockThroughEmailIndex<ContactRow>(db, CONTACT_SELECT, accountId, ids, transaction, knownEmails);
}

// Locks one contact of the account and returns its row, or undefined when there is none.
export async function lockContactRow(
  db: Database,
  input: { accountId: string; id: string },
  transaction: Transaction,
): Promise<ContactRow | undefined> {
  const [row] = await lockThroughEmailIndex<ContactRow>(db, CONTACT_SELECT, input.accountId, [input.id], transaction);
  return row;
}

async function lockThroughEmailIndex<Row extends { id: string }>(
  db: Database,
  selectFrom: string,
  accountId: string,
  ids: readonly string[],
  transaction: Transaction,
  knownEmails?: ReadonlyMap<string, string>,
): Promise<Row[]> {
  const locked = new Map<string, Row>();
  let pending = ids;
  let hinted = knownEmails !== undefined && ids.every((id) => knownEmails.has(id));
  while (pending.length > 0) {
    if (db.dialect === 'sqlite') {
      return select<Row>(db, `${selectFrom} WHERE account_id = ? AND id IN (?)`, [accountId, pending], transaction);
    }
    const found = hinted
      ? pending.map((id) => ({ id, email_normalized: knownEmails!.get(id)! }))
      : await select<{ id: string; email_normalized: string }>(
          db,
          'SELECT id, email_normalized FROM contacts WHERE account_id = ? AND id IN (?)',
          [accountId, pending],
          transaction,
        );
    hinted = false;
    if (found.length === 0) break;
    // Named: with the list indexes (account_id, ...) to choose from, the optimizer may read the
    // account's range of another one, locking rows in its order and rows of other writers.
    const rows = await select<Row>(
      db,
      `${selectFrom} FORCE INDEX (contacts_account_email_unique) WHERE account_id = ? AND email_normalized IN (?)${forUpdate(db)}`,
      [accountId, found.map((row) => row.email_normalized).sort(byIndexOrder)],
      transaction,
    );
    const wanted = new Set(found.map((row) => row.id));
    rows.filter((row) => wanted.has(row.id)).forEach((row) => locked.set(row.id, row));
    pending = found.map((row) => row.id).filter((id) => !locked.has(id));
  }
  return [...locked.values()];
}
