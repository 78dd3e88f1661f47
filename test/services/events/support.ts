import type { ContactDto } from '../../../src/schemas/contact';
import type { EventDto } from '../../../src/schemas/event';
import { listEvents } from '../../../src/services/events/list-events';
import { testDb } from '../../support/db';

// Every event of the account, in seq order, read through the feed's service.
export async function allEvents(accountId: string): Promise<EventDto[]> {
  const events: EventDto[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await listEvents(testDb(), { accountId, after, limit: 200 });
    events.push(...page.events);
    if (page.events.length < 200) return events;
    after = page.nextCursor;
  }
}

// What a write added: the account's events after `before` of them.
export async function eventsSince(accountId: string, before: number): Promise<EventDto[]> {
  return (await allEvents(accountId)).slice(before);
}

export async function eventCount(accountId: string): Promise<number> {
  return (await allEvents(accountId)).length;
}

// Runs fn and returns the events it recorded, in order.
export async function eventsOf(accountId: string, fn: () => Promise<unknown>): Promise<EventDto[]> {
  const before = await eventCount(accountId);
  await fn();
  return eventsSince(accountId, before);
}

export const typesOf = (events: EventDto[]) => events.map((event) => event.type);

// The contact an event carries (contact.created, contact.updated, contact.subscription_changed).
export const contactOf = (event: EventDto) => (event.data as { contact: ContactDto }).contact;
