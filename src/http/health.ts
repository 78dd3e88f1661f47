import { Router } from 'express';
import type { Database } from '../db/database';
import type { Logger } from '../logger';
import type { Lifecycle } from './graceful-shutdown';

export function healthRoutes(db: Database, logger: Logger, lifecycle?: Lifecycle): Router {
  const routes = Router();
  // The process is up and serving.
  routes.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // The database answers: a load balancer sends traffic only while this is 200.
  routes.get('/readyz', async (_req, res) => {
    // Stopping: out of the load balancer's rotation at once, while in-flight requests finish.
    if (lifecycle?.stopping) return void res.status(503).json({ error: 'Shutting down' });
    try {
      await db.sequelize.query('SELECT 1');
      res.json({ status: 'ready' });
    } catch (error) {
      logger.warn('readiness check failed', { error });
      res.status(503).json({ error: 'Database unreachable' });
    }
  });
  return routes;
}
