import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../db/database';
import type { AuthenticationCode } from '../errors/app-errors';
import { execute, select } from '../db/sql/statements';
import { toDate } from '../db/sql/rows';
import { Account, ApiKey } from '../models';
import type { ApiKeyKind } from '../schemas/statuses';
import { withTransaction } from '../db/sql/transaction';
import { NotFoundError } from '../errors/app-errors';

// API keys: "svc_" + 40 lower-case hex characters from a CSPRNG. Only the SHA-256 of the key is
// stored, with its first 8 characters for display. The key is shown once, at creation.

const KEY_FORMAT = /^svc_[0-9a-f]{40}$/;

export function generateApiKey(): string {
  return `svc_${randomBytes(20).toString('hex')}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
  kind: ApiKeyKind;
}

export type ApiKeyFailure = Extract<AuthenticationCode, 'missing_api_key' | 'invalid_api_key' | 'api_key_inactive' | 'api_key_expired'>;
export type AuthResult = { ok: true; key: AuthenticatedKey } | { ok: false; code: ApiKeyFailure };

interface KeyRow {
  id: string;
  account_id: string;
  kind: ApiKeyKind;
  active: unknown;
  expires_at: unknown;
  last_used_at: unknown;
}

// last_used_at is a convenience for people, not an audit log: writing it at most once a minute
// per key keeps a write off every request.
const LAST_USED_GRANULARITY_MS = 60_000;

export async function authenticateApiKey(
  db: Database,
  header: string | undefined,
  now = new Date(),
): Promise<AuthResult> {
  if (header === undefined || header === '') return { ok: false, code: 'missing_api_key' };
  if (!KEY_FORMAT.test(header)) return { ok: false, code: 'invalid_api_key' };
  const [row] = await select<KeyRow>(
    db,
    'SELECT id, account_id, kind, active, expires_at, last_used_at FROM api_keys WHERE key_hash = ?',
    [hashApiKey(header)],
  );
  if (!row) return { ok: false, code: 'invalid_api_key' };
  if (!Number(row.active)) return { ok: false, code: 'api_key_inactive' };
  if (row.expires_at !== null && toDate(row.expires_at) <= now) return { ok: false, code: 'api_key_expired' };
  const lastUsed = row.last_used_at === null ? 0 : toDate(row.last_used_at).getTime();
  if (now.getTime() - lastUsed >= LAST_USED_GRANULARITY_MS) {
    // The request does not wait for bookkeeping; a failure only loses a timestamp.
    db.inBackground(
      withTransaction(db, (transaction) =>
        execute(db, 'UPDATE api_keys SET last_used_at = ?, updated_at = ? WHERE id = ?', [now, now, row.id], transaction),
      ),
    );
  }
  return { ok: true, key: { keyId: row.id, accountId: row.account_id, kind: row.kind } };
}

export interface ApiKeySummary {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  kind: ApiKeyKind;
  active: boolean;
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

function summarize(key: ApiKey): ApiKeySummary {
  return {
    id: key.id,
    accountId: key.accountId,
    name: key.name,
    prefix: key.keyPrefix,
    kind: key.kind,
    active: Boolean(key.active),
    expiresAt: key.expiresAt ? key.expiresAt.toISOString() : null,
    lastUsedAt: key.lastUsedAt ? key.lastUsedAt.toISOString() : null,
    createdAt: key.createdAt.toISOString(),
  };
}

export async function createApiKey(
  db: Database,
  input: { accountId: string; name: string; kind?: ApiKeyKind; expiresAt?: Date | null },
): Promise<ApiKeySummary & { key: string }> {
  const key = generateApiKey();
  const created = await withTransaction(db, async (transaction) => {
    // An unknown account is the caller's mistake (404), not a foreign-key failure (500).
    const account = await Account.findByPk(input.accountId, { transaction });
    if (!account) throw new NotFoundError('Account');
    return ApiKey.create(
      {
        accountId: input.accountId,
        name: input.name,
        keyHash: hashApiKey(key),
        keyPrefix: key.slice(0, 8),
        kind: input.kind ?? 'integration',
        active: true,
        expiresAt: input.expiresAt ?? null,
      },
      { transaction },
    );
  });
  return { ...summarize(created), key };
}

// accountId given (the dashboard): another account's key is not found, as if it did not exist.
export async function setApiKeyActive(
  db: Database,
  input: { id: string; active: boolean; accountId?: string },
): Promise<ApiKeySummary> {
  return withTransaction(db, async (transaction) => {
    const key = await ApiKey.findByPk(input.id, { transaction });
    if (!key || (input.accountId !== undefined && key.accountId !== input.accountId)) throw new NotFoundError('API key');
    key.active = input.active;
    await key.save({ transaction });
    return summarize(key);
  });
}

export async function listApiKeys(db: Database, input: { accountId: string }): Promise<ApiKeySummary[]> {
  const keys = await ApiKey.findAll({ where: { accountId: input.accountId }, order: [['createdAt', 'ASC']] });
  return keys.map(summarize);
}
