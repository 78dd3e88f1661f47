import { router } from '../trpc/init';
import { activitiesRouter } from './activities';
import { channelsRouter } from './channels';
import { contactsRouter } from './contacts';
import { dashboardRouter } from './dashboard';
import { eventsRouter } from './events';
import { runsRouter } from './runs';
import { sequencesRouter } from './sequences';
import { suppressionsRouter } from './suppressions';
import { webhooksRouter } from './webhooks';

export const appRouter = router({
  contacts: contactsRouter,
  sequences: sequencesRouter,
  runs: runsRouter,
  dashboard: dashboardRouter,
  events: eventsRouter,
  activities: activitiesRouter,
  webhooks: webhooksRouter,
  channels: channelsRouter,
  suppressions: suppressionsRouter,
});

export type AppRouter = typeof appRouter;
