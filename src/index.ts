// What TypeScript consumers import.
export type { AppRouter } from './routers/app-router';
export { createServiceClient, type ServiceClient } from './client/trpc-client';
export { createRestClient, type RestClient } from './client/rest-client';
