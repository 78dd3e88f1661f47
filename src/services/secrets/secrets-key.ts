import { createHash, hkdfSync } from 'node:crypto';

// SECRETS_KEY: 32 random bytes, written as 64 hex characters or as base64 (docs/channels.md
// "Secrets at rest"). Anything else is refused at start: a key that decodes to other bytes than
// the operator meant would encrypt settings no other instance can read.

export const SECRETS_KEY_BYTES = 32;

export function parseSecretsKey(text: string): Buffer | null {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  // Standard or URL-safe base64, padded or not: 43 or 44 characters for 32 bytes.
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)) {
    const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === SECRETS_KEY_BYTES) return bytes;
  }
  return null;
}

export const SECRETS_KEY_FORMAT = 'must be 32 random bytes as 64 hex characters or as base64 (openssl rand -hex 32)';

// The key the service holds, with what is derived from it. Each use gets its own key through
// HKDF with a label, so the raw key encrypts settings only, and a leaked unsubscribe-link key
// (or key id) says nothing about it.
export interface SecretsKey {
  // AES-256-GCM key of the stored secrets.
  readonly encryption: Buffer;
  // A short, public name of the key, written beside each ciphertext: after a rotation the
  // service can tell which key a value was written with (docs/channels.md).
  readonly id: string;
  // HMAC-SHA256 key of one-click unsubscribe links.
  readonly unsubscribe: Buffer;
  // HMAC-SHA256 key of the bounce (VERP) and unsubscribe-mailbox addresses (src/services/bounces).
  readonly bounce: Buffer;
  // HMAC-SHA256 key of the open pixels' and tracked links' tokens (src/services/signals).
  readonly tracking: Buffer;
}

function derive(key: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), label, 32));
}

export function secretsKeyFrom(raw: Buffer): SecretsKey {
  if (raw.length !== SECRETS_KEY_BYTES) throw new Error(`SECRETS_KEY ${SECRETS_KEY_FORMAT}`);
  return {
    encryption: Buffer.from(raw),
    id: createHash('sha256').update(derive(raw, 'svc secrets key id v1')).digest('base64url').slice(0, 8),
    unsubscribe: derive(raw, 'svc unsubscribe link v1'),
    bounce: derive(raw, 'svc bounce address v1'),
    tracking: derive(raw, 'svc tracking link v1'),
  };
}
