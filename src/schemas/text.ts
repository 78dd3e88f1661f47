import { z } from 'zod';
// Installs the message for unknown fields wherever the API's schemas are used.
import './unknown-fields';

// Text the service can store exactly as given, on SQLite and MySQL alike: no NUL character
// (SQLite ends the statement there) and no unpaired UTF-16 surrogate (utf8mb4 cannot hold it,
// and SQLite would store a replacement character instead).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const TEXT_PROBLEM = 'Must not contain NUL characters or unpaired UTF-16 surrogates';

export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

// A string's size in UTF-8 bytes, as stored and sent. TextEncoder, not Buffer: these schemas are
// also the dashboard's (web/), which runs in a browser.
const encoder = new TextEncoder();
export function utf8Length(value: string): number {
  return encoder.encode(value).length;
}

export function text() {
  return z.string().refine(isStorableText, TEXT_PROBLEM);
}

// Addresses as SMTP accepts them (RFC 5321 dot-atom, with the UTF-8 of RFC 6531), at a domain
// with a dot: `o'brien+news@example.co.uk`, `user&x@example.com`, `jörg@exämple.de`. Quoted
// local parts and IP-literal domains are not accepted.
const ATEXT = "[\\p{L}\\p{N}!#$%&'*+/=?^_`{|}~-]";
const LABEL = '[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]{0,61}[\\p{L}\\p{N}])?';
const EMAIL = new RegExp(`^${ATEXT}+(?:\\.${ATEXT}+)*@(?:${LABEL}\\.)+(?:\\p{L}{2,}|xn--[a-z0-9-]{2,})$`, 'u');

export function isEmailAddress(value: string): boolean {
  const at = value.lastIndexOf('@');
  // Judged in the canonical form the key uses (a decomposed é is a letter and a combining mark).
  return at > 0 && at <= 64 && EMAIL.test(value.normalize('NFC'));
}

// A From or Reply-To: `Ada <ada@example.com>` or `ada@example.com`: the address is checked as contacts' are; the
// display name must not carry what would break the header (angle brackets, line breaks).
const MAILBOX = /^(?:([^<>\r\n]*?)\s*<([^<>\s]+)>|([^<>\s]+))$/;
export function isMailbox(value: string): boolean {
  const match = MAILBOX.exec(value.trim());
  return match !== null && isEmailAddress(match[2] ?? match[3]!);
}

export const MAX_JSON_DEPTH = 16;

// Whether a parsed JSON value nests objects and arrays deeper than `limit`. Iterative: the
// point is to refuse values that recursive code (JSON.stringify among it) would choke on.
export function nestsDeeperThan(root: unknown, limit: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

// The first problem in a JSON value (depth, or a key or string that is not storable text), as
// a path and a message; null when there is none. Iterative, so no input can exhaust the stack.
export function jsonProblem(root: unknown): { path: PropertyKey[]; message: string } | null {
  const stack: Array<{ value: unknown; path: PropertyKey[]; depth: number }> = [{ value: root, path: [], depth: 1 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (!isStorableText(value)) return { path, message: TEXT_PROBLEM };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) return { path, message: `Nested deeper than ${MAX_JSON_DEPTH} levels` };
    for (const [key, child] of Object.entries(value)) {
      if (!isStorableText(key)) return { path: [...path, key], message: `Key: ${TEXT_PROBLEM}` };
      stack.push({ value: child, path: [...path, Array.isArray(value) ? Number(key) : key], depth: depth + 1 });
    }
  }
  return null;
}
