import type { ContactDto } from '../../schemas/contact';
import { CONTACT_FIELDS, type ContactChangeSource, type NewEventOf } from '../../schemas/event';
import type { ContactState } from '../contacts/contact-state';

// The events a contact write records, from the state before (null: the write created it) and
// the contact after. Nothing for a write that changed nothing.

const CHANNELS = [
  ['email', 'emailSubscriptionStatus'],
  ['whatsapp', 'whatsappSubscriptionStatus'],
] as const;

// source: where the change came from, when not from an API write (one-click unsubscribe).
export function contactChangeEvents(before: ContactState | null, after: ContactDto, source?: ContactChangeSource): NewEventOf[] {
  if (!before) return [{ type: 'contact.created', data: { contact: after } }];
  const changedFields = CONTACT_FIELDS.filter(
    (field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]),
  );
  if (changedFields.length === 0) return [];
  const events: NewEventOf[] = [{ type: 'contact.updated', data: { contact: after, changedFields, ...(source && { source }) } }];
  for (const [channel, field] of CHANNELS) {
    if (before[field] !== after[field]) {
      events.push({
        type: 'contact.subscription_changed',
        data: { contact: after, channel, from: before[field], to: after[field], ...(source && { source }) },
      });
    }
  }
  return events;
}

export function contactDeletedEvent(contact: { id: string; email: string }): NewEventOf {
  return { type: 'contact.deleted', data: { id: contact.id, email: contact.email } };
}
