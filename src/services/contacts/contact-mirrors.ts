import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { syncEmailPrefixes, type EmailedContact } from './contact-email-prefixes';
import { syncContactTags, type TaggedContact } from './contact-tags';

// A contact as a write left it, with what the mirrors need to know of it before.
export type WrittenContact = TaggedContact & EmailedContact;

// contact_tags and contact_email_prefixes copy each contact's tags, email prefixes and
// timestamps, for the list walks. Every contact writer keeps both in step, in its own
// transaction, set-based.
export async function syncContactMirrors(db: Database, contacts: readonly WrittenContact[], transaction: Transaction): Promise<void> {
  await syncContactTags(db, contacts, transaction);
  await syncEmailPrefixes(db, contacts, transaction);
}
