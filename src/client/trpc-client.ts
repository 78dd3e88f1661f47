import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { AppRouter } from '../routers/app-router';

// The typed tRPC client for internal TypeScript apps: every procedure, internal ones included
// (runs.transition), with input and output types inferred from the router.
export function createServiceClient(options: { baseUrl: string; apiKey: string }) {
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${options.baseUrl.replace(/\/$/, '')}/trpc`,
        headers: { 'x-api-key': options.apiKey },
      }),
    ],
  });
}

export type ServiceClient = ReturnType<typeof createServiceClient>;
