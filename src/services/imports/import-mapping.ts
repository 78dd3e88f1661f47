import { ValidationError, type IssueDetail } from '../../errors/app-errors';
import { contactFieldsSchema } from '../../schemas/contact';
import { CUSTOM_FIELD_PREFIX, IMPORT_FIELDS } from '../../schemas/contact-import';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../../schemas/statuses';
import type { UpsertItem } from '../contacts/contact-state';

// How a file's columns fill a contact (docs/api.md "Importing contacts"), and one row turned
// into an upsert item or a reason to reject it. Pure: no file, no database.

export interface ImportColumn {
  header: string;
  field: string | null;
}

export interface RowOptions {
  addTags: readonly string[];
  optedIn: boolean;
}

// A header's field when the request does not name one: the field's own name, letter case,
// spaces, '-' and '_' aside ("First Name", "first_name"), a few common spellings of the email,
// else a custom field of the header's name.
const KNOWN_HEADERS = new Map<string, string>([
  ...IMPORT_FIELDS.map((field) => [squash(field), field] as const),
  ['emailaddress', 'email'],
  ['mail', 'email'],
  ['phonenumber', 'phone'],
  ['mobile', 'phone'],
]);

function squash(header: string): string {
  return header.toLowerCase().replace(/[\s_-]+/g, '');
}

export function defaultField(header: string): string | null {
  if (header === '') return null;
  if (header.startsWith(CUSTOM_FIELD_PREFIX) && header.length > CUSTOM_FIELD_PREFIX.length) return header;
  return KNOWN_HEADERS.get(squash(header)) ?? `${CUSTOM_FIELD_PREFIX}${header}`;
}

function isField(field: string): boolean {
  return (IMPORT_FIELDS as readonly string[]).includes(field) || (field.startsWith(CUSTOM_FIELD_PREFIX) && field.trim().length > CUSTOM_FIELD_PREFIX.length);
}

// The columns and their fields, or a 400 naming the mapping's entry (or the file) at fault.
export function resolveColumns(header: readonly string[], mapping: Record<string, string | null> = {}): ImportColumn[] {
  const problems: IssueDetail[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    if (name !== '' && seen.has(name)) problems.push({ path: 'file', message: `The header names column "${name}" twice` });
    seen.add(name);
  }
  for (const [name, field] of Object.entries(mapping)) {
    if (!seen.has(name)) problems.push({ path: `mapping.${name}`, message: `No column "${name}" in the file's header (${listed(header)})` });
    else if (field !== null && !isField(field)) {
      problems.push({ path: `mapping.${name}`, message: `Unknown field "${field}"; use one of ${IMPORT_FIELDS.join(', ')}, or customFields.<name>` });
    }
  }
  const columns = header.map((name) => ({ header: name, field: Object.hasOwn(mapping, name) ? mapping[name]! : defaultField(name) }));
  const byField = new Map<string, string>();
  for (const { header: name, field } of columns) {
    if (field === null) continue;
    const other = byField.get(field);
    if (other !== undefined) problems.push({ path: `mapping.${name}`, message: `Columns "${other}" and "${name}" both map to ${field}` });
    byField.set(field, name);
  }
  if (!byField.has('email') && problems.length === 0) {
    problems.push({
      path: 'mapping.email',
      message: `No column maps to email (the header has ${listed(header)}); name the email column in mapping, e.g. {"E-mail": "email"}`,
    });
  }
  if (problems.length > 0) throw new ValidationError(problems[0]!.message, problems);
  return columns;
}

function listed(header: readonly string[]): string {
  return header.length === 0 ? 'no columns' : header.map((name) => `"${name}"`).join(', ');
}

export type RowOutcome = { item: UpsertItem } | { reason: string };

// One data row as an upsert item, or why it is rejected. Empty cells are "not given", so the
// upsert's merge keeps what the contact has. A subscription column saying `subscribed` is
// dropped unless the request said these people opted in: an import never resubscribes anyone
// by itself (an unsubscribed contact stays so; a new one is subscribed by default anyway).
export function rowToItem(cells: readonly string[], columns: readonly ImportColumn[], options: RowOptions, problem?: string): RowOutcome {
  if (problem) return { reason: problem };
  if (cells.length !== columns.length) return { reason: `The row has ${cells.length} cells; the header has ${columns.length}` };
  const item: Record<string, unknown> = {};
  const customFields: Record<string, string> = {};
  let hasCustom = false;
  for (let i = 0; i < columns.length; i++) {
    const { field, header } = columns[i]!;
    const value = cells[i]!.trim();
    if (field === null || value === '') continue;
    if (field.startsWith(CUSTOM_FIELD_PREFIX)) {
      customFields[field.slice(CUSTOM_FIELD_PREFIX.length)] = value;
      hasCustom = true;
    } else if (field === 'tags') {
      item.tags = value.split(/[,;]/).map((tag) => tag.trim()).filter((tag) => tag !== '');
    } else if (field === 'emailSubscriptionStatus' || field === 'whatsappSubscriptionStatus') {
      const status = value.toLowerCase();
      if (!(SUBSCRIPTION_STATUSES as readonly string[]).includes(status)) {
        return { reason: `"${header}" (${field}): must be ${SUBSCRIPTION_STATUSES.join(' or ')}, not "${value}"` };
      }
      if (status !== 'subscribed' || options.optedIn) item[field] = status as SubscriptionStatus;
    } else item[field] = value;
  }
  if (hasCustom) item.customFields = customFields;
  if (item.email === undefined) {
    const column = columns.find((c) => c.field === 'email')!;
    return { reason: `"${column.header}" (email): Email is required` };
  }
  const parsed = contactFieldsSchema.safeParse(item);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { reason: `${columnOf(issue.path, columns)}: ${issue.message}` };
  }
  return { item: options.addTags.length > 0 ? { ...parsed.data, addTags: options.addTags } : parsed.data };
}

// The column an issue's path is about, as the person named it: `"E-mail" (email)`.
function columnOf(path: readonly PropertyKey[], columns: readonly ImportColumn[]): string {
  const [top, key] = path.map(String);
  const field = top === 'customFields' && key !== undefined ? `${CUSTOM_FIELD_PREFIX}${key}` : top;
  const column = columns.find((c) => c.field === field);
  if (top === 'email' && !column) return 'email';
  return column ? `"${column.header}" (${field})` : (path.map(String).join('.') || 'row');
}
