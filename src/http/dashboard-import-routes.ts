import type { Request, Response, Router } from 'express';
import express from 'express';
import type { LogThrottle } from '../logging/log-throttle';
import type { AppRouter } from '../routers/app-router';
import type { Context } from '../trpc/context';
import { restErrorFor } from '../trpc/errors';
import { createCallerFactory } from '../trpc/init';
import { isCsv, receiveUpload, sendErrorsCsv } from './import-upload';
import { errorFrom } from './rest-api';
import { reportUnavailable } from './report-unavailable';
import { sendError } from './send-error';
import { ServiceUnavailableError } from '../errors/app-errors';
import './express-types';

// The dashboard's two import calls that are not JSON, on its own /trpc/dashboard.* mount (so the
// session cookie and the cross-site check apply, and an API key is refused):
// - POST dashboard.contacts.imports.upload, the file as a text/csv body and the options in the
//   query: streamed to the imports folder by the API's own upload (./import-upload.ts), then
//   dashboard.contacts.imports.create with the file in its context. A file of 50 MB never
//   passes through the JSON body limit or the browser's memory as one string.
// - GET dashboard.contacts.imports.errorsCsv?id=: the rejected rows as a CSV download.
// Errors are answered in the tRPC shape of the mount (sendError under /trpc/).

export function dashboardImportRoutes(deps: {
  router: AppRouter;
  logThrottle: LogThrottle;
  dir: string;
  context: (req: Request, res: Response) => Promise<Context>;
}): Router {
  const createCaller = createCallerFactory(deps.router);
  const routes = express.Router();

  const fail = (req: Request, res: Response) => (cause: unknown) => {
    const error = errorFrom(cause);
    const mapped = restErrorFor(error);
    if (error.cause instanceof ServiceUnavailableError) reportUnavailable(req, error.cause, deps.logThrottle);
    else if (mapped.status >= 500) req.log.error({ err: error.cause ?? error }, 'request failed');
    sendError(req, res, { status: mapped.status, code: mapped.body.code, message: mapped.body.error, details: mapped.body.details });
  };

  routes.post('/dashboard.contacts.imports.upload', (req, res, next) => {
    if (!isCsv(req.headers['content-type'])) {
      return sendError(req, res, { status: 415, code: 'unsupported_media_type', message: 'Send the file as the body, with Content-Type: text/csv' });
    }
    receiveUpload(req, res, deps.dir, async (file, options) => {
      const ctx = { ...(await deps.context(req, res)), upload: { file } };
      try {
        const data = await createCaller(ctx).dashboard.contacts.imports.create(options);
        res.status(200).json({ result: { data } });
      } catch (cause) {
        fail(req, res)(cause);
      }
    }).catch(next);
  });

  routes.get('/dashboard.contacts.imports.errorsCsv', (req, res, next) => {
    const id = typeof req.query.id === 'string' ? req.query.id : '';
    (async () => {
      const call = createCaller(await deps.context(req, res)).dashboard.contacts.imports.errors;
      await sendErrorsCsv(res, id, (after) => call({ id, after }), fail(req, res));
    })().catch(next);
  });

  return routes;
}
