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
const tsc = require.resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
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
for (const name of fs.readdirSync(assets).filter((file) => /\.(js|css)$/.test(file))) {
  const file = path.join(assets, name);
  fs.writeFileSync(`${file}.gz`, zlib.gzipSync(fs.readFileSync(file), { level: 9 }));
}
// Dated when the build began: a source saved during the compile makes the next start rebuild.
const stamp = path.join(dist, '.build-stamp');
fs.writeFileSync(stamp, `${startedAt.toISOString()}\n`);
fs.utimesSync(stamp, startedAt, startedAt);
