import { Router } from 'express';
import type { Database } from '../db/database';
import type { LogThrottle } from '../logging/log-throttle';
import type { Lifecycle } from './graceful-shutdown';
import './express-types';
import { RedisSlidingLog } from './rate-limit/redis-sliding-log';
import type { SlidingLog } from './rate-limit/sliding-window-store';

// A backing service /readyz waits for, named as its 503 names it ("Database unreachable").
export interface Dependency {
  name: string;
  check(): Promise<unknown>;
}

// What /readyz waits for: the database, and Redis when the rate limits are kept there (the
// service answers 503 to every keyed request without it: docs/rate-limits.md).
export function readinessDependencies(db: Database, rateLimitLog?: SlidingLog): Dependency[] {
  const dependencies: Dependency[] = [{ name: 'Database', check: () => db.sequelize.query('SELECT 1') }];
  if (rateLimitLog instanceof RedisSlidingLog) dependencies.push({ name: 'Redis', check: () => rateLimitLog.ping() });
  return dependencies;
}

// A load balancer's probe gives up after a few seconds: answer before it does, whatever the
// dependencies do.
const READINESS_TIMEOUT_MS = 1_000;

export function healthRoutes(dependencies: Dependency[], logThrottle: LogThrottle, lifecycle?: Lifecycle): Router {
  const routes = Router();
  // The process is up and serving.
  routes.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Every dependency answers: a load balancer sends traffic only while this is 200.
  routes.get('/readyz', async (req, res) => {
    // Stopping: out of the load balancer's rotation at once, while in-flight requests finish.
    if (lifecycle?.stopping) {
      req.unavailableCause = 'shutdown';
      return void res.status(503).json({ error: 'Shutting down' });
    }
    const failures = await Promise.all(dependencies.map((dependency) => failureOf(dependency)));
    const down = dependencies.filter((_, i) => failures[i] !== undefined);
    if (down.length === 0) return void res.json({ status: 'ready' });
    req.unavailableCause = down[0].name === 'Redis' ? 'redis' : 'database';
    for (const dependency of down) {
      const err = failures[dependencies.indexOf(dependency)];
      logThrottle.log(req.log, 'warn', dependency.name.toLowerCase(), { err, dependency: dependency.name }, 'readiness check failed');
    }
    res.status(503).json({ error: `${down.map((dependency) => dependency.name).join(' and ')} unreachable` });
  });
  return routes;
}

// The dependency's error, or undefined when it answered in time.
async function failureOf(dependency: Dependency): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READINESS_TIMEOUT_MS} ms`)), READINESS_TIMEOUT_MS);
  });
  try {
    await Promise.race([dependency.check(), timeout]);
    return undefined;
  } catch (error) {
    return error ?? new Error('failed');
  } finally {
    clearTimeout(timer);
  }
}
