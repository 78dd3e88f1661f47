import { createHmac, timingSafeEqual } from 'node:crypto';

// The token of an open pixel (/t/o/) and of a tracked link (/t/c/): which account and message,
// and for a link which of the message's links (its index in messages.content.links), signed with
// HMAC-SHA256 under SecretsKey.tracking (derived from SECRETS_KEY, never the key itself, and
// another key than the unsubscribe links': a token of one kind never verifies as the other).
//   version (1) | kind (1) | account id (16) | message id (16) | link index (2) | HMAC, first 16 bytes
// 52 bytes, 70 characters of base64url. The link's target is not in the token: the redirect
// reads it from the message as it was sent, so no token can name a target the message did not
// carry (never an open redirect), and links stay short.

export type TrackingKind = 'open' | 'click';

export interface TrackingTarget {
  kind: TrackingKind;
  accountId: string;
  messageId: string;
  // The link's index among the message's tracked links; 0 for an open.
  link: number;
}

const VERSION = 1;
const KINDS: readonly TrackingKind[] = ['open', 'click'];
const MAC_BYTES = 16;
const BODY_BYTES = 1 + 1 + 16 + 16 + 2;
export const MAX_TRACKED_LINKS = 0xffff;
const TOKEN = /^[A-Za-z0-9_-]{70}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidText = (bytes: Buffer) => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
const mac = (key: Buffer, body: Buffer) => createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);

export function signTrackingToken(key: Buffer, target: TrackingTarget): string {
  if (!UUID.test(target.accountId) || !UUID.test(target.messageId)) throw new Error('tracking tokens name accounts and messages by UUID');
  if (!Number.isInteger(target.link) || target.link < 0 || target.link > MAX_TRACKED_LINKS) throw new Error('a tracked link index is 0 to 65535');
  const index = Buffer.alloc(2);
  index.writeUInt16BE(target.link);
  const body = Buffer.concat([Buffer.from([VERSION, KINDS.indexOf(target.kind)]), uuidBytes(target.accountId), uuidBytes(target.messageId), index]);
  return Buffer.concat([body, mac(key, body)]).toString('base64url');
}

// Null for anything this key did not sign, or signed for another kind: the routes answer the
// same 404 in every case.
export function verifyTrackingToken(key: Buffer, token: string, kind: TrackingKind): TrackingTarget | null {
  if (!TOKEN.test(token)) return null;
  const bytes = Buffer.from(token, 'base64url');
  // 70 characters carry 52 bytes and 4 spare bits: only the one spelling verifies.
  if (bytes.toString('base64url') !== token) return null;
  if (bytes.length !== BODY_BYTES + MAC_BYTES || bytes[0] !== VERSION || KINDS[bytes[1]!] !== kind) return null;
  const body = bytes.subarray(0, BODY_BYTES);
  if (!timingSafeEqual(bytes.subarray(BODY_BYTES), mac(key, body))) return null;
  return { kind, accountId: uuidText(body.subarray(2, 18)), messageId: uuidText(body.subarray(18, 34)), link: body.readUInt16BE(34) };
}
