import type { NextRequest } from './load';

// The endpoints `npm run bench` measures, and how each request is made so that every request
// does the same work on every server:
// - get, status, by-email: rotate over seeded contacts (and enrolled pairs), read only;
// - upsert: a seeded (existing) email with a changed custom field, so it writes every time;
// - create, batch, trigger: emails never used before (a run tag and a counter);
// - enroll: a fresh sequence per request, so all 500 contacts get a run;
// - unenroll: a sequence this server enrolled (500 active runs), so all 500 are cancelled.

export interface EndpointContext {
  tag: string;
  sequenceId: string; // active, for trigger
  contactIds: string[]; // seeded
  emails: string[]; // their normalized emails
  enrollIds: string[]; // 500 of them
  newSequences(count: number): Promise<string[]>;
  // Enrolls enrollIds into these sequences through a server (setup, not measured).
  enrollThrough(base: string, sequenceIds: readonly string[]): Promise<void>;
}

export interface Endpoint {
  name: string;
  label: string;
  method: 'GET' | 'POST';
  expectStatus: number;
  heavy: boolean; // slow requests: fewer connections
  // Runs consume prepared state (sequences): measured by a number of requests, not seconds.
  pooled: boolean;
  // Makes what `amount` requests to this server consume; returns how many can be made.
  prepare?(server: { name: string; base: string }, amount: number): Promise<number>;
  next(server: string): NextRequest;
  checkBody?: (body: string) => boolean;
}

export function compareEndpoints(ctx: EndpointContext): Endpoint[] {
  let counter = 0;
  const at = <T>(list: readonly T[]) => list[counter++ % list.length];
  const enrollBody = JSON.stringify({ contactIds: ctx.enrollIds });
  const toEnroll = new Map<string, string[]>(); // fresh sequences, per server
  const toUnenroll = new Map<string, string[]>(); // sequences a server enrolled, per server
  const enrolled: string[] = []; // every enrolled sequence, for status
  const queue = (map: Map<string, string[]>, server: string) => map.get(server) ?? map.set(server, []).get(server)!;
  const take = (map: Map<string, string[]>, server: string, what: string) => {
    const id = queue(map, server).shift();
    if (!id) throw new Error(`bench: no ${what} sequence left for ${server}`);
    return id;
  };

  return [
    {
      name: 'get',
      label: 'GET /contacts/{id}',
      method: 'GET',
      expectStatus: 200,
      heavy: false,
      pooled: false,
      next: () => ({ path: `/api/v1/contacts/${at(ctx.contactIds)}` }),
    },
    {
      name: 'upsert',
      label: 'POST /contacts/upsert (existing email)',
      method: 'POST',
      expectStatus: 200,
      heavy: false,
      pooled: false,
      next: () => {
        const n = counter;
        return { path: '/api/v1/contacts/upsert', body: JSON.stringify({ email: at(ctx.emails), customFields: { n } }) };
      },
    },
    {
      name: 'create',
      label: 'POST /contacts (new email)',
      method: 'POST',
      expectStatus: 201,
      heavy: false,
      pooled: false,
      next: () => ({
        path: '/api/v1/contacts',
        body: JSON.stringify({ email: `c${counter++}-${ctx.tag}@bench.test`, firstName: 'Ada', tags: ['bench'] }),
      }),
    },
    {
      name: 'batch',
      label: 'POST /contacts/batch (100 new)',
      method: 'POST',
      expectStatus: 201,
      heavy: true,
      pooled: false,
      next: () => {
        const n = counter++;
        const contacts = Array.from({ length: 100 }, (_, i) => ({
          email: `b${n}-${i}-${ctx.tag}@bench.test`,
          firstName: 'Ada',
          tags: ['bench'],
          customFields: { plan: 'pro' },
        }));
        return { path: '/api/v1/contacts/batch', body: JSON.stringify({ contacts }) };
      },
    },
    {
      name: 'trigger',
      label: 'POST /sequences/{id}/trigger (new)',
      method: 'POST',
      expectStatus: 202,
      heavy: false,
      pooled: false,
      next: () => ({
        path: `/api/v1/sequences/${ctx.sequenceId}/trigger`,
        body: JSON.stringify({ contact: { email: `t${counter++}-${ctx.tag}@bench.test`, firstName: 'Ada' } }),
      }),
    },
    {
      name: 'enroll',
      label: 'POST /sequences/{id}/enroll (500)',
      method: 'POST',
      expectStatus: 201,
      heavy: true,
      pooled: true,
      async prepare(server, amount) {
        queue(toEnroll, server.name).push(...(await ctx.newSequences(amount)));
        return amount;
      },
      next: (server) => {
        const id = take(toEnroll, server, 'fresh');
        queue(toUnenroll, server).push(id);
        enrolled.push(id);
        return { path: `/api/v1/sequences/${id}/enroll`, body: enrollBody };
      },
      checkBody: (body) => (JSON.parse(body) as { summary: { successful: number } }).summary.successful === 500,
    },
    {
      name: 'unenroll',
      label: 'POST /sequences/{id}/unenroll (500)',
      method: 'POST',
      expectStatus: 200,
      heavy: true,
      pooled: true,
      // The sequences this server enrolled; topped up (through it, unmeasured) when too few.
      async prepare(server, amount) {
        const ready = queue(toUnenroll, server.name);
        const minimum = Math.min(amount, 8);
        if (ready.length < minimum) {
          const fresh = await ctx.newSequences(minimum - ready.length);
          await ctx.enrollThrough(server.base, fresh);
          ready.push(...fresh);
          enrolled.push(...fresh);
        }
        return Math.min(amount, ready.length);
      },
      next: (server) => ({ path: `/api/v1/sequences/${take(toUnenroll, server, 'enrolled')}/unenroll`, body: enrollBody }),
      checkBody: (body) => (JSON.parse(body) as { cancelled: number }).cancelled === 500,
    },
    {
      name: 'status',
      label: 'GET /sequences/{id}/enrollments/{contactId}',
      method: 'GET',
      expectStatus: 200,
      heavy: false,
      pooled: false,
      async prepare(server, amount) {
        if (enrolled.length === 0) {
          const fresh = await ctx.newSequences(1);
          await ctx.enrollThrough(server.base, fresh);
          enrolled.push(...fresh);
        }
        return amount;
      },
      next: () => {
        const n = counter++;
        const sequenceId = enrolled[n % Math.min(enrolled.length, 20)];
        return { path: `/api/v1/sequences/${sequenceId}/enrollments/${ctx.enrollIds[n % ctx.enrollIds.length]}` };
      },
    },
    {
      name: 'by-email',
      label: 'GET /contacts/by-email/{email}',
      method: 'GET',
      expectStatus: 200,
      heavy: false,
      pooled: false,
      next: () => ({ path: `/api/v1/contacts/by-email/${encodeURIComponent(at(ctx.emails))}` }),
    },
  ];
}

export const DEFAULT_ENDPOINTS = ['get', 'upsert', 'create', 'batch', 'trigger', 'enroll', 'unenroll', 'status'];
