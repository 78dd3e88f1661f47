import { z } from 'zod';
import { EVENT_TYPES } from './event';

export const webhookUrlSchema = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .describe('Where events are POSTed. https; private, loopback, link-local and other special-use addresses are refused.')
  .meta({ example: 'https://crm.example.com/hooks/contacts' });

export const webhookEventsSchema = z
  .array(z.enum(EVENT_TYPES))
  .max(EVENT_TYPES.length)
  .nullable()
  .describe('Event types to send; null or absent: every type. `webhook.test` is always sent when asked for.')
  .meta({ example: ['contact.deleted', 'contact.subscription_changed'] });

export const webhookDescriptionSchema = z.string().trim().max(500).nullable().describe('A note for people.').meta({ example: 'CRM sync' });

export const webhookSchema = z
  .object({
    id: z.string().describe('The endpoint id (UUID).').meta({ example: '5c4b3a29-1e0d-4f8c-9b7a-6d5e4f3a2b1c' }),
    url: z.string().meta({ example: 'https://crm.example.com/hooks/contacts' }),
    description: z.string().nullable().meta({ example: 'CRM sync' }),
    events: z.array(z.string()).nullable().describe('Subscribed event types; null: every type.').meta({ example: ['contact.deleted', 'contact.subscription_changed'] }),
    enabled: z.boolean().describe('False after PATCH enabled=false, or after 3 days of failed deliveries.'),
    failingSince: z.string().nullable().describe('First failed attempt since the last success (ISO 8601), or null.').meta({ example: null }),
    previousSecretExpiresAt: z
      .string()
      .nullable()
      .describe('After a rotation: until when the previous secret still signs (its signature is sent beside the new one).')
      .meta({ example: null }),
    createdAt: z.string().meta({ example: '2026-11-22T09:30:00.000Z' }),
    updatedAt: z.string().meta({ example: '2026-11-22T09:30:00.000Z' }),
  })
  .meta({ id: 'Webhook' });

export const webhookWithSecretSchema = z.object({
  webhook: webhookSchema,
  secret: z
    .string()
    .describe('The signing secret, `whsec_` + base64. Shown only in this response.')
    .meta({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
});

export const deliveryAttemptSchema = z
  .object({
    id: z.number().int().describe('Attempt id, increasing.').meta({ example: 1042 }),
    eventId: z.string().describe('The event delivered (also its `webhook-id` header).').meta({ example: '0b7e2c4a-5d1f-4e8a-9c3b-6f2d8a1e4c7b' }),
    attempt: z.number().int().describe('1 for the first try of this event.').meta({ example: 2 }),
    responseStatus: z.number().int().nullable().describe('The receiver\'s HTTP status, or null when no response came.').meta({ example: 503 }),
    error: z.string().nullable().describe('Why no response counted: timeout, connection error, refused address.').meta({ example: null }),
    durationMs: z.number().int().meta({ example: 182 }),
    succeeded: z.boolean().describe('A 2xx within 10 s.'),
    nextAttemptAt: z.string().nullable().describe('When the next try goes after this failure; null after a success.').meta({ example: '2026-11-22T09:32:00.000Z' }),
    createdAt: z.string().meta({ example: '2026-11-22T09:30:00.000Z' }),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });
