// The layers a request crosses, for comparing the service's profile with the bare server's:
// each part of bench/lib/cpu-profile.ts (a package, a project file, GC) belongs to one. The
// bare server checks the key inside its one handler, so its key check counts as "answer".
const LAYERS: Array<[layer: string, parts: RegExp]> = [
  ['GC', /^GC$/],
  ['mysql2 (statements, socket writes)', /^(mysql2|lru\.min)$/],
  ['answer: handler and response write', /^(http\/rest-api|bench\/bare-express-server)$/],
  ['tRPC, trpc-to-openapi, zod (incl. schemas)', /^(trpc-to-openapi|@trpc\/server|zod|trpc\/|routers\/|url-decode)/],
  ['data access (pool, statements, rows)', /^(sequelize|sequelize-pool|sequelize-typescript|db\/|retry-as-promised|bench\/bare\/sql)/],
  ['access log, request id, route template', /^(pino|sonic-boom|http\/access-log|http\/request-id|http\/route-template|on-finished)/],
  ['rate limit', /rate-limit|rolling-limit/],
  ['Express, body parsing', /^(router|express|parseurl|path-to-regexp|finalhandler|body-parser|raw-body|type-is|content-type|iconv-lite|http\/chain|http\/json-body|forwarded|proxy-addr)/],
  ['key check', /api-key/],
  ['services (domain, ids, events)', /^(services\/|bench\/bare\/|src\/|schemas|uuid|validator)/],
];
const OTHER = 'other (Node internals, timers, microtasks)';

export function layerOf(part: string): string {
  return LAYERS.find(([, parts]) => parts.test(part))?.[0] ?? OTHER;
}

// µs per request by layer, from a profile's shares of its busy time per request (ms).
export function byLayer(byPart: ReadonlyArray<[string, number]>, busyMsPerRequest: number): Map<string, number> {
  const layers = new Map<string, number>();
  for (const [part, share] of byPart) {
    const layer = layerOf(part);
    layers.set(layer, (layers.get(layer) ?? 0) + share * busyMsPerRequest * 1000);
  }
  return layers;
}
