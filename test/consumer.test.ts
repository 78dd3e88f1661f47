import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { testApp } from './support/app';
import { buildTenant } from './support/factories';
import { closeServer, listenOnLoopback } from './support/listen';

// test/consumer is an outside app: its own package.json and a strict tsconfig, importing the
// service through its package name ("./trpc" and "./rest" in package.json exports) from the
// built declarations. It must type-check with no error and call a running service.

const ROOT = path.resolve(__dirname, '..');
const CONSUMER = path.join(__dirname, 'consumer');

function run(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: CONSUMER, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 240_000 });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('published consumer types (test/consumer)', function () {
  this.timeout(300_000);
  let server: Server;
  let baseUrl: string;

  before(async () => {
    // dist/ as `npm run build` makes it (npm test builds first; this rebuilds only when stale).
    const built = await run([path.join(ROOT, 'scripts', 'build-if-stale.js')]);
    expect(built.code, built.output).to.equal(0);
    // The package, installed the way npm links a local dependency.
    const link = path.join(CONSUMER, 'node_modules', 'contact-sequence-service');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.rmSync(link, { force: true, recursive: true });
    fs.symlinkSync(path.relative(path.dirname(link), ROOT), link, 'dir');
    ({ server, base: baseUrl } = await listenOnLoopback(testApp()));
  });

  after(async () => {
    await closeServer(server);
  });

  it('type-checks under strict, noUncheckedIndexedAccess, exactOptionalPropertyTypes and verbatimModuleSyntax', async () => {
    const tsc = require.resolve('typescript/bin/tsc');
    const result = await run([tsc, '-p', CONSUMER, '--listFiles']);
    const errors = result.output.split('\n').filter((line) => /error TS\d+/.test(line));
    expect(errors, result.output).to.deep.equal([]);
    expect(result.code, result.output).to.equal(0);
    // Only the published entry points' declarations, none of the service's internals.
    const ours = result.output.split('\n').filter((line) => line.startsWith(`${ROOT}${path.sep}`) && !line.includes(`${path.sep}node_modules${path.sep}`));
    const published = ours.filter((line) => !line.startsWith(CONSUMER)).map((line) => path.relative(ROOT, line)).sort();
    expect(published).to.deep.equal([
      'dist/client/rest-api-types.d.ts',
      'dist/client/rest-client.d.ts',
      'dist/public/app-router.d.ts',
      'dist/public/trpc.d.ts',
    ]);
  });

  it('calls the running service with @trpc/client and openapi-fetch', async () => {
    const { key } = await buildTenant();
    const tsx = require.resolve('tsx/cli');
    const result = await run([tsx, 'main.ts'], { ...process.env, BASE_URL: baseUrl, API_KEY: key });
    expect(result.code, result.output).to.equal(0);
    const line = JSON.parse(result.output.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(line).to.include({ email: 'consumer@example.com', firstTag: 'fixture', missing: 404, error: 'Contact not found' });
    expect(line.id).to.match(/^[0-9a-f-]{36}$/);
  });
});
