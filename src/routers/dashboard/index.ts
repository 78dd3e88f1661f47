import { router } from '../../trpc/init';
import { dashboardAccountRouter } from './account';
import { dashboardAuthRouter } from './auth';
import { dashboardChannelsRouter } from './channels';
import { dashboardContactsRouter } from './contacts';
import { dashboardKeysRouter } from './keys';
import { dashboardMessagesRouter } from './messages';
import { dashboardRunsRouter } from './runs';
import { dashboardWebhooksRouter } from './webhooks';
import { dashboardSequencesRouter } from './sequences';
import { dashboardSuppressionsRouter } from './suppressions';

// The dashboard's procedures: session only, served on /trpc/dashboard.*, never in the OpenAPI
// document (none has openapi meta).
export const dashboardRouter = router({
  auth: dashboardAuthRouter,
  keys: dashboardKeysRouter,
  webhooks: dashboardWebhooksRouter,
  channels: dashboardChannelsRouter,
  account: dashboardAccountRouter,
  contacts: dashboardContactsRouter,
  sequences: dashboardSequencesRouter,
  runs: dashboardRunsRouter,
  messages: dashboardMessagesRouter,
  suppressions: dashboardSuppressionsRouter,
});
