import { randomUUID } from 'node:crypto';
import type { Connection } from 'mysql2/promise';
import { openDatabase, type Database } from '../../src/db/database';
import { createAccount } from '../../src/services/accounts';
import { createApiKey } from '../../src/services/api-keys';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { runLoad } from './load';
import type { RunningServer } from './servers';

// A fresh account per run, made through the services; contacts seeded through the service's
// bulk path (POST /contacts/batch), as a client would.

export interface BenchAccount {
  accountId: string;
  key: string;
  // Sequences made through the services (active unless said otherwise), a few at a time.
  newSequences(count: number, status?: 'active' | 'draft'): Promise<string[]>;
  close(): Promise<void>;
}

export async function createBenchAccount(databaseUrl: string, name: string): Promise<BenchAccount> {
  const db: Database = openDatabase(databaseUrl);
  const account = await createAccount(db, { name });
  const { key } = await createApiKey(db, { accountId: account.id, name });
  return {
    accountId: account.id,
    key,
    async newSequences(count, status = 'active') {
      const ids = new Array<string>(count);
      let claimed = 0;
      const work = async () => {
        while (claimed < count) {
          const slot = claimed++;
          ids[slot] = (await createSequence(db, { accountId: account.id, name: `bench ${randomUUID()}`, status })).id;
        }
      };
      await Promise.all(Array.from({ length: Math.min(8, count) }, work));
      return ids;
    },
    close: () => db.close(),
  };
}

export interface SeedResult {
  contacts: number;
  seconds: number;
  perSecond: number;
}

// `count` contacts, emailAt(0..count-1), in batches of 100 over `connections` connections.
export async function seedContacts(
  server: RunningServer,
  key: string,
  count: number,
  emailAt: (index: number) => string,
  connections: number,
): Promise<SeedResult> {
  let next = 0;
  const batches = Math.ceil(count / 100);
  const result = await runLoad(
    {
      base: server.base,
      apiKey: key,
      method: 'POST',
      connections: Math.min(connections, batches),
      amount: batches,
      expectStatus: 201,
      next: () => {
        const from = next;
        next = Math.min(count, next + 100);
        const contacts = [];
        for (let i = from; i < next; i += 1) contacts.push(seedItem(emailAt(i)));
        return { path: '/api/v1/contacts/batch', body: JSON.stringify({ contacts }) };
      },
    },
    server.pid,
  );
  if (result.wrong > 0) throw new Error(`seeding: ${result.wrong} batches failed`);
  return { contacts: count, seconds: result.seconds, perSecond: count / result.seconds };
}

// A contact as an integration would send it: a few fields besides the email.
function seedItem(email: string) {
  return { email, firstName: 'Ada', lastName: 'Lovelace', tags: ['seed'], customFields: { plan: 'pro', score: 42 } };
}

// Ids of contacts of the account, by normalized email, through the unique index.
export async function contactIdsByEmail(admin: Connection, accountId: string, emails: readonly string[]): Promise<string[]> {
  const byEmail = new Map<string, string>();
  for (let at = 0; at < emails.length; at += 1000) {
    const chunk = emails.slice(at, at + 1000);
    const [rows] = await admin.query('SELECT id, email_normalized FROM contacts WHERE account_id = ? AND email_normalized IN (?)', [
      accountId,
      chunk,
    ]);
    for (const row of rows as Array<{ id: string; email_normalized: string }>) byEmail.set(row.email_normalized, row.id);
  }
  return emails.map((email) => {
    const id = byEmail.get(email);
    if (!id) throw new Error(`seeded contact ${email} is missing`);
    return id;
  });
}
