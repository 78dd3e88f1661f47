import { router } from '../trpc/init';
import { contactsRouter } from './contacts';
import { runsRouter } from './runs';
import { sequencesRouter } from './sequences';

export const appRouter = router({
  contacts: contactsRouter,
  sequences: sequencesRouter,
  runs: runsRouter,
});

export type AppRouter = typeof appRouter;
