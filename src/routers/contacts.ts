import { z } from 'zod';
import {
  contactFieldsSchema,
  contactResponseSchema,
  contactUpdateSchema,
  subscriptionStatusSchema,
  tagsSchema,
} from '../schemas/contact';
import {
  addTags,
  batchUpsertContacts,
  createContact,
  deleteContact,
  removeTags,
  updateContact,
  updateSubscriptions,
  upsertContact,
} from '../services/contacts/contact-operations';
import { getContact, getContactByEmail } from '../services/contacts/find-contact';
import { listContacts, type ContactPage } from '../services/contacts/list-contacts';
import { listContactRuns } from '../services/sequences/list-runs';
import { listContactMessages } from '../services/messages/list-messages';
import { messageListInputSchema, messageListOutputSchema } from '../schemas/message';
import { accountProcedure, router } from '../trpc/init';
import { contactImportsRouter } from './contact-imports';
import { activityListInputSchema, activityListOutputSchema } from '../schemas/activity';
import { listContactActivities } from '../services/activities/list-activities';
import { contactListInputSchema, contactListOutputSchema, runFilters, runListInputSchema, runListOutputSchema } from '../schemas/list-queries';

const TAGS = ['Contacts'];
const contactLocation = (id: string) => `/api/v1/contacts/${id}`;
export const idParam = z.strictObject({ id: z.string().describe('The contact id (UUID).') });
export const tagsBody = z.strictObject({ tags: tagsSchema.min(1, 'Give at least one tag').describe('Tags to add or remove.') });

export const subscriptionsInput = idParam
  .extend({
    emailSubscriptionStatus: subscriptionStatusSchema.optional(),
    whatsappSubscriptionStatus: subscriptionStatusSchema.optional(),
  })
  .refine((value) => value.emailSubscriptionStatus || value.whatsappSubscriptionStatus, {
    message: 'Give emailSubscriptionStatus or whatsappSubscriptionStatus',
  });

// A page as the list answers it: the sync fields only with sort=updatedAt.
export function contactListAnswer(page: ContactPage) {
  return { contacts: page.items, nextCursor: page.nextCursor, ...page.sync };
}

