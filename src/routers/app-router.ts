import { router } from '../trpc/init';
import { contactsRouter } from './contacts';
import { dashboardRouter } from './dashboard';
import { runsRouter } from './runs';
import { sequencesRouter } from './sequences';

export const appRouter = router({
  contacts: contactsRouter,
  sequences: sequencesRouter,
  runs: runsRouter,
  dashboard: dashboardRouter,
});

export type AppRouter = typeof appRouter;
