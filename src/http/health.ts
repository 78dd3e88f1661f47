import { Router } from 'express';
import type { Database } from '../db/database';
import type { Logger } from '../logger';

export function healthRoutes(db: Database, logger: Logger): Router {
  const routes = Router();
  // The process is up and serving.
  routes.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // The database answers: a load balancer sends traffic only while this is 200.
  routes.get('/readyz', async (_req, res) => {
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
