import { createTRPCClient, httpLink } from '@trpc/client';
import type { AppRouter } from '../routers/app-router';

// The typed tRPC client for internal TypeScript apps: every procedure, internal ones included
// (runs.transition, which takes a runner key), with input and output types inferred from the
// router. One call per request: the service does not accept batches (each call counts against
// the rate limit).
export function createServiceClient(options: { baseUrl: string; apiKey: string }) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${options.baseUrl.replace(/\/$/, '')}/trpc`,
        headers: { 'x-api-key': options.apiKey },
      }),
    ],
  });
}

export type ServiceClient = ReturnType<typeof createServiceClient>;
