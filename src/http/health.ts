import { Router } from 'express';
import type { Database } from '../db/database';
import type { LogThrottle } from '../log-throttle';
import './express-types';

export function healthRoutes(db: Database, logThrottle: LogThrottle): Router {
  const routes = Router();
  // The process is up and serving.
  routes.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // The database answers: a load balancer sends traffic only while this is 200.
  routes.get('/readyz', async (req, res) => {
    try {
      await db.sequelize.query('SELECT 1');
      res.json({ status: 'ready' });
    } catch (error) {
      req.unavailableCause = 'database';
      logThrottle.log(req.log, 'warn', 'database', { err: error }, 'readiness check failed');
      res.status(503).json({ error: 'Database unreachable' });
    }
  });
  return routes;
}
