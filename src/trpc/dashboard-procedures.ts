import { AuthenticationError } from '../errors/app-errors';
import { publicProcedure } from './init';

// The dashboard's procedures authenticate by session cookie only. A request that came in by
// API key (or in-process, with a key) carries no `dashboard` in its context, so it is refused
// here whatever its key, and the key procedures (accountProcedure) never look at a cookie.

export const dashboardPublicProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.dashboard) throw new AuthenticationError('sign_in_required');
  return next({ ctx: { dashboard: ctx.dashboard } });
});

export const sessionProcedure = dashboardPublicProcedure.use(({ ctx, next }) => {
  const user = ctx.dashboard.user;
  if (!user) throw new AuthenticationError('sign_in_required');
  return next({ ctx: { user, accountId: user.accountId } });
});
