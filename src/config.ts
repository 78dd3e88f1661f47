import path from 'node:path';
import { z } from 'zod';
import { smtpUrlProblem } from './schemas/smtp-url';
import { parseSecretsKey, SECRETS_KEY_FORMAT } from './services/secrets/secrets-key';
import { isMailbox } from './schemas/text';
import { sendgridPublicKey } from './services/bounces/sendgrid-signature';

const DOMAIN_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]{1,256}$/;

// The only place that reads process.env: everything else receives a Config.

export const DEFAULT_AUTH_FAILURE_LIMIT = 30;

export interface DatabaseTimeouts {
  // Waiting for a pooled connection, or for a new one to be made.
  acquireTimeoutMs: number;
  // One statement, from the call until its last row.
  queryTimeoutMs: number;
}
export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = { acquireTimeoutMs: 3_000, queryTimeoutMs: 3_000 };

export interface HttpTimeouts {
  // Receiving a whole request, headers and body.
  requestTimeoutMs: number;
  // How long an idle keep-alive connection stays open.
  keepAliveTimeoutMs: number;
  // How long a new connection may stay silent before its first request.
  firstRequestTimeoutMs: number;
}

export const DEFAULT_EMAIL_MAX_PER_SECOND = 100;
// The Cloud API's own default throughput per business phone number.
export const DEFAULT_WHATSAPP_MAX_PER_SECOND = 80;
export const DEFAULT_WHATSAPP_API_URL = 'https://graph.facebook.com/v21.0';
// Generous: mailbox providers send their users' one-click POSTs from a few shared addresses.
export const DEFAULT_UNSUBSCRIBE_LIMIT_PER_MINUTE = 300;

