import { createHash, randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { toDate } from '../src/db/sql/rows';
import { ValidationError } from '../src/errors/app-errors';
import { contactFieldsSchema } from '../src/schemas/contact';
import { nestsDeeperThan } from '../src/schemas/text';
import { assertWithinLimits, newContactState } from '../src/services/contacts/contact-state';
import { createContact, getContact, getContactByEmail, upsertContacts } from './bare/contacts';
import { recordEvents } from './bare/events';
import { HttpError } from './bare/http-error';
import { RollingLimit } from './bare/rolling-limit';
import { enrollByIds, enrollmentStatus, trigger, unenroll } from './bare/sequences';
import { openSql, sqlTimestamp, type Sql, type SqlMode } from './bare/sql';

// The comparison server of `npm run bench`: bare Express 5 and mysql2 doing, per request, the
// work the service does on the benchmarked REST endpoints (bench/README.md, "Same work"):
// one api_keys SELECT for the key, a rolling per-key limit with the same RateLimit headers,
// the service's own zod schemas for validation, the same SQL statement for statement, and
// the same statuses and bodies. No tRPC, no REST adapter, no ORM, no output validation.
//
// Environment: DATABASE_URL (mysql://), PORT, HOST, RATE_LIMIT_PER_MINUTE,
// AUTH_FAILURE_LIMIT_PER_MINUTE, BARE_SQL (execute | query: see bench/bare/sql.ts).

const env = process.env;
const databaseUrl = env.DATABASE_URL ?? '';
if (!databaseUrl.startsWith('mysql://')) throw new Error('bare-express-server: DATABASE_URL must be mysql://');
const port = Number(env.PORT ?? 3000);
const host = env.HOST ?? '127.0.0.1';
const perKeyPerMinute = Number(env.RATE_LIMIT_PER_MINUTE ?? 120);
const failedAuthPerMinute = Number(env.AUTH_FAILURE_LIMIT_PER_MINUTE ?? 30);
const sqlMode: SqlMode = env.BARE_SQL === 'query' ? 'query' : 'execute';

const sql = openSql(databaseUrl, sqlMode);

// ---- authentication and rate limits (src/services/api-keys.ts, src/http/rate-limit) ----

const KEY_FORMAT = /^svc_[0-9a-f]{40}$/;
const LAST_USED_GRANULARITY_MS = 60_000;

interface Authenticated {
  keyId: string;
  accountId: string;
}

interface KeyRow {
  id: string;
  account_id: string;
  kind: string;
  active: unknown;
  expires_at: unknown;
  last_used_at: unknown;
}

async function authenticate(header: string | undefined): Promise<Authenticated | string> {
  if (header === undefined || header === '') return 'Missing x-api-key header';
  if (!KEY_FORMAT.test(header)) return 'Invalid API key';
  const hash = createHash('sha256').update(header).digest('hex');
  const [row] = await sql.rows<KeyRow>(
    'SELECT id, account_id, kind, active, expires_at, last_used_at FROM api_keys WHERE key_hash = ?',
    [hash],
  );
  if (!row) return 'Invalid API key';
  if (!Number(row.active)) return 'API key is inactive';
  const now = new Date();
  if (row.expires_at !== null && toDate(row.expires_at) <= now) return 'API key has expired';
  const lastUsed = row.last_used_at === null ? 0 : toDate(row.last_used_at).getTime();
  if (now.getTime() - lastUsed >= LAST_USED_GRANULARITY_MS) {
    const at = sqlTimestamp(now);
    void sql
      .transaction((tx) =>
        sql.run('UPDATE api_keys SET last_used_at = ?, updated_at = ? WHERE id = ?', [at, at, row.id], tx),
      )
      .catch((error) => console.error('last_used_at update failed', error));
  }
  return { keyId: row.id, accountId: row.account_id };
}

const perKey = new RollingLimit('api-key', perKeyPerMinute);
const failedAuthPerIp = new RollingLimit('failed-auth', failedAuthPerMinute);

// The body as the service writes it, without an ETag: `application/json` from the procedures
// (the REST adapter), with `; charset=utf-8` from the HTTP layer in front of them (Express's
// res.json: keys, limits, body parsing).
// An error answer as the service gives it: the message, its stable code, a 400's details, and
// the request id.
function fail(
  res: Response,
  status: number,
  code: string,
  error: string,
  details?: Array<{ path: string; message: string }>,
  layer: 'procedure' | 'http' = 'http',
): void {
  reply(res, status, { error, code, ...(details && { details }), requestId: res.locals.requestId as string }, layer);
}

const AUTH_CODES: Record<string, string> = {
  'Missing x-api-key header': 'missing_api_key',
  'Invalid API key': 'invalid_api_key',
  'API key is inactive': 'api_key_inactive',
  'API key has expired': 'api_key_expired',
};

function reply(res: Response, status: number, body: unknown, layer: 'procedure' | 'http' = 'procedure'): void {
  res.statusCode = status;
  res.setHeader('Content-Type', layer === 'http' ? 'application/json; charset=utf-8' : 'application/json');
  res.end(JSON.stringify(body));
}

function accountOf(res: Response): string {
  return (res.locals.auth as Authenticated).accountId;
}

const keyed: RequestHandler = async (req, res, next) => {
  const auth = await authenticate(req.get('x-api-key'));
  const verdict = typeof auth === 'string' ? failedAuthPerIp.hit(req.ip ?? 'unknown') : perKey.hit(auth.keyId);
  for (const [name, value] of verdict.headers) res.append(name, value);
  if (!verdict.allowed) {
    res.setHeader('Retry-After', String(verdict.retryAfterSeconds));
    return void fail(res, 429, 'rate_limited', 'Rate limit exceeded');
  }
  if (typeof auth === 'string') return void fail(res, 401, AUTH_CODES[auth] ?? 'invalid_api_key', auth);
  res.locals.auth = auth;
  next();
};

// ---- bodies (src/http/json-body.ts) and validation (the service's zod schemas) ----

const parseJson = express.json({ limit: '1mb' });
const jsonBody: RequestHandler = (req, res, next) => {
  if (req.method === 'GET') return next();
  parseJson(req, res, (error?: unknown) => {
    if (error) return next(error);
    if (nestsDeeperThan(req.body, 32)) return void fail(res, 400, 'validation_failed', 'Request body is nested deeper than 32 levels');
    const body = req.body as unknown;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      return void fail(res, 400, 'validation_failed', 'Request body must be a JSON object');
    }
    next();
  });
};

