import type { Server } from 'node:http';
import express from 'express';
import type { Metrics } from './metrics';
import { metricsEndpoint } from './metrics-endpoint';

// METRICS_PORT: /metrics on a port of its own, for a network only the scraper reaches; the
// service's port then has no /metrics. METRICS_TOKEN, if also set, is required here too.
export async function startMetricsServer(options: { metrics: Metrics; port: number; host: string; token?: string }): Promise<Server> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', metricsEndpoint(options.metrics, options.token));
  app.use((_req, res) => void res.status(404).json({ error: 'Not found' }));
  const server = app.listen(options.port, options.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // It must not hold the process open once the service has shut down.
  server.unref();
  return server;
}
