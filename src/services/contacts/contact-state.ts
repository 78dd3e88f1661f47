import { ValidationError } from '../../errors/app-errors';
import type { SubscriptionStatus } from '../../schemas/statuses';
import {
  MAX_CUSTOM_FIELD_KEYS,
  MAX_CUSTOM_FIELDS_BYTES,
  MAX_TAGS,
  normalizeEmail,
  type ContactFields,
} from '../../schemas/contact';

// A contact's writable state, and the pure rules that change it (the upsert merge rules of docs/api.md,
// docs/decisions.md "Contacts"). No database here: these are the rules, unit-testable on their own.

export type CustomFields = Record<string, unknown>;

export interface ContactState {
  email: string;
  emailNormalized: string;
  phone: string | null;
  firstName: string | null;
  lastName: string | null;
  tags: string[];
  customFields: CustomFields;
  emailSubscriptionStatus: SubscriptionStatus;
  whatsappSubscriptionStatus: SubscriptionStatus;
}

// Duplicates collapse; the first occurrence's position is kept.
export function uniqueTags(tags: readonly string[]): string[] {
  return [...new Set(tags)];
}

function isPlainObject(value: unknown): value is CustomFields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Nested plain objects merge recursively; arrays, scalars and null replace.
// Built with Object.fromEntries so a "__proto__" key stays an ordinary key.
export function deepMerge(base: CustomFields, patch: CustomFields): CustomFields {
  const merged = new Map<string, unknown>(Object.entries(base));
  for (const [key, value] of Object.entries(patch)) {
    const current = merged.get(key);
    merged.set(key, isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value);
  }
  return Object.fromEntries(merged);
}

export function newContactState(fields: ContactFields): ContactState {
  return {
    email: fields.email,
    emailNormalized: normalizeEmail(fields.email),
    phone: fields.phone ?? null,
    firstName: fields.firstName ?? null,
    lastName: fields.lastName ?? null,
    tags: uniqueTags(fields.tags ?? []),
    customFields: fields.customFields ?? {},
    emailSubscriptionStatus: fields.emailSubscriptionStatus ?? 'subscribed',
    whatsappSubscriptionStatus: fields.whatsappSubscriptionStatus ?? 'subscribed',
  };
}

// Upsert onto an existing contact. null counts as "not provided" for the nullable strings.
export function mergeUpsert(current: ContactState, fields: ContactFields): ContactState {
  return {
    ...current,
    phone: fields.phone ?? current.phone,
    firstName: fields.firstName ?? current.firstName,
    lastName: fields.lastName ?? current.lastName,
    tags: fields.tags && fields.tags.length > 0 ? uniqueTags(fields.tags) : current.tags,
    customFields: fields.customFields ? deepMerge(current.customFields, fields.customFields) : current.customFields,
    emailSubscriptionStatus: fields.emailSubscriptionStatus ?? current.emailSubscriptionStatus,
    whatsappSubscriptionStatus: fields.whatsappSubscriptionStatus ?? current.whatsappSubscriptionStatus,
  };
}

// Whether a change leaves the contact as it was. Such a write is skipped, so updatedAt moves
// only when the contact does, and a retried request changes nothing.
export function sameState(a: ContactState, b: ContactState): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// An upsert's item; addTags (an import's "tags to add") are appended after the merge, so the
// contact keeps the tags it had, as add-tags does.
export type UpsertItem = ContactFields & { addTags?: readonly string[] };

export function applyUpsert(current: ContactState | null, fields: UpsertItem): ContactState {
  const state = current ? mergeUpsert(current, fields) : newContactState(fields);
  return fields.addTags && fields.addTags.length > 0 ? { ...state, tags: uniqueTags([...state.tags, ...fields.addTags]) } : state;
}

// Limits that only the result can break (a merge can grow customFields past what any single
// request carried; add-tags can grow the tag list). `path` prefixes the error's detail path.
export function assertWithinLimits(state: ContactState, path = ''): void {
  if (state.tags.length > MAX_TAGS) {
    throw limitError(`${path}tags`, `A contact can have at most ${MAX_TAGS} tags`);
  }
  if (Object.keys(state.customFields).length > MAX_CUSTOM_FIELD_KEYS) {
    throw limitError(`${path}customFields`, `A contact can have at most ${MAX_CUSTOM_FIELD_KEYS} custom fields`);
  }
  if (Buffer.byteLength(JSON.stringify(state.customFields)) > MAX_CUSTOM_FIELDS_BYTES) {
    throw limitError(`${path}customFields`, 'Custom fields must be at most 16 KiB as JSON');
  }
}

function limitError(path: string, message: string) {
  return new ValidationError(`${path}: ${message}`, [{ path, message }]);
}
