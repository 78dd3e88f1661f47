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
fs.rmSync(dist, { recursive: true, force: true });
// The OpenAPI document and the REST client's types come first: src/client/rest-client.ts
// compiles against the types (generated/, see scripts/generate-openapi.js).
const generated = spawnSync(process.execPath, [path.join(__dirname, 'generate-openapi.js')], { cwd: root, stdio: 'inherit' });
if (generated.status !== 0) process.exit(generated.status ?? 1);
const tsc = require.resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
// tsc emits no declaration file for a declaration file it reads: the "./rest" entry's
// dist/client/rest-client.d.ts imports './rest-api-types', which is this copy.
fs.copyFileSync(path.join(root, 'generated', 'client', 'rest-api-types.d.ts'), path.join(dist, 'client', 'rest-api-types.d.ts'));
// The router's type for consumers, free of the service's internals (package.json "./trpc").
require('./public-router-types');
// The dashboard: type-checked against the AppRouter type (vite does not check types), then
// bundled by vite into dist/dashboard.
const vite = path.join(path.dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
const dashboardSteps = [
  [tsc, '--noEmit', '-p', path.join(root, 'web', 'tsconfig.json')],
  [vite, 'build', '--config', path.join(root, 'web', 'vite.config.mts'), '--logLevel', 'warn'],
];
for (const args of dashboardSteps) {
  const step = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (step.status !== 0) process.exit(step.status ?? 1);
}
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