function valid<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
  const [first] = details;
  throw new HttpError(400, first.path ? `${first.path}: ${first.message}` : first.message, details);
}

const batchSchema = z.object({
  contacts: z.array(contactFieldsSchema).min(1, 'Give at least one contact').max(100, 'A batch holds at most 100 contacts'),
});
const triggerSchema = z.object({ contact: contactFieldsSchema });
// src/schemas/sequence.ts's contactIdsSchema, restated: that module would load the models.
const contactIdsSchema = z
  .array(z.uuid('Each contact id must be a UUID'))
  .min(1, 'Give at least one contact id')
  .max(500, 'At most 500 contact ids');
const contactIdsBody = z.object({ contactIds: contactIdsSchema });

// ---- routes ----

const api = express.Router();

api.post('/contacts', async (req, res) => {
  const input = valid(contactFieldsSchema, req.body);
  const state = newContactState(input);
  assertWithinLimits(state);
  reply(res, 201, { contact: await createContact(sql, accountOf(res), state) });
});

api.post('/contacts/upsert', async (req, res) => {
  const input = valid(contactFieldsSchema, req.body);
  const { results } = await sql.transaction(async (tx) => {
    const outcome = await upsertContacts(sql, accountOf(res), [input], tx);
    await recordEvents(sql, tx, accountOf(res), outcome.events);
    return outcome;
  });
  const { contact, created } = results[0];
  reply(res, created ? 201 : 200, { contact, created });
});

