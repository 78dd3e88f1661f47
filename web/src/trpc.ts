import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { createTRPCOptionsProxy } from '@trpc/tanstack-react-query';
import type { AppRouter } from '../../src/routers/app-router';

// The one client: /trpc on the same origin, one call per request (the server refuses batches),
// the session cookie sent by the browser. Types come from the router itself.
// A session that ended (expired, signed out elsewhere, user disabled) shows in any call as a
// 401: asking the server who is signed in again brings the sign-in page back.
function onSessionEnded(error: unknown) {
  if (error instanceof TRPCClientError && error.data?.httpStatus === 401 && error.data?.path !== 'dashboard.auth.signIn') {
    void queryClient.invalidateQueries({ queryKey: trpc.dashboard.auth.me.queryKey() });
  }
}

export const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError: onSessionEnded }),
  mutationCache: new MutationCache({ onError: onSessionEnded }),
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      // A refused session will not get better by asking again.
      retry: (count, error) => !(error instanceof TRPCClientError && error.data?.httpStatus < 500) && count < 2,
    },
  },
});

const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: '/trpc' })] });

export const trpc = createTRPCOptionsProxy<AppRouter>({ client, queryClient });

export type AppError = TRPCClientError<AppRouter>;

// The service's field errors (`details`), by field name, for forms to show at the field.
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof TRPCClientError)) return {};
  const details = (error.data as { details?: Array<{ path: string; message: string }> | null } | undefined)?.details ?? [];
  return Object.fromEntries(details.map((d) => [d.path, d.message]));
}

export function errorMessage(error: unknown): string {
  if (error instanceof TRPCClientError) {
    // A 400's details are marked at their fields; another status's (a 409 naming a step's From
    // that has no sender) may name a field of another form: its message says what to do.
    if (error.data?.httpStatus === 400 && Object.keys(fieldErrors(error)).length > 0) return 'Please correct the fields marked below.';
    return error.message;
  }
  return 'Something went wrong. Please try again.';
}
