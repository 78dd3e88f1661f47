import { z } from 'zod';
import { contactSchema, subscriptionStatusSchema } from './contact';
import { eventMessageSchema, MESSAGE_CHANNELS } from './message';
import { suppressionSchema } from './suppression';
import { executionSchema, runSchema, runStatusSchema } from './sequence';

// The events the service records (docs/webhooks.md "The events feed"): the payload of each type, defined once.
// The feed answers them; they are in the OpenAPI document as components.

export const EVENT_TYPES = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.subscription_changed',
  'run.created',
  'run.status_changed',
  'run.step_completed',
  'run.step_failed',
  'webhook.test',
  'webhook.disabled',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'message.bounced',
  'message.complained',
  'message.received',
  'contact.suppressed',
  'contact.unsuppressed',
  'channel.paused',
  'channel.resumed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const eventTypeSchema = z.enum(EVENT_TYPES);

// The fields of a contact that a change can name in `changedFields`, as the API spells them.
export const CONTACT_FIELDS = [
  'email',
  'phone',
  'firstName',
  'lastName',
  'tags',
  'customFields',
  'emailSubscriptionStatus',
  'whatsappSubscriptionStatus',
] as const;

// Where a contact change came from, when not from an API or dashboard write: `unsubscribe`, a
// recipient's one-click unsubscribe link (docs/channels.md); `whatsapp_opt_out`, a WhatsApp
// opt-out (a keyword or button the contact sent, or Meta's 131050). Absent for every other
// write, as before they existed.
export const CONTACT_CHANGE_SOURCES = ['unsubscribe', 'whatsapp_opt_out'] as const;
export type ContactChangeSource = (typeof CONTACT_CHANGE_SOURCES)[number];
const changeSourceSchema = z
  .enum(CONTACT_CHANGE_SOURCES)
  .optional()
  .describe(
    'Set when the change did not come from an API call: `unsubscribe` is a recipient\'s one-click unsubscribe link; `whatsapp_opt_out` a WhatsApp ' +
      'opt-out (an opt-out keyword or button the contact sent, or Meta\'s 131050: the user stopped marketing messages).',
  );

export const eventRunSchema = runSchema
  .extend({
    sequenceId: z.string().describe('UUID of the sequence the run belongs to.'),
    contactId: z.string().describe('UUID of the contact the run belongs to.'),
  })
  .meta({ id: 'EventRun' });
export type EventRun = z.infer<typeof eventRunSchema>;

