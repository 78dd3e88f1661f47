// What internal TypeScript consumers import: the router's type for @trpc/client.
export type { AppRouter } from './routers/app-router';
