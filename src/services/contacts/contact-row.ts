import { parseJson, toIso } from '../../db/sql/rows';
import type { ContactDto } from '../../schemas/contact';
import type { ContactState, CustomFields } from './contact-state';

// How a contact is laid out in the contacts table, and back.

export const CONTACT_COLUMNS = [
  'id',
  'account_id',
  'email',
  'email_normalized',
  'phone',
  'first_name',
  'last_name',
  'tags',
  'custom_fields',
  'email_subscription_status',
  'whatsapp_subscription_status',
  'created_at',
  'updated_at',
] as const;

export const CONTACT_SELECT = `SELECT ${CONTACT_COLUMNS.join(', ')} FROM contacts`;

export interface ContactRow {
  id: string;
  account_id: string;
  email: string;
  email_normalized: string;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
  tags: unknown;
  custom_fields: unknown;
  email_subscription_status: string;
  whatsapp_subscription_status: string;
  created_at: unknown;
  updated_at: unknown;
}

export function stateFromRow(row: ContactRow): ContactState {
  return {
    email: row.email,
    emailNormalized: row.email_normalized,
    phone: row.phone,
    firstName: row.first_name,
    lastName: row.last_name,
    tags: parseJson<string[]>(row.tags),
    customFields: parseJson<CustomFields>(row.custom_fields),
    emailSubscriptionStatus: row.email_subscription_status as ContactState['emailSubscriptionStatus'],
    whatsappSubscriptionStatus: row.whatsapp_subscription_status as ContactState['whatsappSubscriptionStatus'],
  };
}

export function rowValues(id: string, accountId: string, state: ContactState, createdAt: Date, updatedAt: Date) {
  return [
    id,
    accountId,
    state.email,
    state.emailNormalized,
    state.phone,
    state.firstName,
    state.lastName,
    JSON.stringify(state.tags),
    JSON.stringify(state.customFields),
    state.emailSubscriptionStatus,
    state.whatsappSubscriptionStatus,
    createdAt,
    updatedAt,
  ];
}

export function toContactDto(id: string, state: ContactState, createdAt: unknown, updatedAt: unknown): ContactDto {
  return {
    id,
    email: state.email,
    phone: state.phone,
    firstName: state.firstName,
    lastName: state.lastName,
    tags: state.tags,
    customFields: state.customFields,
    emailSubscriptionStatus: state.emailSubscriptionStatus,
    whatsappSubscriptionStatus: state.whatsappSubscriptionStatus,
    createdAt: toIso(createdAt),
    updatedAt: toIso(updatedAt),
  };
}

export function contactFromRow(row: ContactRow): ContactDto {
  return toContactDto(row.id, stateFromRow(row), row.created_at, row.updated_at);
}
