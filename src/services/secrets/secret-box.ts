import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretsKey } from './secrets-key';

// Secrets at rest (SMTP URLs with their password, DKIM private keys, WhatsApp tokens):
// AES-256-GCM, a fresh 12-byte IV each time, and as associated data the place the value
// belongs to (account and field), so a ciphertext copied into another account's row, or
// another column, does not decrypt.
//
// Stored form: "v1.<key id>.<base64url(iv | ciphertext | tag)>". The version names the
// format, the key id the key: a rotation (not built yet) can keep the old key for reading,
// write with the new one, and find the rows still on the old one by their prefix.

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretUnreadableError extends Error {}

export function sealSecret(key: SecretsKey, plaintext: string, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.encryption, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}.${key.id}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
}

// Why a value cannot be read is said without the value: the message may reach a log.
export function openSecret(key: SecretsKey, stored: string, context: string): string {
  const [version, keyId, data, extra] = stored.split('.');
  if (version !== VERSION || !keyId || !data || extra !== undefined) throw new SecretUnreadableError(`a stored secret (${context}) is not in a known format`);
  if (keyId !== key.id) {
    throw new SecretUnreadableError(`a stored secret (${context}) was written with another SECRETS_KEY (key id ${keyId}; this one is ${key.id})`);
  }
  const bytes = Buffer.from(data, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretUnreadableError(`a stored secret (${context}) is truncated`);
  const decipher = createDecipheriv('aes-256-gcm', key.encryption, bytes.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretUnreadableError(`a stored secret (${context}) does not decrypt: altered, or moved from another row`);
  }
}
