import path from 'node:path';
import { createHash } from 'node:crypto';
import express, { type Express, type Router } from 'express';
import { DEFAULT_AUTH_FAILURE_LIMIT, DEFAULT_DATA_DIR, DEFAULT_UNSUBSCRIBE_LIMIT_PER_MINUTE, type Config } from './config';
import type { Database } from './db/database';
import { accessLog } from './http/access-log';
import { chain } from './http/chain';
import { dashboardApi } from './http/dashboard-api';
import { dashboardPage } from './http/dashboard-page';
import { SIGN_IN_WINDOW_MS } from './http/sign-in-limit';
import { unsubscribeRoutes } from './http/unsubscribe-routes';
import { TRACKING_PATH, trackingRoutes } from './http/tracking-routes';
import { UNSUBSCRIBE_PATH } from './services/unsubscribe/unsubscribe-links';
import { requireApiKey, resolveApiKey } from './http/api-key-auth';
import { errorHandler, notFound } from './http/error-handlers';
import { frontDoor } from './http/front-door';
import type { Lifecycle } from './http/graceful-shutdown';
import { idempotency, type IdempotencyOptions } from './http/idempotency';
import { healthRoutes, readinessDependencies } from './http/health';
import { jsonBody, requireJsonObject } from './http/json-body';
import { metricsEndpoint } from './metrics/metrics-endpoint';
import { requestMetrics } from './metrics/request-metrics';
import { routeTemplates } from './http/route-template';
import { rateLimiters } from './http/rate-limit/limiters';
import { MemorySlidingLog, type SlidingLog } from './http/rate-limit/sliding-window-store';
import { restApi } from './http/rest-api';
import { importUpload } from './http/import-upload';
import { importsDir } from './services/imports/imports-dir';
import { trpcApi } from './http/trpc-api';
import { whatsappWebhook } from './http/whatsapp-webhook';
import { emailProviderWebhooks, type EmailWebhookDeps } from './http/email-provider-webhooks';
import { LogThrottle } from './logging/log-throttle';
import type { Logger } from './logging/logger';
import type { Metrics } from './metrics/metrics';
import type * as DocsPageModule from './openapi/docs-page';
import type * as DocumentModule from './openapi/document';
import { appRouter } from './routers/app-router';
import type { ChannelSettings } from './services/channels/channel-settings';
import { DEFAULT_TEST_SENDS_PER_MINUTE } from './services/messages/test-sends';
import { SmtpTransports } from './services/messages/smtp-transports';
import type { WebhookSettings } from './services/webhooks/webhook-settings';
import type { ActivitySettings } from './services/activities/activity-settings';

export interface AppDeps {
  db: Database;
  config: Pick<Config, 'rateLimitPerMinute'> &
    Partial<
      Pick<Config, 'authFailureLimitPerMinute' | 'databaseTimeouts' | 'metricsToken' | 'metricsPort' | 'publicBaseUrl' | 'publicOrigin' | 'trustProxy' | 'unsubscribeLimitPerMinute' | 'whatsappWebhook' | 'emailWebhooks'>
    >;
  logger: Logger;
  // Where rate-limit hits are kept: this process's memory unless given (Redis, shared).
  rateLimitLog?: SlidingLog;
  // The server's shutdown state, for /readyz (src/server.ts); absent in tests that need none.
  lifecycle?: Lifecycle;
  // Given: requests are measured, and served at GET /metrics when config.metricsToken is set
  // (and no METRICS_PORT: then src/metrics/metrics-server.ts serves them).
  metrics?: Metrics;
  // Shared with the Redis client, so that one outage is one line per 10 s.
  logThrottle?: LogThrottle;
  // The dashboard's built files; dist/dashboard unless given.
  dashboardDir?: string;
  // Webhook URL rules and clock; absent: https only, no special-use addresses.
  webhooks?: WebhookSettings;
  // ACTIVITY_RETENTION_DAYS and the intake's clock; absent: the default (90 days), the real clock.
  activities?: ActivitySettings;
  // The secrets key, the senders' defaults and the unsubscribe links' address; absent: no key
  // (secrets cannot be stored, unsubscribe links answer 404) and no server-wide defaults; and
  // sequences are saved active without checking that their emails have a sender (an embedder's
  // app that sends nothing itself; the server always passes its settings).
  channels?: ChannelSettings;
  // The message editor's test sends: the relays' pool (the server's, closed at shutdown; else
  // one of the app's own), DATA_DIR/outbox, the clock and the limit per account and minute.
  testSends?: { transports?: SmtpTransports; outboxDir?: string; now?: () => Date; perMinute?: number };
  // The SES webhook's outside calls (the SNS signing certificate, the subscription's
  // confirmation) and the clock, given by tests; absent: bounded HTTPS GETs.
  emailProviders?: Pick<EmailWebhookDeps, 'fetchCertificate' | 'confirmSubscription' | 'now'>;
  // Idempotency-Key's clock and timers (claims, deadlines, releases retried), given by tests.
  idempotencyTimers?: IdempotencyOptions['timers'];
  // Contact imports' files: DATA_DIR/imports (src/services/imports/imports-dir.ts); absent: data/imports.
  imports?: { dir: string };
}

