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

// Who else can reach it: on every interface, other machines of the network can, which a start
// on a laptop should not leave unsaid (its first start prints a working key).
function listeningOn(host: string): string {
  if (EVERY_INTERFACE.has(host)) {
    return `  Listening on every interface (HOST=${host}): other machines that reach this one reach the service; HOST=127.0.0.1 keeps it to this machine`;
  }
  return `  Listening on ${host} only (HOST)`;
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
