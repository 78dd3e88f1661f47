import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { initTRPC } from '@trpc/server';
import { expect } from 'chai';
import { createOpenApiNodeHttpHandler, type OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';

// patches/trpc-to-openapi+3.3.0.patch builds the REST adapter's request signal (createContext's
// info.signal) on first read, without a fetch Request. What a reader of it sees must not change:
// aborted when the client goes away before the answer, never after a complete answer.

interface Ctx {
  signal: () => AbortSignal;
}

function serverWith(handle: (ctx: Ctx) => Promise<unknown>) {
  const t = initTRPC.context<Ctx>().meta<OpenApiMeta>().create();
  const router = t.router({
    wait: t.procedure
      .meta({ openapi: { method: 'GET', path: '/wait' } })
      .input(z.object({}))
      .output(z.object({ ok: z.boolean() }))
      .query(async ({ ctx }) => {
        await handle(ctx);
        return { ok: true };
      }),
  });
  const handler = createOpenApiNodeHttpHandler({ router, createContext: ({ info }) => ({ signal: () => info.signal as AbortSignal }) });
  return http.createServer((req, res) => void handler(req, res));
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const get = (port: number) => http.get({ port, host: '127.0.0.1', path: '/wait' });

describe('the REST adapter\'s request signal (patched trpc-to-openapi)', () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('aborts when the client goes away while the procedure runs', async () => {
    let aborted!: Promise<boolean>;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const server = serverWith(async (ctx) => {
      const signal = ctx.signal();
      aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(true)));
      started();
      await aborted;
    });
    servers.push(server);
    const request = get(await listen(server));
    request.on('error', () => undefined);
    await running;
    request.destroy();
    expect(await aborted).to.equal(true);
  });

  it('is already aborted when first read after the client went away', async () => {
    let gone!: () => void;
    const clientGone = new Promise<void>((resolve) => (gone = resolve));
    let read!: (signal: AbortSignal) => void;
    const signalRead = new Promise<AbortSignal>((resolve) => (read = resolve));
    const server = serverWith(async (ctx) => {
      await clientGone;
      read(ctx.signal());
    });
    servers.push(server);
    const port = await listen(server);
    const arrived = new Promise<void>((resolve) =>
      server.once('request', (_req, res: http.ServerResponse) => {
        res.once('close', gone);
        resolve();
      }),
    );
    const request = get(port);
    request.on('error', () => undefined);
    await arrived;
    request.destroy();
    expect((await signalRead).aborted).to.equal(true);
  });

  it('never aborts after a complete answer', async () => {
    let signal: AbortSignal | undefined;
    const server = serverWith(async (ctx) => {
      signal = ctx.signal();
    });
    servers.push(server);
    const port = await listen(server);
    const body = await new Promise<string>((resolve, reject) => {
      get(port)
        .on('response', (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    expect(JSON.parse(body)).to.deep.equal({ ok: true });
    server.closeAllConnections();
    await new Promise((resolve) => setImmediate(resolve));
    expect(signal?.aborted).to.equal(false);
  });
});
