'use strict';
// `npm run build`: dist/ from nothing, so a source that was deleted leaves no stale module
// behind. The stamp, written last, tells build-if-stale.js what the build saw.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
const startedAt = new Date();
fs.rmSync(dist, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
// The router's type for consumers, free of the service's internals (package.json "./trpc").
require('./public-router-types');
// Dated when the build began: a source saved during the compile makes the next start rebuild.
const stamp = path.join(dist, '.build-stamp');
fs.writeFileSync(stamp, `${startedAt.toISOString()}\n`);
fs.utimesSync(stamp, startedAt, startedAt);