export function createApp({
  db,
  config,
  logger,
  rateLimitLog,
  lifecycle,
  metrics,
  logThrottle = new LogThrottle(),
  dashboardDir,
  webhooks,
  channels,
  activities,
  testSends,
  emailProviders,
  idempotencyTimers,
  imports = { dir: importsDir(undefined) },
}: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETag (a hash of every body express sends) on answers that change with each write and are
  // never revalidated: errors, probes. The document sets its own, made once (below).
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy ?? false);
  const routeOf = routeTemplates(appRouter);
  app.use(accessLog(app, logger, routeOf));
  if (metrics) app.use(requestMetrics(metrics, routeOf));
  if (metrics && config.metricsToken && !config.metricsPort) app.get('/metrics', metricsEndpoint(metrics, config.metricsToken));

  app.use(healthRoutes(readinessDependencies(db, rateLimitLog), logThrottle, lifecycle));
  app.get('/', frontDoor);

  // Public: the contract and its reference page need no key.
  // Both made at their first request, not at start: the document's generator and Swagger UI
  // are a tenth of a start, and most instances never serve them.
  /* eslint-disable @typescript-eslint/no-require-imports */
  let document: ReturnType<typeof DocumentModule.buildOpenApiDocument> | undefined;
  const openApiDocument = () =>
    (document ??= (require('./openapi/document') as typeof DocumentModule).buildOpenApiDocument(appRouter, {
      // Only when PUBLIC_BASE_URL was set: otherwise the document names the relative /api/v1.
      publicBaseUrl: config.publicOrigin ? config.publicBaseUrl : undefined,
    }));
  let docs: Router | undefined;
  const docsRouter = () => (docs ??= express.Router().use(...(require('./openapi/docs-page') as typeof DocsPageModule).docsPage(openApiDocument())));
  /* eslint-enable @typescript-eslint/no-require-imports */
  let documentJson: { body: string; etag: string } | undefined;
  app.get('/api/v1/openapi.json', (req, res) => {
    if (!documentJson) {
      const body = JSON.stringify(openApiDocument());
      documentJson = { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
    }
    res.setHeader('ETag', documentJson.etag);
    if (req.fresh) return void res.status(304).end();
    res.type('json').send(documentJson.body);
  });
  app.use('/docs', (req, res, next) => docsRouter()(req, res, next));

  // Meta's status webhook: signed by the app's secret, never by an API key; it reads its body
  // itself, as bytes (the signature is over them).
  app.use('/webhooks/whatsapp', whatsappWebhook({ db, settings: config.whatsappWebhook ?? {}, channels, metrics: metrics?.messages, inbound: metrics?.whatsapp, activities }));
  // SES (through SNS) and SendGrid's bounce, complaint and delivery events: signed by the
  // provider, never by an API key (docs/channels.md "Provider webhooks (SES, SendGrid)").
  app.use(
    '/webhooks/email',
    emailProviderWebhooks({
      db,
      settings: {
        sesTopicArns: config.emailWebhooks?.sesTopicArns ?? [],
        sendgridPublicKey: config.emailWebhooks?.sendgridPublicKey,
        bounceKey: channels?.secrets?.bounce ?? null,
        bounceDomain: channels?.bounceDomain,
      },
      logger,
      metrics: metrics?.bounces,
      messageMetrics: metrics?.messages,
      activities,
      ...emailProviders,
    }),
  );

  const keyed = [
    resolveApiKey(db),
    ...rateLimiters({
      perKeyPerMinute: config.rateLimitPerMinute,
      failedAuthPerIpPerMinute: config.authFailureLimitPerMinute ?? DEFAULT_AUTH_FAILURE_LIMIT,
      log: rateLimitLog ?? new MemorySlidingLog(),
    }),
  ];
  const json = jsonBody();

  // The dashboard: its page, and its procedures by session cookie (never by key) ahead of the
  // keyed /trpc mount. The in-memory log sweeps by its own window, hence one of 15 min here.
  app.use('/dashboard', dashboardPage(dashboardDir));
  const signInLog = rateLimitLog?.shared ? rateLimitLog : new MemorySlidingLog(SIGN_IN_WINDOW_MS);
  // Test sends are limited per account in the same log as the API's keys (shared on Redis).
  const testSendDeps = {
    transports: testSends?.transports ?? new SmtpTransports(undefined, channels),
    outboxDir: testSends?.outboxDir ?? path.join(DEFAULT_DATA_DIR, 'outbox'),
    log: rateLimitLog ?? new MemorySlidingLog(),
    limitPerMinute: testSends?.perMinute ?? DEFAULT_TEST_SENDS_PER_MINUTE,
    now: testSends?.now ?? (() => new Date()),
  };
  app.use('/trpc', dashboardApi({ router: appRouter, db, logThrottle, signInLog, publicOrigin: config.publicOrigin, webhooks, channels, activities, testSends: testSendDeps, imports }));

  // One-click unsubscribe links: recipients', with no key and no cookie (docs/channels.md).
  const unsubscribeLog = rateLimitLog?.shared ? rateLimitLog : new MemorySlidingLog();
  app.use(
    UNSUBSCRIBE_PATH,
    unsubscribeRoutes({
      db,
      channels,
      log: unsubscribeLog,
      limitPerMinute: config.unsubscribeLimitPerMinute ?? DEFAULT_UNSUBSCRIBE_LIMIT_PER_MINUTE,
      logThrottle,
    }),
  );

  // Open pixels and tracked links of emails: recipients', with no key and no cookie (docs/activities.md).
  app.use(TRACKING_PATH, trackingRoutes({ db, channels, activities }));

  // A keyed request's last COMMIT may take up to the statement deadline.
  const idempotent = idempotency(db, { logThrottle, timers: idempotencyTimers, commitMarginMs: config.databaseTimeouts?.queryTimeoutMs });

  // A CSV upload and the errors CSV of contact imports are read and written as streams, before
  // the JSON body parser (src/http/import-upload.ts); they call the same procedures.
  const uploads = importUpload({ router: appRouter, db, logThrottle, dir: imports.dir, webhooks, channels, activities });
  app.use('/api/v1', chain([...keyed, requireApiKey, uploads, ...json, requireJsonObject, idempotent, restApi({ router: appRouter, db, logThrottle, webhooks, channels, activities, imports })]));
  app.use('/trpc', chain([...keyed, requireApiKey, ...json, idempotent, ...trpcApi({ router: appRouter, db, logThrottle, webhooks, channels, activities, imports })]));

  app.use(notFound);
  app.use(errorHandler(logThrottle));
  return app;
}