export const eventDataSchemas = {
  'contact.created': z.object({ contact: contactSchema }).meta({ id: 'ContactCreatedData' }),
  'contact.updated': z
    .object({
      contact: contactSchema.describe('The contact after the change.'),
      changedFields: z
        .array(z.enum(CONTACT_FIELDS))
        .min(1)
        .describe('The fields whose value changed, in the order of the Contact schema.'),
      source: changeSourceSchema,
    })
    .meta({ id: 'ContactUpdatedData' }),
  'contact.deleted': z
    .object({ id: z.string().describe('UUID of the deleted contact.'), email: z.string() })
    .meta({ id: 'ContactDeletedData' }),
  'contact.subscription_changed': z
    .object({
      contact: contactSchema.describe('The contact after the change.'),
      channel: z.enum(['email', 'whatsapp']),
      from: subscriptionStatusSchema,
      to: subscriptionStatusSchema,
      source: changeSourceSchema,
    })
    .meta({ id: 'ContactSubscriptionChangedData' }),
  'run.created': z.object({ run: eventRunSchema }).meta({ id: 'RunCreatedData' }),
  'run.status_changed': z
    .object({ run: eventRunSchema.describe('The run after the change.'), from: runStatusSchema, to: runStatusSchema })
    .meta({ id: 'RunStatusChangedData' }),
  'run.step_completed': z
    .object({
      run: eventRunSchema.describe('The run after the step.'),
      step: z.object({ id: z.string(), type: z.string() }).describe('The step, as its sequence version defines it (id and type).'),
      execution: executionSchema,
    })
    .meta({ id: 'RunStepCompletedData' }),
  'run.step_failed': z
    .object({
      run: eventRunSchema.describe('The run after the attempt.'),
      step: z.object({ id: z.string(), type: z.string() }),
      execution: executionSchema,
      retryAt: z.string().nullable().describe('When the step is tried again; null when it has failed for good (the run has failed).'),
    })
    .meta({ id: 'RunStepFailedData' }),
  'webhook.test': z
    .object({ webhookId: z.string().describe('UUID of the endpoint the test was sent to.').meta({ example: '5c4b3a29-1e0d-4f8c-9b7a-6d5e4f3a2b1c' }) })
    .meta({ id: 'WebhookTestData' }),
  'webhook.disabled': z
    .object({
      webhook: z
        .object({
          id: z.string().describe('UUID of the endpoint.').meta({ example: '5c4b3a29-1e0d-4f8c-9b7a-6d5e4f3a2b1c' }),
          url: z.string().meta({ example: 'https://hooks.example.com/contacts' }),
        })
        .describe('The endpoint that was disabled.'),
      failingSince: z.string().describe('Since when every attempt failed, ISO 8601 UTC.').meta({ example: '2026-11-19T09:30:00.000Z' }),
    })
    .meta({ id: 'WebhookDisabledData' }),
  'message.sent': z.object({ message: eventMessageSchema.describe('The message after the change.') }).meta({ id: 'MessageSentData' }),
  'message.delivered': z.object({ message: eventMessageSchema.describe('The message after the change.') }).meta({ id: 'MessageDeliveredData' }),
  'message.read': z.object({ message: eventMessageSchema.describe('The message after the change.') }).meta({ id: 'MessageReadData' }),
  'message.failed': z.object({ message: eventMessageSchema.describe('The message after the change; `error` says why.') }).meta({ id: 'MessageFailedData' }),
  'message.bounced': z
    .object({ message: eventMessageSchema.describe('The message after the change; `error` holds the receiving server\'s answer.') })
    .meta({ id: 'MessageBouncedData' }),
  'message.complained': z.object({ message: eventMessageSchema.describe('The message after the change.') }).meta({ id: 'MessageComplainedData' }),
  'message.received': z
    .object({
      contactId: z.string().describe('UUID of the contact whose phone sent it.'),
      channel: z.literal('whatsapp'),
      from: z.string().describe('The sender\'s number, E.164 with its +.').meta({ example: '+4915112855001' }),
      providerMessageId: z.string().describe('WhatsApp\'s id of the inbound message (`wamid.…`).'),
      type: z.string().describe('WhatsApp\'s message type: text, button, interactive, image, …').meta({ example: 'text' }),
      text: z.string().nullable().describe('The text, or the button\'s or list reply\'s title; null for media.').meta({ example: 'Thanks!' }),
      payload: z.string().nullable().describe('A quick-reply button\'s payload, or an interactive reply\'s id.').meta({ example: null }),
      receivedAt: z.string().describe('When WhatsApp says it was sent, ISO 8601 UTC.'),
    })
    .meta({ id: 'MessageReceivedData' }),
  'contact.suppressed': z
    .object({
      contact: z.object({ id: z.string().describe('UUID of the contact.'), email: z.string() }).describe('The contact that has the address.'),
      suppression: suppressionSchema,
    })
    .meta({ id: 'ContactSuppressedData' }),
  'contact.unsuppressed': z
    .object({
      contact: z.object({ id: z.string().describe('UUID of the contact.'), email: z.string() }).describe('The contact that has the address.'),
      suppression: suppressionSchema.describe('The suppression that was removed.'),
    })
    .meta({ id: 'ContactUnsuppressedData' }),
  'channel.paused': z
    .object({
      channel: z.enum(MESSAGE_CHANNELS),
      code: z.string().describe('What the sender side refused, as a short key (`smtp_auth_failed`, `whatsapp_token_expired`, `whatsapp_template_error`, …).').meta({ example: 'smtp_auth_failed' }),
      reason: z.string().describe('The failure in our words, with its code (never the remote server\'s banner).').meta({ example: 'the relay refused our login (535 5.7.8)' }),
      sequenceId: z.string().nullable().describe('Set when only one step\'s template is paused: its sequence.'),
      stepId: z.string().nullable().describe('Set when only one step\'s template is paused: that step.'),
    })
    .meta({ id: 'ChannelPausedData' }),
  'channel.resumed': z
    .object({
      channel: z.enum(MESSAGE_CHANNELS),
      by: z.enum(['settings', 'step', 'probe']).describe('settings: the channel\'s settings were saved; step: the paused step was saved; probe: a login without a message succeeded.'),
      sequenceId: z.string().nullable(),
      stepId: z.string().nullable(),
    })
    .meta({ id: 'ChannelResumedData' }),
} as const satisfies Record<EventType, z.ZodType>;

export type EventData<T extends EventType> = z.infer<(typeof eventDataSchemas)[T]>;

