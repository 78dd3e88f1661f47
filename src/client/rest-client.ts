import createClient from 'openapi-fetch';
import type { paths } from './rest-api-types';

// A typed REST client: paths, bodies and responses are checked at compile time against the
// published document. './rest-api-types' is not in src/: the build generates it from the
// procedures (scripts/generate-openapi.js; `npm run openapi` alone).
export function createRestClient(options: { baseUrl: string; apiKey: string; fetch?: typeof fetch }) {
  return createClient<paths>({
    baseUrl: `${options.baseUrl.replace(/\/$/, '')}/api/v1`,
    headers: { 'x-api-key': options.apiKey },
    fetch: options.fetch,
  });
}

export type RestClient = ReturnType<typeof createRestClient>;
export type { components, paths } from './rest-api-types';
