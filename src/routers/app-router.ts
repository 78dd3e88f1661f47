import { router } from '../trpc/init';
import { contactsRouter } from './contacts';

export const appRouter = router({
  contacts: contactsRouter,
});

export type AppRouter = typeof appRouter;
