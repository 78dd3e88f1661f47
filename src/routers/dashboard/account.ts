import { accountUsage } from '../../services/account-usage';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';

export const dashboardAccountRouter = router({
  get: sessionProcedure.query(({ ctx }) => accountUsage(ctx.db, { accountId: ctx.accountId })),
});