api.post('/contacts/batch', async (req, res) => {
  const { contacts } = valid(batchSchema, req.body);
  const outcome = await sql.transaction(async (tx) => {
    const upserted = await upsertContacts(sql, accountOf(res), contacts, tx);
    await recordEvents(sql, tx, accountOf(res), upserted.events);
    return upserted;
  });
  reply(res, 201, { summary: { total: contacts.length, inserted: outcome.inserted, updated: outcome.updated } });
});

api.get('/contacts/by-email/:email', async (req, res) => {
  reply(res, 200, { contact: await getContactByEmail(sql, accountOf(res), req.params.email as string) });
});

api.get('/contacts/:id', async (req, res) => {
  reply(res, 200, { contact: await getContact(sql, accountOf(res), req.params.id as string) });
});

api.post('/sequences/:id/trigger', async (req, res) => {
  const { contact } = valid(triggerSchema, req.body);
  reply(res, 202, await trigger(sql, accountOf(res), req.params.id as string, contact));
});

api.post('/sequences/:id/enroll', async (req, res) => {
  const { contactIds } = valid(contactIdsBody, req.body);
  reply(res, 201, await enrollByIds(sql, accountOf(res), req.params.id as string, contactIds));
});

api.post('/sequences/:id/unenroll', async (req, res) => {
  const { contactIds } = valid(contactIdsBody, req.body);
  reply(res, 200, await unenroll(sql, accountOf(res), req.params.id as string, contactIds));
});

api.get('/sequences/:id/enrollments/:contactId', async (req, res) => {
  reply(res, 200, await enrollmentStatus(sql, accountOf(res), req.params.id as string, req.params.contactId as string));
});

// ---- errors (src/http/error-handlers.ts, src/trpc/errors.ts) ----

const notFound: RequestHandler = (_req, res) => void fail(res, 404, 'not_found', 'Not found');

const errorHandler: ErrorRequestHandler = (error: unknown, req: Request, res: Response, next) => {
  if (res.headersSent) return next(error);
  if (error instanceof HttpError) {
    return void fail(res, error.status, error.code, error.message, error.details, 'procedure');
  }
  if (error instanceof ValidationError) {
    return void fail(res, 400, 'validation_failed', error.message, error.details.length > 0 ? error.details : undefined, 'procedure');
  }
  const { type, body } = (error ?? {}) as { type?: string; body?: string };
  if (type === 'entity.parse.failed') {
    let message = 'Malformed JSON body';
    let code = 'malformed_json';
    try {
      JSON.parse(body ?? '');
      message = 'Request body must be a JSON object';
      code = 'validation_failed';
    } catch {
      // malformed it is
    }
    return void fail(res, 400, code, message);
  }
  if (type === 'entity.too.large') return void fail(res, 413, 'payload_too_large', 'Request body too large (limit 1 MiB)');
  console.error('unhandled error', req.method, req.originalUrl, error);
  fail(res, 500, 'internal_error', 'Internal server error', undefined, 'procedure');
};

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.set('trust proxy', false);
app.use((req, res, next) => {
  res.locals.requestId = randomUUID();
  res.setHeader('X-Request-Id', res.locals.requestId as string);
  next();
});
app.get('/healthz', (_req, res) => void reply(res, 200, { status: 'ok' }, 'http'));
app.use('/api/v1', keyed, jsonBody, api);
app.use(notFound);
app.use(errorHandler);

const server = app.listen(port, host, () => {
  console.error(JSON.stringify({ msg: 'listening', port, pid: process.pid, sql: sqlMode }));
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    server.close();
    server.closeIdleConnections();
    void sql.close().finally(() => process.exit(0));
  });
}
