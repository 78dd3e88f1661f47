import { randomUUID } from 'node:crypto';
import type { Endpoint } from './compare-endpoints';
import { GeneralLog, isSessionSetup, statementShape } from './general-log';
import type { NextRequest } from './load';
import type { RunningServer } from './servers';

// The check that the servers do the same work: each request is sent to each server alone,
// with MariaDB's general log on, and what the server sent the database (its statements, in
// order, as shapes: see statementShape) and what it answered (status, the RateLimit headers,
// the body with ids, times and generated emails masked) must be the same.

export interface Probe {
  name: string;
  method: 'GET' | 'POST';
  expectStatus?: number;
  // Prepares state (for endpoints), then returns the request to send.
  request(server: RunningServer): Promise<NextRequest & { headers?: Record<string, string> }>;
}

export interface ProbeOutcome {
  name: string;
  byServer: Map<string, { statements: string[]; response: string }>;
  sameStatements: boolean;
  sameResponse: boolean;
}

export function endpointProbe(endpoint: Endpoint): Probe {
  return {
    name: endpoint.name,
    method: endpoint.method,
    expectStatus: endpoint.expectStatus,
    async request(server) {
      await endpoint.prepare?.({ name: server.spec.name, base: server.base }, 1);
      return endpoint.next(server.spec.name);
    },
  };
}

// Requests that fail, each on its own path through the servers.
export function errorProbes(ids: { contactId: string; email: string; sequenceId: string; draftSequenceId: string }): Probe[] {
  const fixed = (name: string, method: 'GET' | 'POST', path: string, body?: unknown, headers?: Record<string, string>): Probe => ({
    name,
    method,
    request: async () => ({ path, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), headers }),
  });
  const unknown = randomUUID();
  return [
    fixed('401 missing key', 'GET', `/api/v1/contacts/${ids.contactId}`, undefined, { 'x-api-key': '' }),
    fixed('401 unknown key', 'GET', `/api/v1/contacts/${ids.contactId}`, undefined, { 'x-api-key': `svc_${'0'.repeat(40)}` }),
    fixed('404 malformed id', 'GET', '/api/v1/contacts/not-a-uuid'),
    fixed('404 unknown contact', 'GET', `/api/v1/contacts/${unknown}`),
    fixed('400 invalid email', 'POST', '/api/v1/contacts/upsert', { email: 'nope', tags: [''] }),
    fixed('400 malformed JSON', 'POST', '/api/v1/contacts/upsert', '{"email":'),
    fixed('409 email taken', 'POST', '/api/v1/contacts', { email: ids.email }),
    fixed('400 empty batch', 'POST', '/api/v1/contacts/batch', { contacts: [] }),
    fixed('400 batch item', 'POST', '/api/v1/contacts/batch', { contacts: [{ email: 'a@example.com' }, { email: 'b@' }] }),
    fixed('409 inactive sequence', 'POST', `/api/v1/sequences/${ids.draftSequenceId}/trigger`, { contact: { email: 'x@example.com' } }),
    fixed('404 unknown sequence', 'POST', `/api/v1/sequences/${unknown}/enroll`, { contactIds: [ids.contactId] }),
    fixed('400 contact ids', 'POST', `/api/v1/sequences/${ids.sequenceId}/enroll`, { contactIds: ['x'] }),
    fixed('404 status, unknown contact', 'GET', `/api/v1/sequences/${ids.sequenceId}/enrollments/${unknown}`),
  ];
}

export async function checkSameWork(
  servers: readonly RunningServer[],
  probes: readonly Probe[],
  log: GeneralLog,
  apiKey: string,
): Promise<ProbeOutcome[]> {
  const outcomes: ProbeOutcome[] = [];
  await log.start();
  try {
    for (const probe of probes) {
      const byServer = new Map<string, { statements: string[]; response: string }>();
      for (const server of servers) {
        // A request first: warm connections, and the key's last-used write (once a minute) done.
        await send(server, probe.method, await probe.request(server), apiKey);
        await pause(150);
        const request = await probe.request(server);
        await log.clear();
        const response = await send(server, probe.method, request, apiKey);
        await pause(150);
        const statements = (await log.statements()).filter((s) => !isSessionSetup(s.sql)).map((s) => statementShape(s.sql));
        byServer.set(server.spec.name, { statements, response });
      }
      const [first, ...others] = [...byServer.values()];
      outcomes.push({
        name: probe.name,
        byServer,
        sameStatements: others.every((o) => o.statements.join('\n') === first.statements.join('\n')),
        sameResponse: others.every((o) => o.response === first.response),
      });
    }
  } finally {
    await log.stop();
  }
  return outcomes;
}

async function send(server: RunningServer, method: string, request: NextRequest & { headers?: Record<string, string> }, apiKey: string) {
  const headers: Record<string, string> = { 'x-api-key': apiKey, 'content-type': 'application/json', ...request.headers };
  if (headers['x-api-key'] === '') delete headers['x-api-key'];
  const response = await fetch(`${server.base}${request.path}`, { method, headers, body: request.body });
  const body = await response.text();
  const header = (name: string) => `${name}: ${response.headers.get(name) ?? '-'}`;
  return [
    `${response.status}`,
    header('content-type'),
    header('ratelimit').replace(/r=\d+/, 'r=N').replace(/t=\d+/, 't=N'),
    header('ratelimit-policy'),
    `x-request-id: ${response.headers.has('x-request-id') ? 'yes' : 'no'}`,
    mask(body),
  ].join('\n');
}

function mask(body: string): string {
  return body
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/[^"]*@bench\.test/g, '<email>')
    .replace(/"n":\d+/g, '"n":<n>');
}

function pause(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
