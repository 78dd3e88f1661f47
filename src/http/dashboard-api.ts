import type { ChannelSettings } from '../services/channels/channel-settings';
import type { TestSendDeps } from '../services/messages/test-sends';
import type { ActivitySettings } from '../services/activities/activity-settings';
import type { WebhookSettings } from '../services/webhooks/webhook-settings';
import express, { type Request, type Response, type Router } from 'express';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import type { Database } from '../db/database';
import { ServiceUnavailableError } from '../errors/app-errors';
import type { LogThrottle } from '../logging/log-throttle';
import type { AppRouter } from '../routers/app-router';
import { resolveSession } from '../services/dashboard/sessions';
import type { DashboardHttp } from '../trpc/dashboard-context';
import { retryAfterSeconds } from '../trpc/errors';
import { dashboardCsrf } from './dashboard-csrf';
import { dashboardImportRoutes } from './dashboard-import-routes';
import { importsDir } from '../services/imports/imports-dir';
import { jsonBody } from './json-body';
import { reportUnavailable } from './report-unavailable';
import { requestContext } from './request-context';
import { sendError } from './send-error';
import { signInLimiters } from './sign-in-limit';
import type { SlidingLog } from './rate-limit/sliding-window-store';
import './express-types';

export const SESSION_COOKIE = 'svc_session';
export const KEY_NOT_ACCEPTED = 'The dashboard procedures take a signed-in session, not an API key';

export interface DashboardApiOptions {
  router: AppRouter;
  db: Database;
  logThrottle: LogThrottle;
  signInLog: SlidingLog;
  // PUBLIC_BASE_URL's origin, when the service is reached under a name of its own.
  publicOrigin?: string;
  // Webhook URL rules, as for the API.
  webhooks?: WebhookSettings;
  activities?: ActivitySettings;
  // Secrets key and sender defaults, as for the API.
  channels?: ChannelSettings;
  // The message editor's test sends.
  testSends?: TestSendDeps;
  // The contact imports' folder (DATA_DIR/imports).
  imports?: { dir: string };
}

function sessionCookie(req: Request): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=');
  }
  return undefined;
}

// /trpc/dashboard.*: the same router, reached by session cookie instead of API key. Other
// paths pass on to the keyed /trpc mount, which never reads the cookie.
export function dashboardApi({ router, db, logThrottle, signInLog, publicOrigin, webhooks, channels, activities, testSends, imports }: DashboardApiOptions): Router {
  const api = express.Router();
  // The context of a dashboard call: the session's user (or none), and the cookie's setters.
  const context = async (request: Request, res: Response) => {
    const user = await resolveSession(db, sessionCookie(request));
    const cookie = { httpOnly: true, sameSite: 'lax', secure: request.secure, path: '/' } as const;
    const dashboard: DashboardHttp = {
      user,
      ip: request.ip ?? 'unknown',
      startSession: (session) => res.cookie(SESSION_COOKIE, session.token, { ...cookie, expires: session.expiresAt }),
      endSession: () => res.clearCookie(SESSION_COOKIE, cookie),
    };
    return { ...requestContext(request, { db, webhooks, channels, activities, imports }, 'trpc'), dashboard, testSends };
  };
  const trpc = createExpressMiddleware({
    router,
    allowBatching: false,
    createContext: ({ req, res }) => context(req as Request, res as Response),
    responseMeta: ({ errors }) => {
      const retryAfter = errors.map(retryAfterSeconds).find((seconds) => seconds !== undefined);
      // Account data: never kept by a shared cache or the browser's back button.
      const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
      if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
      return { headers };
    },
    onError: ({ error, req }) => {
      if (error.cause instanceof ServiceUnavailableError) reportUnavailable(req as Request, error.cause, logThrottle);
      else if (error.code === 'INTERNAL_SERVER_ERROR') (req as Request).log.error({ err: error.cause ?? error }, 'request failed');
    },
  });
  const onlyDashboard: express.RequestHandler = (req, _res, next) => (req.path.startsWith('/dashboard.') ? next() : next('router'));
  // A key is refused outright, even where a procedure needs no session (auth.me, signIn): an
  // integration that sends one here has the wrong address, and should learn it.
  const noKeys: express.RequestHandler = (req, res, next) =>
    req.get('x-api-key') === undefined ? next() : sendError(req, res, { status: 401, code: 'api_key_not_accepted', message: KEY_NOT_ACCEPTED });
  api.use(onlyDashboard, noKeys, dashboardCsrf(publicOrigin));
  // The import's file is a text/csv body: before the JSON parser.
  api.use(dashboardImportRoutes({ router, logThrottle, dir: imports?.dir ?? importsDir(undefined), context }));
  api.use(...jsonBody());
  api.post('/dashboard.auth.signIn', ...signInLimiters(signInLog));
  api.use(trpc);
  return api;
}