const envSchema = z.object({
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^(sqlite:|mysql:\/\/)/, 'must start with sqlite: or mysql://')
    .optional(),
  PORT: z
    .string()
    .regex(/^\d{1,5}$/, 'must be a port number')
    .transform(Number)
    .pipe(z.number().max(65535, 'must be a port number'))
    .default(3000),
  // This machine only until the operator opens it: a first start prints a live key and a setup
  // link. The container image sets HOST=0.0.0.0 itself (Dockerfile).
  HOST: z.string().trim().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(120),
  AUTH_FAILURE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(DEFAULT_AUTH_FAILURE_LIMIT),
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(25),
  REDIS_URL: z
    .string()
    .trim()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional(),
  // Bounded waits (docs/operations.md "Timeouts"): a dependency that does not answer costs a request seconds.
  DB_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().positive().default(DEFAULT_DATABASE_TIMEOUTS.acquireTimeoutMs),
  DB_QUERY_TIMEOUT_MS: z.coerce.number().int().positive().default(DEFAULT_DATABASE_TIMEOUTS.queryTimeoutMs),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(65_000),
  // A connection that sends nothing for this long before its first request is closed without
  // an answer. Node's own timeouts start at a request's first byte, so without it a socket
  // that never sends one stays open for good, and a few thousand of them use up the process's
  // file descriptors.
  FIRST_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  METRICS_TOKEN: z.string().trim().min(16, 'must be at least 16 characters').optional(),
  // The service's absolute address as clients and people reach it: the OpenAPI document's
  // `servers` URL, the dashboard's setup links, the Origin its mutations must carry, and the
  // links in messages that unsubscribe.
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  // The sender of an email step that names none, for an account that has set none.
  EMAIL_FROM: z.string().trim().refine(isMailbox, 'must be an email address, or a name and an address: Shop <news@shop.example>').optional(),
  // Accounts' SMTP relays on loopback, private, link-local or metadata addresses
  // (docs/channels.md "Verified sending domains and the DNS records"). No default here: it
  // depends on the database (loadConfig), as WEBHOOK_ALLOW_INSECURE's.
  SMTP_ALLOW_PRIVATE_RELAYS: z.enum(['true', 'false']).optional(),
  // SMTP_URL keeps what it receives (Mailpit in docker-compose.yml): nothing leaves, so the start
  // does not ask for an https PUBLIC_BASE_URL (src/startup/sending-checks.ts).
  SMTP_URL_CAPTURES: z.enum(['true', 'false']).default('false'),
  METRICS_PORT: z
    .string()
    .regex(/^\d{1,5}$/, 'must be a port number')
    .transform(Number)
    .pipe(z.number().max(65535, 'must be a port number'))
    .optional(),
  // The dashboard's address as people reach it (setup links, the Origin check), e.g.
  // https://svc.example.com; else http://localhost:PORT.
  // Behind a reverse proxy: Express's `trust proxy` (true, a hop count, or addresses), so that
  // the client IP and https (Secure cookies) come from X-Forwarded-*.
  TRUST_PROXY: z
    .string()
    .trim()
    .transform((value) => (value === 'true' ? true : value === 'false' ? false : /^\d+$/.test(value) ? Number(value) : value))
    .optional(),
  EVENT_RETENTION_DAYS: z.coerce.number().int().positive().max(3650).default(30),
  // The step executions of runs that ended longer ago than this are deleted (docs/operations.md).
  RUN_HISTORY_DAYS: z.coerce.number().int().positive().max(3650).default(90),
  // Activities (docs/activities.md) are kept this long, by occurredAt, and refused when older.
  ACTIVITY_RETENTION_DAYS: z.coerce.number().int().positive().max(3650).default(90),
  // Webhooks (docs/webhooks.md): the insecure switch must stay off in production.
  // No default here: it depends on the database (loadConfig).
  WEBHOOK_ALLOW_INSECURE: z.enum(['true', 'false']).optional(),
  WEBHOOK_DISPATCHER: z.enum(['on', 'off']).default('on'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(10_000).default(10_000),
  // The sequence engine (docs/sequences.md "How runs move").
  SEQUENCE_ENGINE: z.enum(['on', 'off']).default('on'),
  // The data folder of the embedded default: its database, its secrets key file.
  DATA_DIR: z.string().trim().min(1).optional(),
  // Secrets at rest and unsubscribe links (docs/channels.md "Secrets at rest").
  SECRETS_KEY: z
    .string()
    .refine((value) => parseSecretsKey(value) !== null, SECRETS_KEY_FORMAT)
    .transform((value) => parseSecretsKey(value)!)
    .optional(),
  // The senders' server-wide defaults and limits (docs/channels.md).
  SMTP_URL: z
    .string()
    .trim()
    .max(2048)
    .refine((value) => smtpUrlProblem(value) === null, { message: 'must be an smtp:// or smtps:// URL with a host' })
    .optional(),
  // How long an email step waits for the reply to its final dot (RFC 5321 §4.5.3.2.6: 10
  // minutes); past it the outcome is unknown (docs/channels.md "Sending email").
  SMTP_DATA_TIMEOUT_MS: z.coerce.number().int().positive().max(3_600_000).default(600_000),
  EMAIL_MAX_PER_SECOND: z.coerce.number().int().positive().max(100_000).default(DEFAULT_EMAIL_MAX_PER_SECOND),
  WHATSAPP_API_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default(DEFAULT_WHATSAPP_API_URL),
  WHATSAPP_MAX_PER_SECOND: z.coerce.number().int().positive().max(100_000).default(DEFAULT_WHATSAPP_MAX_PER_SECOND),
  // One-click unsubscribe requests with a token that does not verify, per client IP (docs/channels.md "One-click unsubscribe").
  UNSUBSCRIBE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(DEFAULT_UNSUBSCRIBE_LIMIT_PER_MINUTE),
  // The webhook step's sends (docs/sequences.md "The webhook step"), per process: requests under
  // way at once per endpoint, and requests started per second per account.
  WEBHOOK_STEP_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(32),
  WEBHOOK_STEP_MAX_PER_SECOND: z.coerce.number().int().min(1).max(100_000).default(2_000),
  // WhatsApp's status webhook (docs/messages.md "The status webhook"): the Meta app's secret,
  // which signs each POST, and the token its subscription handshake must present.
  WHATSAPP_APP_SECRET: z.string().trim().min(8, 'must be at least 8 characters').optional(),
  WHATSAPP_VERIFY_TOKEN: z.string().trim().min(8, 'must be at least 8 characters').max(256).optional(),
  // Late bounces and complaints (docs/channels.md "The bounce domain and the listener"): the
  // envelope sender's domain (verified for every account as a sending domain too), the inbound
  // SMTP listener (off unless a port is given), and the unsubscribe mailbox of List-Unsubscribe's
  // mailto:.
  BOUNCE_DOMAIN: z.string().trim().toLowerCase().regex(DOMAIN_NAME, 'must be a domain name, e.g. bounces.shop.example').optional(),
  BOUNCE_SMTP_PORT: z
    .string()
    .regex(/^\d{1,5}$/, 'must be a port number')
    .transform(Number)
    .pipe(z.number().max(65535, 'must be a port number'))
    .optional(),
  BOUNCE_SMTP_HOST: z.string().trim().min(1).default('127.0.0.1'),
  UNSUBSCRIBE_MAILBOX: z
    .string()
    .trim()
    .toLowerCase()
    .refine(
      (value) => /^[a-z0-9._-]{1,19}@[^@\s]+$/.test(value) && DOMAIN_NAME.test(value.split('@')[1]!),
      'must be an address whose local part is 1 to 19 letters, digits, . _ or - (a token is added after a +), e.g. unsubscribe@bounces.shop.example',
    )
    .optional(),
  // Provider event webhooks (docs/channels.md "Provider webhooks (SES, SendGrid)").
  SES_SNS_TOPIC_ARNS: z
    .string()
    .trim()
    .transform((value) => value.split(',').map((arn) => arn.trim()).filter((arn) => arn.length > 0))
    .refine((arns) => arns.length > 0 && arns.every((arn) => SNS_TOPIC_ARN.test(arn)), 'must be SNS topic ARNs separated by commas: arn:aws:sns:<region>:<account>:<topic>')
    .optional(),
  SENDGRID_WEBHOOK_PUBLIC_KEY: z
    .string()
    .trim()
    .refine((value) => sendgridPublicKey(value) !== null, 'must be the Event Webhook\'s verification key: an ECDSA P-256 public key, base64 (as SendGrid shows it) or PEM')
    .optional(),
});

