import { z } from 'zod';
import { API_KEY_KINDS } from '../../schemas/statuses';
import { text } from '../../schemas/text';
import { createApiKey, listApiKeys, setApiKeyActive } from '../../services/api-keys';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';

// Settings -> Developer -> API keys: the same services, and so the same rules, as the CLI's
// key:create, key:list, key:disable and key:enable, always within the signed-in account.

const name = text().trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters');

export const dashboardKeysRouter = router({
  list: sessionProcedure.query(({ ctx }) => listApiKeys(ctx.db, { accountId: ctx.accountId })),

  create: sessionProcedure
    .input(
      z.object({
        name,
        kind: z.enum(API_KEY_KINDS).default('integration'),
        expiresAt: z.iso
          .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
          .refine((value) => new Date(value).getTime() > Date.now(), 'must be in the future')
          .nullable()
          .default(null),
      }),
    )
    .mutation(({ ctx, input }) =>
      createApiKey(ctx.db, {
        accountId: ctx.accountId,
        name: input.name,
        kind: input.kind,
        expiresAt: input.expiresAt ? new Date(input.expiresAt) : null,
      }),
    ),

  setActive: sessionProcedure
    .input(z.object({ id: z.uuid(), active: z.boolean() }))
    .mutation(({ ctx, input }) => setApiKeyActive(ctx.db, { ...input, accountId: ctx.accountId })),
});
