import type { Request, Response } from 'express';

// GET /: a browser (an Accept that prefers HTML) goes on to the dashboard; any other client gets
// the service's map, so that neither meets a 404 at the address they were given.
export const SERVICE_INDEX = {
  api: '/api/v1',
  docs: '/docs',
  dashboard: '/dashboard',
  openapi: '/api/v1/openapi.json',
} as const;

export function frontDoor(req: Request, res: Response): void {
  // One URL, two answers: a cache must keep them apart.
  res.set('Vary', 'Accept');
  if (req.accepts(['application/json', 'text/html']) === 'text/html') return void res.redirect(302, SERVICE_INDEX.dashboard);
  res.json(SERVICE_INDEX);
}