export type LogLevel = z.infer<typeof envSchema>['LOG_LEVEL'];

export interface Config {
  databaseUrl: string;
  port: number;
  host: string;
  logLevel: LogLevel;
  rateLimitPerMinute: number;
  // Requests with a missing or bad key, per client IP.
  authFailureLimitPerMinute: number;
  redisUrl?: string;
  // How long in-flight requests may run after SIGTERM/SIGINT before the process gives up on them.
  shutdownTimeoutMs: number;
  databaseTimeouts: DatabaseTimeouts;
  httpTimeouts: HttpTimeouts;
  // GET /metrics: with a bearer token on the service's port, or on a port of its own.
  metricsToken?: string;
  metricsPort?: number;
  publicBaseUrl: string;
  // The Origin the dashboard's mutations must carry: set only when PUBLIC_BASE_URL is.
  publicOrigin?: string;
  // EMAIL_FROM.
  emailFrom?: string;
  trustProxy: boolean | number | string;
  // Events older than this are purged (docs/webhooks.md "The events feed").
  eventRetentionDays: number;
  // Runs that ended more than this many days ago lose their step executions (timelines); the
  // run rows stay.
  runHistoryDays: number;
  activityRetentionDays: number;
  // http:// and private addresses for webhook URLs; only for tests and local development.
  webhookAllowInsecure: boolean;
  // The webhook dispatcher runs in the service unless off (then `npm run worker` runs it).
  webhookDispatcher: boolean;
  // One delivery attempt, connect to end of response; a claim's lease is 3 times this.
  webhookTimeoutMs: number;
  // The sequence engine runs in the service unless off (then `npm run worker` runs it).
  sequenceEngine: boolean;
  // DATA_DIR; else the folder of the embedded database's file; else data/.
  dataDir: string;
  // SECRETS_KEY's 32 bytes, when set (docs/channels.md "Secrets at rest").
  secretsKey?: Buffer;
  // Server-wide sender defaults and per-account caps.
  channels: {
    smtpUrl?: string;
    emailFrom?: string;
    // BOUNCE_DOMAIN.
    bounceDomain?: string;
    // SMTP_ALLOW_PRIVATE_RELAYS.
    allowPrivateRelays: boolean;
    // SMTP_URL_CAPTURES: SMTP_URL is a catching relay that sends nothing on.
    smtpUrlCaptures: boolean;
    emailMaxPerSecond: number;
    whatsappApiUrl: string;
    whatsappMaxPerSecond: number;
  };
  unsubscribeLimitPerMinute: number;
  // SMTP_DATA_TIMEOUT_MS: an email step's wait for the reply to its final dot.
  smtpDataTimeoutMs: number;
  // The webhook step's sends, per process: per endpoint at once, per account per second.
  webhookStepConcurrency: number;
  webhookStepMaxPerSecond: number;
  // /webhooks/whatsapp answers 404 for what is not set.
  whatsappWebhook: { appSecret?: string; verifyToken?: string };
  // BOUNCE_DOMAIN, BOUNCE_SMTP_PORT (the listener: absent, off), BOUNCE_SMTP_HOST, UNSUBSCRIBE_MAILBOX.
  bounces: { domain?: string; smtpPort?: number; smtpHost: string; unsubscribeMailbox?: string };
  // /webhooks/email/ses and /webhooks/email/sendgrid answer 404 unless set.
  emailWebhooks: { sesTopicArns: string[]; sendgridPublicKey?: string };
}

