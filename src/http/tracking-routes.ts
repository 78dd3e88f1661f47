import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Database } from '../db/database';
import { AppError } from '../errors/app-errors';
import { DEFAULT_ACTIVITY_SETTINGS, type ActivitySettings } from '../services/activities/activity-settings';
import { DEFAULT_CHANNEL_SETTINGS, type ChannelSettings } from '../services/channels/channel-settings';
import { followTrackedLink, recordEmailOpen, type TrackingRequest } from '../services/signals/email-engagement';
import './express-types';

// /t/o/{token} and /t/c/{token}: the open pixel and the tracked links of emails (docs/activities.md
// "Engagement signals"). Outside /api/v1 and not in the OpenAPI document: recipients' mail
// clients and their proxies load them, with no key and no cookie.
// - /t/o/: a 1x1 transparent GIF, never cached (each load is a request), after the open is
//   recorded. A token we did not sign: 404.
// - /t/c/: 302 to the link's target as the message carried it. A token we did not sign, or one
//   naming a link the message does not have: 404, and no redirect. No query parameter is read:
//   the target never comes from the request.
// The token is never logged (route-template.ts). Checking it costs no database read, so a flood
// of bad tokens costs HMACs only, and no rate limit stands in front of genuine clicks.

export const TRACKING_PATH = '/t';

// GIF89a, 1x1, one transparent pixel (43 bytes).
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const COMMON = {
  'Cache-Control': 'no-store, private',
  // The token is in the URL: never sent on to the link's target.
  'Referrer-Policy': 'no-referrer',
  'X-Robots-Tag': 'noindex, nofollow',
  'X-Content-Type-Options': 'nosniff',
};

export interface TrackingRoutesOptions {
  db: Database;
  channels?: ChannelSettings;
  activities?: ActivitySettings;
}

function trackingRequest(req: Request): TrackingRequest {
  return { token: String(req.params.token ?? ''), ip: req.ip, userAgent: req.get('user-agent'), record: req.method === 'GET' };
}

function notFound(res: Response): void {
  res
    .status(404)
    .set({ ...COMMON, 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': "default-src 'none'" })
    .send('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Link not found</title></head><body><h1>Link not found</h1><p>This link is not valid.</p></body></html>');
}

function failure(res: Response, next: NextFunction, error: unknown): void {
  if (error instanceof AppError && error.status === 404) return notFound(res);
  next(error);
}

export function trackingRoutes(options: TrackingRoutesOptions): Router {
  const deps = { channels: options.channels ?? DEFAULT_CHANNEL_SETTINGS, activities: options.activities ?? DEFAULT_ACTIVITY_SETTINGS };
  const routes = express.Router();

  routes.get('/o/:token', async (req, res, next) => {
    try {
      await recordEmailOpen(options.db, trackingRequest(req), deps);
      res.status(200).set({ ...COMMON, 'Content-Type': 'image/gif', 'Content-Length': String(PIXEL.length) }).end(PIXEL);
    } catch (error) {
      failure(res, next, error);
    }
  });

  routes.get('/c/:token', async (req, res, next) => {
    try {
      const url = await followTrackedLink(options.db, trackingRequest(req), deps);
      res.status(302).set({ ...COMMON, Location: url }).end();
    } catch (error) {
      failure(res, next, error);
    }
  });

  return routes;
}
