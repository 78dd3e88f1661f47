import { createAccount } from '../../src/services/accounts';
import { createApiKey, setApiKeyActive } from '../../src/services/api-keys';
import { createContact } from '../../src/services/contacts/contact-operations';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import type { ApiKeyKind } from '../../src/schemas/statuses';
import type { SequenceStatus } from '../../src/schemas/statuses';
import type { ContactFields } from '../../src/schemas/contact';
import { testDb } from './db';

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter += 1)}`;

export async function buildAccount(options: { maxActiveRuns?: number | null; name?: string } = {}) {
  return createAccount(testDb(), { name: options.name ?? `Account ${unique()}`, maxActiveRuns: options.maxActiveRuns ?? null });
}

export async function buildApiKey(
  accountId: string,
  options: { active?: boolean; expiresAt?: Date | null; name?: string; kind?: ApiKeyKind } = {},
) {
  const key = await createApiKey(testDb(), {
    accountId,
    name: options.name ?? 'test key',
    kind: options.kind,
    expiresAt: options.expiresAt,
  });
  if (options.active === false) await setApiKeyActive(testDb(), { id: key.id, active: false });
  return key;
}

// An account with a working key (an integration key unless kind says otherwise): the usual
// start of a test.
export async function buildTenant(options: { maxActiveRuns?: number | null; kind?: ApiKeyKind } = {}) {
  const account = await buildAccount({ maxActiveRuns: options.maxActiveRuns });
  const apiKey = await buildApiKey(account.id, { kind: options.kind });
  return { account, accountId: account.id, key: apiKey.key, keyId: apiKey.id };
}

export async function buildContact(accountId: string, fields: Partial<ContactFields> = {}) {
  return createContact(testDb(), { accountId, email: `contact-${unique()}@example.com`, ...fields });
}

export async function buildSequence(accountId: string, status: SequenceStatus = 'active') {
  return createSequence(testDb(), { accountId, name: `Sequence ${unique()}`, status });
}
