import { z } from 'zod';

// What POST /sequences/{id}/preview answers (docs/api.md "Preview a message step"): the message
// a step would send to a contact now, rendered, and nothing sent or recorded. Output shapes only:
// rendered texts are not bounded as the templates are.

export const SKIP_REASONS = ['unsubscribed', 'suppressed', 'no_phone', 'invalid_phone'] as const;

const skipReason = z
  .enum(SKIP_REASONS)
  .nullable()
  .describe('Why the step would be skipped for this contact if it ran now (its channel status, its address on the suppression list, its phone); null: it would be sent.')
  .meta({ example: null });

export const emailPreviewSchema = z
  .object({
    channel: z.literal('email'),
    from: z.string().describe('The step\'s `from`, else the account\'s sender.').meta({ example: 'Shop <news@shop.example>' }),
    to: z.string().describe('The contact\'s email address.').meta({ example: 'ada@example.com' }),
    subject: z.string().meta({ example: 'Welcome, Ada' }),
    html: z.string().meta({ example: '<p>Hello Ada!</p>' }),
    text: z.string().describe('The step\'s `text` rendered, else made from the html.').meta({ example: 'Hello Ada!' }),
    headers: z
      .record(z.string(), z.string())
      .describe('The headers the message carries besides From, To and Subject: `List-Unsubscribe`, `List-Unsubscribe-Post`, and `Reply-To` when there is one.')
      .meta({
        example: {
          'List-Unsubscribe': '<https://contacts.example.com/u/eyJh…>',
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        },
      }),
    skipReason,
  })
  .meta({ id: 'EmailPreview' });

const whatsappParameterOut = z.object({ type: z.literal('text'), text: z.string(), parameter_name: z.string().optional() });

export const whatsappRequestSchema = z
  .object({
    messaging_product: z.literal('whatsapp'),
    recipient_type: z.literal('individual'),
    to: z.string().describe('The contact\'s phone in E.164 digits; empty when it has no usable one (see `skipReason`).').meta({ example: '447700900123' }),
    type: z.literal('template'),
    template: z.object({
      name: z.string().meta({ example: 'order_update' }),
      language: z.object({ code: z.string().meta({ example: 'en_US' }), policy: z.literal('deterministic').optional() }),
      components: z
        .array(
          z.object({
            type: z.enum(['header', 'body', 'button']),
            sub_type: z.literal('url').optional(),
            index: z.string().optional(),
            parameters: z.array(whatsappParameterOut),
          }),
        )
        .optional(),
    }),
    biz_opaque_callback_data: z
      .string()
      .describe('The message\'s id, which status webhooks carry back; `preview` in a preview.')
      .meta({ example: 'preview' }),
  })
  .describe('The JSON body of `POST /{phoneNumberId}/messages` on the WhatsApp Cloud API.')
  .meta({ id: 'WhatsAppMessageRequest' });

export const whatsappPreviewSchema = z
  .object({ channel: z.literal('whatsapp'), request: whatsappRequestSchema, skipReason })
  .meta({ id: 'WhatsAppPreview' });

export const messagePreviewSchema = z.discriminatedUnion('channel', [emailPreviewSchema, whatsappPreviewSchema]);
export type MessagePreview = z.infer<typeof messagePreviewSchema>;
