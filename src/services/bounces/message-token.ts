import { createHmac, timingSafeEqual } from 'node:crypto';

// The token in a message's bounce (VERP) address and unsubscribe mailbox
// (docs/channels.md "The bounce domain and the listener"): which message, and for what,
// signed with HMAC-SHA256 under a key derived from SECRETS_KEY (secrets-key.ts `bounce`).
//   purpose (1) | the message's row id, a UUID (16) | HMAC-SHA256 of both, first 10 bytes
// 27 bytes, 44 characters of base32, lower case. Why this shape:
// - The row id, not the message key: a key is `run_<run id>_<step id>_<visit>`, up to some 110
//   characters, and a local part holds at most 64 (RFC 5321 4.5.3.1.1). `bounce+` and the
//   token are 51; the account is the message's, never the report's.
// - Base32, not base64: a local part is case-sensitive on paper only; relays and mailbox
//   providers fold it to lower case often enough that a case-sensitive token would be lost.
// - 80 bits of MAC: a forger must send a mail per guess, and each is refused at RCPT.
// - The purpose byte keeps a bounce address from being used as an unsubscribe mailbox (the
//   bounce address is in every delivered message's Return-Path).

export type TokenPurpose = 'bounce' | 'unsubscribe';
const PURPOSE_BYTE: Record<TokenPurpose, number> = { bounce: 1, unsubscribe: 2 };
const MAC_BYTES = 10;
const BODY_BYTES = 1 + 16;
export const MESSAGE_TOKEN_LENGTH = 44;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

const mac = (key: Buffer, body: Buffer) => createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);

export function signMessageToken(key: Buffer, purpose: TokenPurpose, messageId: string): string {
  if (!UUID.test(messageId)) throw new Error('message tokens name messages by UUID');
  const body = Buffer.concat([Buffer.from([PURPOSE_BYTE[purpose]]), Buffer.from(messageId.replace(/-/g, ''), 'hex')]);
  return base32(Buffer.concat([body, mac(key, body)]));
}

// The message id, or null for anything this key did not sign for this purpose.
export function verifyMessageToken(key: Buffer, purpose: TokenPurpose, token: string): string | null {
  const bytes = unbase32(token.toLowerCase());
  if (!bytes || bytes.length !== BODY_BYTES + MAC_BYTES || bytes[0] !== PURPOSE_BYTE[purpose]) return null;
  const body = bytes.subarray(0, BODY_BYTES);
  if (!timingSafeEqual(bytes.subarray(BODY_BYTES), mac(key, body))) return null;
  const hex = body.subarray(1).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// RFC 4648 base32, lower case, no padding.
function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

function unbase32(text: string): Buffer | null {
  if (text.length !== MESSAGE_TOKEN_LENGTH) return null;
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text) {
    const index = ALPHABET.indexOf(char);
    if (index < 0) return null;
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}
