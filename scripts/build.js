'use strict';
// `npm run build`: dist/ from nothing, so a source that was deleted leaves no stale module
// behind. The stamp, written last, tells build-if-stale.js what the build saw.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
const startedAt = new Date();
const STEPS = 5;
let stepNumber = 0;
// A first build takes a minute or more on a small machine: each step says what it does and
// how long it took, on stderr (stdout is the CLI's when build-if-stale.js runs before it).
function step(what, run) {
  stepNumber += 1;
  const began = Date.now();
  process.stderr.write(`build ${stepNumber}/${STEPS}: ${what}...\n`);
  run();
  process.stderr.write(`build ${stepNumber}/${STEPS}: done in ${((Date.now() - began) / 1000).toFixed(1)} s\n`);
}
function node(args) {
  const child = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (child.status !== 0) process.exit(child.status ?? 1);
}
fs.rmSync(dist, { recursive: true, force: true });
// The OpenAPI document and the REST client's types come first: src/client/rest-client.ts
// compiles against the types (generated/, see scripts/generate-openapi.js).
step('the OpenAPI document and the REST client\'s types (generated/)', () => node([path.join(__dirname, 'generate-openapi.js')]));
const tsc = require.resolve('typescript/bin/tsc');
step('compiling the service (tsc, into dist/)', () => node([tsc, '-p', path.join(root, 'tsconfig.build.json')]));
// tsc emits no declaration file for a declaration file it reads: the "./rest" entry's
// dist/client/rest-client.d.ts imports './rest-api-types', which is this copy.
fs.copyFileSync(path.join(root, 'generated', 'client', 'rest-api-types.d.ts'), path.join(dist, 'client', 'rest-api-types.d.ts'));
// The router's type for consumers, free of the service's internals (package.json "./trpc").
step('the public router types', () => require('./public-router-types'));
// The dashboard: type-checked against the AppRouter type (vite does not check types), then
// bundled by vite into dist/dashboard.
const vite = path.join(path.dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
step('type-checking the dashboard (tsc)', () => node([tsc, '--noEmit', '-p', path.join(root, 'web', 'tsconfig.json')]));
step('bundling the dashboard (vite, into dist/dashboard/)', () => node([vite, 'build', '--config', path.join(root, 'web', 'vite.config.mts'), '--logLevel', 'warn']));
// Served as is to browsers that accept gzip (src/http/dashboard-page.ts).
const assets = path.join(dist, 'dashboard', 'assets');
const sizes = [];
for (const name of fs.readdirSync(assets).filter((file) => /\.(js|css)$/.test(file))) {
  const file = path.join(assets, name);
  const gzipped = zlib.gzipSync(fs.readFileSync(file), { level: 9 });
  fs.writeFileSync(`${file}.gz`, gzipped);
  if (name.endsWith('.js')) sizes.push(`${name.replace(/-[\w-]{8}\.js$/, '')} ${(gzipped.length / 1024).toFixed(1)} KiB`);
}
// Each page's script, gzipped: "index" is what every first load takes (the budget in
// test/dashboard/budget.test.ts); the others load when their page is first opened.
console.log(`dashboard scripts, gzipped: ${sizes.join(', ')}`);
// Dated when the build began: a source saved during the compile makes the next start rebuild.
const stamp = path.join(dist, '.build-stamp');
fs.writeFileSync(stamp, `${startedAt.toISOString()}\n`);
fs.utimesSync(stamp, startedAt, startedAt);
process.stderr.write(`build: done in ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)} s\n`);