// Static paths (/contacts/upsert, /contacts/batch, /contacts/by-email/{email}) are declared
// before /contacts/{id}: the REST adapter takes the first path that matches, in this order.
export const contactsRouter = router({
  // First: /contacts/imports and /contacts/imports/{id} before /contacts/{id} and /contacts/{id}/runs.
  imports: contactImportsRouter,

  create: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts', tags: TAGS, summary: 'Create a contact',
        description: 'Creates a contact with a new email (unique per account, case-insensitively); an existing email is a 409.',
        protect: true,
        errorResponses: { 409: 'A contact with this email already exists' } },
      successStatus: 201,
      location: '/api/v1/contacts/{id}',
    })
    .input(contactFieldsSchema)
    .output(contactResponseSchema)
    .mutation(async ({ ctx, input }) => {
      const contact = await createContact(ctx.db, { ...input, accountId: ctx.accountId });
      ctx.http.headers.Location = contactLocation(contact.id);
      return { contact };
    }),

  upsert: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/upsert',
        tags: TAGS,
        summary: 'Create or update a contact by email',
        description:
          'On update: phone, firstName and lastName change only when given non-null; customFields deep-merge; ' +
          'tags replace only when given non-empty; subscription statuses change only when given.',
        protect: true,
        successDescription: 'The contact existed and was updated',
      },
      successStatus: 200,
      alternateSuccess: { status: 201, description: 'The contact was created' },
      location: '/api/v1/contacts/{id}',
    })
    .input(contactFieldsSchema)
    .output(contactResponseSchema.extend({ created: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const { contact, created } = await upsertContact(ctx.db, { ...input, accountId: ctx.accountId });
      ctx.http.status = created ? 201 : 200;
      if (created) ctx.http.headers.Location = contactLocation(contact.id);
      return { contact, created };
    }),

  batch: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/batch',
        tags: TAGS,
        summary: 'Upsert up to 100 contacts at once',
        description:
          'Each item is upserted by email with the upsert merge rules, in order. The batch is validated whole ' +
          'first and applied atomically: one invalid item rejects it all.',
        protect: true,
      },
      successStatus: 201,
    })
    .input(
      z.strictObject({
        contacts: z
          .array(contactFieldsSchema)
          .min(1, 'Give at least one contact')
          .max(100, 'A batch holds at most 100 contacts'),
      }),
    )
    .output(
      z.object({
        summary: z.object({
          total: z.number().int().describe('Items in the request.').meta({ example: 3 }),
          inserted: z.number().int().describe('Contacts created.').meta({ example: 2 }),
          updated: z.number().int().describe('Items applied to an existing contact.').meta({ example: 1 }),
        }),
      }),
    )
    .mutation(async ({ ctx, input }) => ({
      summary: await batchUpsertContacts(ctx.db, { ...input, accountId: ctx.accountId }),
    })),

  list: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts',
        tags: TAGS,
        summary: 'List and search contacts',
        description:
          'Newest first by `createdAt` (ties by `id`, newest first too). Filters combine (all must hold): `tag`, ' +
          'the two subscription statuses, `q` (a case-insensitive prefix of the email), `createdAfter` and ' +
          '`updatedSince` (exclusive). Walk the pages with `nextCursor`; in the default order a walk sees every ' +
          'contact that existed when it began and still exists exactly once, even while contacts are created ' +
          'and changed meanwhile. `sort=updatedAt` gives the oldest change first (ties by `id`), for incremental ' +
          'sync: a walk lists the contacts as last changed before its start less a settle window of 5 s (changes ' +
          'still committing), each at most once, and ends. Its last page has `nextCursor` null and carries ' +
          '`resumeCursor`, `caughtUpTo` and `retryAfterMs`: pass `resumeCursor` later as `cursor` to list every ' +
          'change made since, each once. A contact changed during a walk comes in the next one.',
        protect: true,
      },
    })
    .input(contactListInputSchema)
    .output(contactListOutputSchema)
    .query(async ({ ctx, input }) => contactListAnswer(await listContacts(ctx.db, { ...input, accountId: ctx.accountId }))),

  runs: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts/{id}/runs',
        tags: TAGS,
        summary: 'List a contact\'s runs',
        description:
          'The contact\'s runs in every sequence, newest first by `createdAt` (ties by `id`). Filter by `status`, ' +
          'or `active=true` for pending, running and paused (`active=false` for the others).',
        protect: true,
        errorResponses: { 404: 'Contact not found' },
      },
    })
    .input(runListInputSchema.extend(idParam.shape))
    .output(runListOutputSchema)
    .query(async ({ ctx, input }) => {
      const page = await listContactRuns(ctx.db, {
        ...runFilters(input),
        accountId: ctx.accountId,
        contactId: input.id,
      });
      return { runs: page.items, nextCursor: page.nextCursor };
    }),

  getByEmail: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts/by-email/{email}',
        tags: TAGS,
        summary: 'Get a contact by email',
        description: 'Case-insensitive. The address may be URL-encoded (`%40` for `@`, `%2B` for `+`).',
        protect: true,
        errorResponses: { 404: 'Contact not found' },
      },
    })
    .input(z.strictObject({ email: z.string().describe('The contact\'s email address.') }))
    .output(contactResponseSchema)
    .query(async ({ ctx, input }) => ({
      contact: await getContactByEmail(ctx.db, { ...input, accountId: ctx.accountId }),
    })),

  messages: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts/{id}/messages',
        tags: TAGS,
        summary: 'List a contact\'s messages',
        description:
          'The email and WhatsApp messages the contact\'s runs sent (not test sends, which went to another address), newest first by `createdAt` ' +
          '(ties by `id`), with each one\'s status as the provider last reported it (docs/messages.md).',
        protect: true,
        errorResponses: { 404: 'Contact not found' },
      },
    })
    .input(messageListInputSchema)
    .output(messageListOutputSchema)
    .query(async ({ ctx, input }) => {
      const page = await listContactMessages(ctx.db, { accountId: ctx.accountId, contactId: input.id, limit: input.limit, cursor: input.cursor });
      return { messages: page.items, nextCursor: page.nextCursor };
    }),

  activities: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts/{id}/activities',
        tags: TAGS,
        summary: 'List a contact\'s activities',
        description:
          'What the contact did (POST /activities), newest first by `occurredAt` (ties by `id`), kept ' +
          'ACTIVITY_RETENTION_DAYS days (docs/activities.md).',
        protect: true,
        errorResponses: { 404: 'Contact not found' },
      },
    })
    .input(activityListInputSchema)
    .output(activityListOutputSchema)
    .query(async ({ ctx, input }) => {
      const page = await listContactActivities(ctx.db, { accountId: ctx.accountId, contactId: input.id, limit: input.limit, cursor: input.cursor });
      return { activities: page.items, nextCursor: page.nextCursor };
    }),

  get: accountProcedure
    .meta({ openapi: {
        method: 'GET',
        path: '/contacts/{id}',
        tags: TAGS,
        summary: 'Get a contact',
        description: 'Reads one contact of the key\'s account by id; an id of another account is a 404.',
        protect: true,
        errorResponses: { 404: 'Contact not found' },
      },
    })
    .input(idParam)
    .output(contactResponseSchema)
    .query(async ({ ctx, input }) => ({ contact: await getContact(ctx.db, { ...input, accountId: ctx.accountId }) })),

  update: accountProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/contacts/{id}',
        tags: TAGS,
        summary: 'Update a contact',
        description: 'Only the fields given change. tags and customFields replace (no merge); null clears phone and names.',
        protect: true,
        errorResponses: { 404: 'Contact not found', 409: 'A contact with this email already exists' },
      },
    })
    .input(contactUpdateSchema.extend(idParam.shape))
    .output(contactResponseSchema)
    .mutation(async ({ ctx, input }) => ({
      contact: await updateContact(ctx.db, { ...input, accountId: ctx.accountId }),
    })),

  updateSubscriptions: accountProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/contacts/{id}/subscriptions',
        tags: TAGS,
        summary: 'Change subscription statuses',
        description: 'Sets the email and/or WhatsApp subscription status; give at least one. Other fields are unchanged.',
        protect: true,
        errorResponses: { 404: 'Contact not found' },
      },
    })
    .input(subscriptionsInput)
    .output(contactResponseSchema)
    .mutation(async ({ ctx, input }) => ({
      contact: await updateSubscriptions(ctx.db, { ...input, accountId: ctx.accountId }),
    })),

  delete: accountProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/contacts/{id}',
        tags: TAGS,
        summary: 'Delete a contact',
        description: 'Permanent; the contact\'s sequence runs are deleted with it.',
        protect: true,
        errorResponses: { 404: 'Contact not found' },
        successDescription: 'Deleted; no body',
      },
      successStatus: 204,
    })
    .input(idParam)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteContact(ctx.db, { ...input, accountId: ctx.accountId });
    }),

  addTags: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/{id}/tags',
        tags: TAGS,
        summary: 'Add tags',
        description: 'Tags already on the contact are ignored; new ones are appended in request order.',
        protect: true,
        errorResponses: { 404: 'Contact not found' },
      },
    })
    .input(tagsBody.extend(idParam.shape))
    .output(contactResponseSchema)
    .mutation(async ({ ctx, input }) => ({ contact: await addTags(ctx.db, { ...input, accountId: ctx.accountId }) })),

  removeTags: accountProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/contacts/{id}/tags',
        tags: TAGS,
        summary: 'Remove tags',
        description: 'JSON body on a DELETE request: `{ "tags": [...] }`. Tags not on the contact are ignored.',
        protect: true,
        errorResponses: { 404: 'Contact not found' },
      },
    })
    .input(tagsBody.extend(idParam.shape))
    .output(contactResponseSchema)
    .mutation(async ({ ctx, input }) => ({
      contact: await removeTags(ctx.db, { ...input, accountId: ctx.accountId }),
    })),
});

