import type { Request } from 'express';
import type { AppRouter } from '../routers/app-router';
import type { ApiMeta } from '../trpc/init';
import { decodeOrKeep } from './url-decode';

// The route a request was for, as a template: what the access log and the request metrics
// record instead of the URL, which carries ids and emails (/contacts/by-email/ada%40x.io) and
// would give the metrics one series per contact. REST paths come from the procedures' openapi
// meta, matched the way the REST adapter matches them (first match in declaration order, case
// insensitive); tRPC calls are /trpc/<procedure>. Anything else is one fixed label.

export const UNMATCHED_ROUTE = 'unmatched';

const REST_PREFIX = '/api/v1';
// Served by app.ts outside the procedures (the WhatsApp status webhook among them); everything under /docs is the one reference page.
const FIXED_ROUTES = new Set(['/healthz', '/readyz', '/metrics', '/api/v1/openapi.json', '/webhooks/whatsapp']);
const DOCS = '/docs';
const DASHBOARD = '/dashboard';
// One-click unsubscribe links: the token in their path is never logged.
const UNSUBSCRIBE = '/u/';
// Open pixels and tracked links: their tokens neither.
const OPEN = '/t/o/';
const CLICK = '/t/c/';

interface RestRoute {
  method: string;
  pattern: RegExp;
  template: string;
}

export type RouteOf = (req: Request) => string;

export function routeTemplates(router: AppRouter): RouteOf {
  const rest: RestRoute[] = [];
  const procedures = new Set<string>();
  for (const [name, procedure] of Object.entries(router._def.procedures)) {
    procedures.add(name);
    const openapi = (procedure as unknown as { _def: { meta?: ApiMeta } })._def.meta?.openapi;
    if (!openapi) continue;
    const path = `/${openapi.path.replace(/^\/|\/$/g, '')}`;
    const pattern = new RegExp(`^${path.replace(/\{(.+?)\}/g, '[^/]+')}$`, 'i');
    rest.push({ method: openapi.method, pattern, template: `${REST_PREFIX}${path}` });
  }

  const match = (req: Request): string => {
    const pathname = req.originalUrl.split('?')[0];
    const lower = pathname.toLowerCase();
    if (FIXED_ROUTES.has(lower)) return lower;
    if (lower === DOCS || lower.startsWith(`${DOCS}/`)) return DOCS;
    // The dashboard's page and its client routes (a setup link carries its token in the query).
    if (lower === DASHBOARD || lower.startsWith(`${DASHBOARD}/`)) return DASHBOARD;
    if (lower.startsWith(UNSUBSCRIBE) && lower.length > UNSUBSCRIBE.length) return '/u/{token}';
    if (lower.startsWith(OPEN) && lower.length > OPEN.length) return '/t/o/{token}';
    if (lower.startsWith(CLICK) && lower.length > CLICK.length) return '/t/c/{token}';
    if (lower.startsWith('/trpc/')) {
      const procedure = decodeOrKeep(pathname.slice('/trpc/'.length));
      return procedures.has(procedure) ? `/trpc/${procedure}` : UNMATCHED_ROUTE;
    }
    if (lower.startsWith(`${REST_PREFIX}/`)) {
      const path = `/${pathname.slice(REST_PREFIX.length).replace(/^\/|\/$/g, '')}`;
      const found = rest.find((route) => route.method === req.method && route.pattern.test(path));
      if (found) return found.template;
    }
    return UNMATCHED_ROUTE;
  };
  // Asked twice per request: by the access log and by the metrics.
  const seen = new WeakMap<Request, string>();
  return (req) => {
    let route = seen.get(req);
    if (route === undefined) seen.set(req, (route = match(req)));
    return route;
  };
}
