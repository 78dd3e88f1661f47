import { testDb } from './db';

// The contacts table as stored, for tests that check what a call wrote.

export async function contactCount(accountId?: string): Promise<number> {
  const [row] = (await testDb().sequelize.query(
    `SELECT COUNT(*) AS n FROM contacts${accountId ? ' WHERE account_id = ?' : ''}`,
    { replacements: accountId ? [accountId] : [], type: 'SELECT' },
  )) as Array<{ n: number | string }>;
  return Number(row.n);
}

export interface StoredContact {
  id: string;
  email: string;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
  tags: string[];
  custom_fields: Record<string, unknown>;
  email_subscription_status: string;
  whatsapp_subscription_status: string;
}

export async function storedContacts(accountId: string): Promise<StoredContact[]> {
  const rows = (await testDb().sequelize.query(
    `SELECT id, email, phone, first_name, last_name, tags, custom_fields, email_subscription_status,
            whatsapp_subscription_status FROM contacts WHERE account_id = ? ORDER BY email_normalized`,
    { replacements: [accountId], type: 'SELECT' },
  )) as Array<Record<string, unknown>>;
  const parse = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);
  return rows.map((row) => ({ ...row, tags: parse(row.tags), custom_fields: parse(row.custom_fields) }) as StoredContact);
}
