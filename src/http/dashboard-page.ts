import fs from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';

// The dashboard's built files (vite, `npm run build`, into dist/dashboard). Hashed assets are
// cached for a year; index.html is served for /dashboard and every client route below it.
export const DASHBOARD_DIR = path.resolve(__dirname, '..', '..', 'dist', 'dashboard');

export function dashboardPage(dir = DASHBOARD_DIR): Router {
  const page = express.Router();
  // The build writes a .gz beside each script and stylesheet: a third of the bytes, and no
  // compression work per request.
  page.get(/^\/assets\/[\w.-]+\.(js|css)$/, (req, res, next) => {
    const gz = path.join(dir, `${req.path}.gz`);
    if (!req.acceptsEncodings('gzip') || !fs.existsSync(gz)) return next();
    res.set('Vary', 'Accept-Encoding');
    res.set('Content-Encoding', 'gzip');
    res.set('Cache-Control', 'public, max-age=31536000, immutable');
    res.type(path.extname(req.path));
    res.sendFile(gz);
  });
  page.use('/assets', express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '365d', fallthrough: false }));
  page.get(/.*/, (_req, res) => {
    const index = path.join(dir, 'index.html');
    if (!fs.existsSync(index)) return void res.status(503).type('text/plain').send('The dashboard is not built: run npm run build');
    res.set('Cache-Control', 'no-cache');
    res.set('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'");
    res.set('X-Content-Type-Options', 'nosniff');
    // A setup link's token is in the URL: no Referer carries it anywhere.
    res.set('Referrer-Policy', 'no-referrer');
    res.sendFile(index);
  });
  return page;
}
