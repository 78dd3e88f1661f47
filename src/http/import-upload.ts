import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Database } from '../db/database';
import type { LogThrottle } from '../logging/log-throttle';
import type { AppRouter } from '../routers/app-router';
import { MAX_IMPORT_BYTES } from '../schemas/contact-import';
import type { ActivitySettings } from '../services/activities/activity-settings';
import type { ChannelSettings } from '../services/channels/channel-settings';
import { csvLine } from '../services/imports/csv-parser';
import type { WebhookSettings } from '../services/webhooks/webhook-settings';
import { createCallerFactory } from '../trpc/init';
import { validationFailed } from './json-body';
import { normalizePath } from './rest-routes';
import { requestContext } from './request-context';
import { errorFrom, sendData, sendFailure } from './rest-api';
import { sendError } from './send-error';
import './express-types';

// The two REST answers of contact imports that are not JSON, beside the REST adapter:
// - POST /contacts/imports with a text/csv body: the body is streamed to the imports folder
//   (never held in memory; at most 50 MB), then contacts.imports.create is called with the
//   file in its context, as the adapter calls any procedure. Other content types go on to the
//   adapter (a JSON body with `csv`). Options come from the query.
// - GET /contacts/imports/{id}/errors: contacts.imports.errors page by page, written as CSV.
// Mounted after the key check and the rate limits, before the JSON body parser.

interface ImportUploadDeps {
  router: AppRouter;
  db: Database;
  logThrottle: LogThrottle;
  dir: string;
  webhooks?: WebhookSettings;
  channels?: ChannelSettings;
  activities?: ActivitySettings;
}

const ERRORS_PATH = /^\/contacts\/imports\/([^/]+)\/errors$/i;

export function importUpload(deps: ImportUploadDeps): RequestHandler {
  const createCaller = createCallerFactory(deps.router);
  const contextDeps = { db: deps.db, webhooks: deps.webhooks, channels: deps.channels, activities: deps.activities, imports: { dir: deps.dir } };

  async function upload(req: Request, res: Response) {
    await receiveUpload(req, res, deps.dir, async (file, options) => {
      const ctx = { ...requestContext(req, contextDeps, 'rest'), upload: { file } };
      try {
        const data = await createCaller(ctx).contacts.imports.create(options);
        sendData(res, ctx, 202, data);
      } catch (cause) {
        sendFailure(req, res, errorFrom(cause), deps.logThrottle);
      }
    });
  }

  async function errorsCsv(req: Request, res: Response, id: string) {
    const ctx = requestContext(req, contextDeps, 'rest');
    const call = createCaller(ctx).contacts.imports.errors;
    await sendErrorsCsv(res, id, (after) => call({ id, after }), (cause) => sendFailure(req, res, errorFrom(cause), deps.logThrottle));
  }

  return (req, res, next) => {
    const pathname = normalizePath(req.path);
    if (req.method === 'POST' && /^\/contacts\/imports$/i.test(pathname) && isCsv(req.headers['content-type'])) {
      return void upload(req, res).catch(next);
    }
    const errors = req.method === 'GET' ? ERRORS_PATH.exec(pathname) : null;
    if (errors) return void errorsCsv(req, res, decodeURIComponent(errors[1]!)).catch(next);
    next();
  };
}

// A text/csv body streamed to a file of the imports folder (never held in memory; at most 50 MB)
// and handed to `create` with the options of the query; the file is removed afterwards unless
// `create` moved it to the import's own name. The API's upload and the dashboard's share it.
export async function receiveUpload(
  req: Request,
  res: Response,
  dir: string,
  create: (file: string, options: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_IMPORT_BYTES) return refuseTooLarge(req, res);
  const input = optionsFromQuery(req);
  if ('problem' in input) return void sendError(req, res, input.problem);
  await fs.promises.mkdir(dir, { recursive: true });
  const file = path.join(dir, `upload-${randomUUID()}.part`);
  try {
    if (!(await receive(req, file))) return refuseTooLarge(req, res);
    await create(file, input.options);
  } finally {
    await fs.promises.rm(file, { force: true });
  }
}

interface ErrorsPage {
  errors: Array<{ row: number; reason: string; values: string[] }>;
  nextAfter: number | null;
  header: string[];
}

// An import's rejected rows as one CSV download, fetched page by page; a first page that fails
// (an unknown import) is answered by `fail` before anything is written.
export async function sendErrorsCsv(res: Response, id: string, page: (after?: number) => Promise<ErrorsPage>, fail: (cause: unknown) => void): Promise<void> {
  let current;
  try {
    current = await page();
  } catch (cause) {
    return fail(cause);
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="import-${id.replace(/[^0-9a-f-]/gi, '')}-errors.csv"`);
  await write(res, csvLine(['row', 'reason', ...current.header]));
  for (;;) {
    for (const error of current.errors) await write(res, csvLine([String(error.row), error.reason, ...error.values]));
    if (current.nextAfter === null) break;
    current = await page(current.nextAfter);
  }
  res.end();
}

// The body, written to `file` as it comes (the write stream's backpressure pauses the request).
// Past MAX_IMPORT_BYTES it stops reading and answers false: the request is not destroyed, so
// that the 413 still reaches the client.
function receive(req: Request, file: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const out = fs.createWriteStream(file);
    let bytes = 0;
    let over = false;
    out.on('error', reject);
    req.on('error', reject);
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      bytes += chunk.length;
      if (bytes > MAX_IMPORT_BYTES) {
        over = true;
        req.unpipe(out);
        out.destroy();
        out.once('close', () => resolve(false));
        // What is left of the body is read and dropped.
        req.resume();
      }
    });
    req.pipe(out);
    out.on('finish', () => {
      if (!over) resolve(true);
    });
  });
}

export function isCsv(type: string | undefined): boolean {
  return type !== undefined && /^(text|application)\/csv\s*(;|$)/i.test(type);
}

function refuseTooLarge(req: Request, res: Response) {
  // The rest of the body is not read: the connection closes after the answer.
  res.setHeader('Connection', 'close');
  sendError(req, res, { status: 413, code: 'payload_too_large', message: `The file is larger than ${MAX_IMPORT_BYTES / (1024 * 1024)} MB; split it into smaller files` });
}

// A text/csv upload's options, from its query: mapping as JSON, tags comma-separated.
function optionsFromQuery(req: Request): { options: Record<string, unknown> } | { problem: ReturnType<typeof validationFailed> } {
  const query = req.query as Record<string, unknown>;
  const options: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (typeof value !== 'string') return { problem: validationFailed(`${name}: give it once, as text`, name) };
    if (name === 'mapping') {
      try {
        options.mapping = JSON.parse(value);
      } catch {
        return { problem: validationFailed('mapping: must be a JSON object, e.g. {"E-mail": "email"}', 'mapping') };
      }
    } else if (name === 'tags') options.tags = value.split(',').map((tag) => tag.trim()).filter((tag) => tag !== '');
    else if (name === 'optedIn') {
      if (value !== 'true' && value !== 'false') return { problem: validationFailed('optedIn: must be true or false', 'optedIn') };
      options.optedIn = value === 'true';
    } else options[name] = value;
  }
  return { options };
}

async function write(res: Response, text: string): Promise<void> {
  if (!res.write(text)) await new Promise<void>((resolve) => res.once('drain', resolve));
}
