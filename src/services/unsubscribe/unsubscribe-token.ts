import { createHmac, timingSafeEqual } from 'node:crypto';

// The token of a one-click unsubscribe link (RFC 8058): which account, contact and channel,
// signed with HMAC-SHA256 under a key derived from SECRETS_KEY (secrets-key.ts), never the key
// itself. 50 bytes, 67 characters of base64url:
//   version (1) | account id (16) | contact id (16) | channel (1) | HMAC-SHA256, first 16 bytes
// It does not expire: an unsubscribe link must work as long as the email that carries it is
// read (RFC 8058 asks the link to keep working, and the law of most places to honour it).

export const UNSUBSCRIBE_CHANNELS = ['email', 'whatsapp'] as const;
export type UnsubscribeChannel = (typeof UNSUBSCRIBE_CHANNELS)[number];

export interface UnsubscribeTarget {
  accountId: string;
  contactId: string;
  channel: UnsubscribeChannel;
}

const VERSION = 1;
const MAC_BYTES = 16;
const BODY_BYTES = 1 + 16 + 16 + 1;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidText = (bytes: Buffer) => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
const mac = (key: Buffer, body: Buffer) => createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);

export function signUnsubscribeToken(key: Buffer, target: UnsubscribeTarget): string {
  if (!UUID.test(target.accountId) || !UUID.test(target.contactId)) throw new Error('unsubscribe tokens name accounts and contacts by UUID');
  const body = Buffer.concat([
    Buffer.from([VERSION]),
    uuidBytes(target.accountId),
    uuidBytes(target.contactId),
    Buffer.from([UNSUBSCRIBE_CHANNELS.indexOf(target.channel)]),
  ]);
  return Buffer.concat([body, mac(key, body)]).toString('base64url');
}

// Null for anything this key did not sign, whatever is wrong with it: the caller answers the
// same 404 in every case.
export function verifyUnsubscribeToken(key: Buffer, token: string): UnsubscribeTarget | null {
  if (!/^[A-Za-z0-9_-]{67}$/.test(token)) return null;
  const bytes = Buffer.from(token, 'base64url');
  // The 67th character carries 2 bits that decode to nothing: without this check four
  // spellings of a link would verify, and an altered link could still be a valid one.
  if (bytes.toString('base64url') !== token) return null;
  if (bytes.length !== BODY_BYTES + MAC_BYTES || bytes[0] !== VERSION) return null;
  const body = bytes.subarray(0, BODY_BYTES);
  if (!timingSafeEqual(bytes.subarray(BODY_BYTES), mac(key, body))) return null;
  const channel = UNSUBSCRIBE_CHANNELS[bytes[BODY_BYTES - 1]];
  if (!channel) return null;
  return { accountId: uuidText(body.subarray(1, 17)), contactId: uuidText(body.subarray(17, 33)), channel };
}