export const DEFAULT_DATA_DIR = 'data';
export const DEFAULT_DATABASE_URL = databaseUrlIn(DEFAULT_DATA_DIR);

function databaseUrlIn(dataDir: string): string {
  return `sqlite:${path.join(dataDir, 'service.sqlite')}`;
}

// The embedded database and the key file live together: DATA_DIR names the folder of both;
// without it, a DATABASE_URL naming an SQLite file puts the key beside that file.
export function dataDirFor(dataDir: string | undefined, databaseUrl: string): string {
  if (dataDir) return dataDir;
  const sqliteFile = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length).replace(/^\/\//, '') : '';
  if (sqliteFile && sqliteFile !== ':memory:') return path.dirname(sqliteFile);
  return DEFAULT_DATA_DIR;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable is treated as unset, as shells and compose files often produce them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  const values = parsed.data;
  if (values.BOUNCE_SMTP_PORT !== undefined && !values.BOUNCE_DOMAIN && !values.UNSUBSCRIBE_MAILBOX) {
    throw new Error('Invalid configuration: BOUNCE_SMTP_PORT: the listener takes mail for BOUNCE_DOMAIN and UNSUBSCRIBE_MAILBOX only: set one of them');
  }
  const databaseUrl = values.DATABASE_URL ?? databaseUrlIn(values.DATA_DIR ?? DEFAULT_DATA_DIR);
  return {
    databaseUrl,
    port: values.PORT,
    host: values.HOST,
    logLevel: values.LOG_LEVEL,
    rateLimitPerMinute: values.RATE_LIMIT_PER_MINUTE,
    authFailureLimitPerMinute: values.AUTH_FAILURE_LIMIT_PER_MINUTE,
    redisUrl: values.REDIS_URL,
    shutdownTimeoutMs: values.SHUTDOWN_TIMEOUT_SECONDS * 1000,
    databaseTimeouts: { acquireTimeoutMs: values.DB_ACQUIRE_TIMEOUT_MS, queryTimeoutMs: values.DB_QUERY_TIMEOUT_MS },
    httpTimeouts: {
      requestTimeoutMs: values.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: values.KEEP_ALIVE_TIMEOUT_MS,
      firstRequestTimeoutMs: values.FIRST_REQUEST_TIMEOUT_MS,
    },
    metricsToken: values.METRICS_TOKEN,
    metricsPort: values.METRICS_PORT,
    publicBaseUrl: (values.PUBLIC_BASE_URL ?? `http://localhost:${values.PORT}`).replace(/\/+$/, ''),
    publicOrigin: values.PUBLIC_BASE_URL ? new URL(values.PUBLIC_BASE_URL).origin : undefined,
    emailFrom: values.EMAIL_FROM,
    trustProxy: values.TRUST_PROXY ?? false,
    eventRetentionDays: values.EVENT_RETENTION_DAYS,
    runHistoryDays: values.RUN_HISTORY_DAYS,
    activityRetentionDays: values.ACTIVITY_RETENTION_DAYS,
    // The embedded database is for trying the service on one's own machine, whose webhook
    // receiver is on that machine too (http://127.0.0.1:...), as in the README's walk-through.
    // A server database is a deployment: https to public addresses only, unless told otherwise.
    webhookAllowInsecure: (values.WEBHOOK_ALLOW_INSECURE ?? (databaseUrl.startsWith('sqlite:') ? 'true' : 'false')) === 'true',
    webhookDispatcher: values.WEBHOOK_DISPATCHER === 'on',
    webhookTimeoutMs: values.WEBHOOK_TIMEOUT_MS,
    sequenceEngine: values.SEQUENCE_ENGINE === 'on',
    dataDir: dataDirFor(values.DATA_DIR, databaseUrl),
    secretsKey: values.SECRETS_KEY,
    channels: {
      smtpUrl: values.SMTP_URL,
      emailFrom: values.EMAIL_FROM,
      bounceDomain: values.BOUNCE_DOMAIN,
      // As WEBHOOK_ALLOW_INSECURE: the embedded database is tried on one's own machine, with a
      // relay there too (Mailpit); a server database is a deployment, where a tenant's relay
      // on an inside address is a port scanner.
      allowPrivateRelays: (values.SMTP_ALLOW_PRIVATE_RELAYS ?? (databaseUrl.startsWith('sqlite:') ? 'true' : 'false')) === 'true',
      smtpUrlCaptures: values.SMTP_URL_CAPTURES === 'true',
      emailMaxPerSecond: values.EMAIL_MAX_PER_SECOND,
      whatsappApiUrl: values.WHATSAPP_API_URL.replace(/\/+$/, ''),
      whatsappMaxPerSecond: values.WHATSAPP_MAX_PER_SECOND,
    },
    unsubscribeLimitPerMinute: values.UNSUBSCRIBE_LIMIT_PER_MINUTE,
    smtpDataTimeoutMs: values.SMTP_DATA_TIMEOUT_MS,
    webhookStepConcurrency: values.WEBHOOK_STEP_CONCURRENCY,
    webhookStepMaxPerSecond: values.WEBHOOK_STEP_MAX_PER_SECOND,
    whatsappWebhook: { appSecret: values.WHATSAPP_APP_SECRET, verifyToken: values.WHATSAPP_VERIFY_TOKEN },
    bounces: {
      domain: values.BOUNCE_DOMAIN,
      smtpPort: values.BOUNCE_SMTP_PORT,
      smtpHost: values.BOUNCE_SMTP_HOST,
      unsubscribeMailbox: values.UNSUBSCRIBE_MAILBOX,
    },
    emailWebhooks: { sesTopicArns: values.SES_SNS_TOPIC_ARNS ?? [], sendgridPublicKey: values.SENDGRID_WEBHOOK_PUBLIC_KEY },
  };
}
