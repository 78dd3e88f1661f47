import { z } from 'zod';
import { contactFieldsSchema, contactUpdateSchema } from '../../schemas/contact';
import { MAX_LIST_LIMIT } from '../../schemas/list';
import { contactListInputSchema, runFilters, runListInputSchema } from '../../schemas/list-queries';
import {
  addTags,
  createContact,
  deleteContact,
  removeTags,
  updateContact,
  updateSubscriptions,
} from '../../services/contacts/contact-operations';
import { countContacts } from '../../services/contacts/count-contacts';
import { contactEmails } from '../../services/contacts/contact-emails';
import { getContact } from '../../services/contacts/find-contact';
import { listContacts } from '../../services/contacts/list-contacts';
import { listContactRuns } from '../../services/sequences/list-runs';
import { activityListInputSchema } from '../../schemas/activity';
import { listContactActivities } from '../../services/activities/list-activities';
import { unenroll } from '../../services/sequences/unenroll';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';
import { dashboardContactImportsRouter } from './contact-imports';
import { contactListAnswer, idParam, subscriptionsInput, tagsBody } from '../contacts';

// The Contacts pages: the API's input schemas and services, so the same rules and messages,
// always within the signed-in account.

export const dashboardContactsRouter = router({
  // Contacts -> Import.
  imports: dashboardContactImportsRouter,

  list: sessionProcedure
    .input(contactListInputSchema)
    .query(async ({ ctx, input }) => contactListAnswer(await listContacts(ctx.db, { ...input, accountId: ctx.accountId }))),

  // The list's total, capped (count-contacts.ts): the filters of the list, without its position.
  count: sessionProcedure
    .input(contactListInputSchema.pick({ q: true, tag: true, emailSubscriptionStatus: true, whatsappSubscriptionStatus: true }))
    .query(({ ctx, input }) => countContacts(ctx.db, { ...input, accountId: ctx.accountId })),

  // "New contact": the API's POST /contacts (an existing email is a 409).
  create: sessionProcedure
    .input(contactFieldsSchema)
    .mutation(async ({ ctx, input }) => ({ contact: await createContact(ctx.db, { ...input, accountId: ctx.accountId }) })),

  get: sessionProcedure
    .input(idParam)
    .query(async ({ ctx, input }) => ({ contact: await getContact(ctx.db, { ...input, accountId: ctx.accountId }) })),

  // Emails for the contacts of a list page (a sequence's runs name them by id).
  emails: sessionProcedure
    .input(z.object({ ids: z.array(z.string().max(64)).max(MAX_LIST_LIMIT, `At most ${MAX_LIST_LIMIT} ids`) }))
    .query(async ({ ctx, input }) => ({ emails: await contactEmails(ctx.db, { ...input, accountId: ctx.accountId }) })),

  runs: sessionProcedure.input(runListInputSchema.extend(idParam.shape)).query(async ({ ctx, input }) => {
    const page = await listContactRuns(ctx.db, { ...runFilters(input), accountId: ctx.accountId, contactId: input.id });
    return { runs: page.items, nextCursor: page.nextCursor };
  }),

  // The contact page's Activities panel: the API's GET /contacts/{id}/activities.
  activities: sessionProcedure.input(activityListInputSchema).query(async ({ ctx, input }) => {
    const page = await listContactActivities(ctx.db, { accountId: ctx.accountId, contactId: input.id, limit: input.limit, cursor: input.cursor });
    return { activities: page.items, nextCursor: page.nextCursor };
  }),

  update: sessionProcedure
    .input(contactUpdateSchema.extend(idParam.shape))
    .mutation(async ({ ctx, input }) => ({ contact: await updateContact(ctx.db, { ...input, accountId: ctx.accountId }) })),

  updateSubscriptions: sessionProcedure
    .input(subscriptionsInput)
    .mutation(async ({ ctx, input }) => ({
      contact: await updateSubscriptions(ctx.db, { ...input, accountId: ctx.accountId }),
    })),

  addTags: sessionProcedure
    .input(tagsBody.extend(idParam.shape))
    .mutation(async ({ ctx, input }) => ({ contact: await addTags(ctx.db, { ...input, accountId: ctx.accountId }) })),

  removeTags: sessionProcedure
    .input(tagsBody.extend(idParam.shape))
    .mutation(async ({ ctx, input }) => ({ contact: await removeTags(ctx.db, { ...input, accountId: ctx.accountId }) })),

  delete: sessionProcedure.input(idParam).mutation(async ({ ctx, input }) => {
    await deleteContact(ctx.db, { ...input, accountId: ctx.accountId });
    return { deleted: true };
  }),

  // "Unenroll" on the contact page: the API's unenroll, for this one contact.
  unenroll: sessionProcedure
    .input(z.object({ id: z.uuid('must be a UUID'), sequenceId: z.string() }))
    .mutation(({ ctx, input }) =>
      unenroll(ctx.db, { accountId: ctx.accountId, sequenceId: input.sequenceId, contactIds: [input.id] }),
    ),
});
