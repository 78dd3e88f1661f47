import type { AnyTRPCProcedure, AnyTRPCRouter } from '@trpc/server';
import type { ApiMeta } from '../trpc/init';
import { restInputSchema, type RestInputSchema } from './rest-input-schema';

// The REST surface's routing table, read once from the procedures' openapi meta: the same
// matching as trpc-to-openapi's, which writes the OpenAPI document from the same meta. Per
// method, the routes in the router's order, and the first whose path matches wins (so static
// paths are declared before parameterised ones); `{name}` matches one non-empty segment, and
// letters match in either case.

export interface RestRoute {
  // The procedure's dotted path, e.g. contacts.get.
  path: string;
  // The same path split, for createCaller's property chain.
  segments: string[];
  pattern: RegExp;
  parameters: string[];
  successStatus?: number;
  input: RestInputSchema;
}

export type RestRoutes = Map<string, RestRoute[]>;

export function restRoutes(router: AnyTRPCRouter): RestRoutes {
  const routes: RestRoutes = new Map();
  for (const [path, procedure] of Object.entries(router._def.procedures as Record<string, AnyTRPCProcedure>)) {
    const meta = procedure._def.meta as ApiMeta | undefined;
    const openapi = meta?.openapi;
    if (!openapi || openapi.enabled === false || procedure._def.type === 'subscription') continue;
    const template = normalizePath(openapi.path);
    const parameters = Array.from(template.matchAll(/\{(.+?)\}/g), ([, name]) => name);
    const route: RestRoute = {
      path,
      segments: path.split('.'),
      pattern: new RegExp(`^${template.replace(/\{(.+?)\}/g, (_, name: string) => `(?<${name}>[^/]+)`)}$`, 'i'),
      parameters,
      successStatus: meta?.successStatus,
      input: restInputSchema(procedure),
    };
    const forMethod = routes.get(openapi.method) ?? [];
    forMethod.push(route);
    routes.set(openapi.method, forMethod);
  }
  return routes;
}

// One leading slash, no trailing one: `/contacts/` is `/contacts`.
export function normalizePath(path: string): string {
  return `/${path.replace(/^\/|\/$/g, '')}`;
}

export interface RouteMatch {
  route: RestRoute;
  // Path parameters as they appear in the URL, still percent-encoded.
  params: Record<string, string>;
}

export function matchRoute(routes: RestRoutes, method: string, pathname: string): RouteMatch | undefined {
  const candidates = routes.get(method);
  if (!candidates) return undefined;
  for (const route of candidates) {
    const match = route.pattern.exec(pathname);
    if (match) return { route, params: (match.groups ?? {}) as Record<string, string> };
  }
  return undefined;
}

// The methods that have a route for this path, for a 405's Allow header when the request's own
// method has none.
export function allowedMethods(routes: RestRoutes, pathname: string): string[] {
  const methods: string[] = [];
  for (const [method, candidates] of routes) {
    if (candidates.some((route) => route.pattern.test(pathname))) methods.push(method);
  }
  return methods.sort();
}
