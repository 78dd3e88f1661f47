import { isIP } from 'node:net';

// Where people reach the service, printed at every start (not only the first): PUBLIC_BASE_URL
// when set (behind a proxy the listening address is not the one to open), else the listening
// address as a browser on this machine types it.

const REACHED_AS_LOCALHOST = new Set(['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost']);

// http://localhost:PORT for a wildcard or loopback HOST; the HOST itself when it names one
// interface (localhost would not reach it).
export function localBaseUrl(host: string, port: number): string {
  if (REACHED_AS_LOCALHOST.has(host)) return `http://localhost:${port}`;
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

const EVERY_INTERFACE = new Set(['0.0.0.0', '::']);
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

// Who else can reach it: on every interface, other machines of the network can, which a start
// should not leave unsaid (a first start prints a working key); on loopback (the default), only
// this machine, and how to open it.
export function listeningOn(host: string): string {
  if (EVERY_INTERFACE.has(host)) {
    return `  Listening on every interface (HOST=${host}): other machines that reach this one reach the service; HOST=127.0.0.1 keeps it to this machine`;
  }
  if (LOOPBACK.has(host) || host.startsWith('127.')) {
    return `  Listening on ${host} only (HOST): reachable from this machine only; HOST=0.0.0.0 opens it to other machines`;
  }
  return `  Listening on ${host} only (HOST): machines that reach this address reach the service`;
}

export function whereServing(baseUrl: string, host: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  return [
    '',
    `Serving at ${base}`,
    `  API:        ${base}/api/v1   (OpenAPI document: ${base}/api/v1/openapi.json)`,
    `  Docs:       ${base}/docs`,
    `  Dashboard:  ${base}/dashboard`,
    listeningOn(host),
    '',
  ].join('\n');
}
