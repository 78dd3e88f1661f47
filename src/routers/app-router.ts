import { router } from '../trpc/init';
import { contactsRouter } from './contacts';
import { eventsRouter } from './events';
import { runsRouter } from './runs';
import { sequencesRouter } from './sequences';
import { webhooksRouter } from './webhooks';

export const appRouter = router({
  contacts: contactsRouter,
  sequences: sequencesRouter,
  runs: runsRouter,
  events: eventsRouter,
  webhooks: webhooksRouter,
});

export type AppRouter = typeof appRouter;