const DESCRIPTIONS: Record<EventType, string> = {
  'contact.created': 'A contact was created (create, upsert, batch, trigger, enroll-by-email).',
  'contact.updated': 'A contact changed; `changedFields` names what changed. Never sent for a write that changed nothing.',
  'contact.deleted': 'A contact was deleted. Its runs went with it; no run event is sent for them.',
  'contact.subscription_changed': 'A subscription status changed, one event per channel; sent beside contact.updated.',
  'run.created': 'A run was started (enroll, trigger, enroll-by-email).',
  'run.status_changed': 'A run moved: by the engine (started, completed, failed), an exit rule, pause or resume, runs.transition, or unenroll.',
  'run.step_completed': 'A step of a run succeeded (a wait when it ends; a branch says which way it went).',
  'run.step_failed': 'An attempt at a step failed; `retryAt` says when it is tried again, or null when the run has failed.',
  'webhook.test': 'Asked for with POST /webhooks/{id}/test; delivered to that endpoint only.',
  'webhook.disabled': 'An endpoint was disabled after 3 days of failed attempts; sent to the account\'s other endpoints.',
  'message.sent': 'A message of a step was taken by its provider (an SMTP server\'s 2xx, Graph\'s message id), or WhatsApp reported it sent.',
  'message.delivered': 'The provider reported the message delivered (WhatsApp). Never after `message.read`.',
  'message.read': 'The provider reported the message read (WhatsApp).',
  'message.failed': 'The message failed for good: a final answer when sending (`rejected: 554 5.7.1 …`, a Graph 4xx), or a failure the provider reported after sending. Never after `message.read`.',
  'message.bounced': 'The receiving server refused the address for good (a hard bounce: at once, or reported later by a DSN or a provider); the address is suppressed.',
  'message.complained': 'The recipient reported the message as spam (an ARF report or a provider\'s complaint event); the address is suppressed and the contact unsubscribed from the channel.',
  'message.received': 'A contact sent a WhatsApp message to the account\'s number (opt-out keywords excepted: those unsubscribe instead).',
  'contact.suppressed': 'An address of the contact was added to the account\'s suppression list; one event per contact that has it.',
  'contact.unsuppressed': 'An address of the contact was removed from the suppression list.',
  'channel.paused': 'The account\'s channel (or one step\'s template) stopped sending: the sender side failed (a refused login, an expired token, a template error). Its messages wait; no contact is touched.',
  'channel.resumed': 'A paused channel (or step) sends again.',
};

function eventSchemaFor<T extends EventType>(type: T) {
  const name = type
    .split(/[._]/)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
  return z
    .object({
      id: z.string().describe('UUID of the event; the same event always has the same id.').meta({ example: '0b7e2c4a-5d1f-4e8a-9c3b-6f2d8a1e4c7b' }),
      type: z.literal(type),
      createdAt: z.string().describe('When the change was recorded, ISO 8601 UTC with milliseconds.').meta({ example: '2026-11-22T09:30:00.000Z' }),
      accountId: z.string().describe('UUID of the account.').meta({ example: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' }),
      data: eventDataSchemas[type],
    })
    .describe(DESCRIPTIONS[type])
    .meta({ id: `${name}Event` });
}

export const eventSchema = z
  .discriminatedUnion('type', [
    eventSchemaFor('contact.created'),
    eventSchemaFor('contact.updated'),
    eventSchemaFor('contact.deleted'),
    eventSchemaFor('contact.subscription_changed'),
    eventSchemaFor('run.created'),
    eventSchemaFor('run.status_changed'),
    eventSchemaFor('run.step_completed'),
    eventSchemaFor('run.step_failed'),
    eventSchemaFor('webhook.test'),
    eventSchemaFor('webhook.disabled'),
    eventSchemaFor('message.sent'),
    eventSchemaFor('message.delivered'),
    eventSchemaFor('message.read'),
    eventSchemaFor('message.failed'),
    eventSchemaFor('message.bounced'),
    eventSchemaFor('message.complained'),
    eventSchemaFor('message.received'),
    eventSchemaFor('contact.suppressed'),
    eventSchemaFor('contact.unsuppressed'),
    eventSchemaFor('channel.paused'),
    eventSchemaFor('channel.resumed'),
  ])
  .meta({ id: 'Event' });
export type EventDto = z.infer<typeof eventSchema>;

// What a write path hands to recordEvents: a type and its payload, checked by the compiler.
export type NewEventOf = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];
