'use strict';
// `npm start` runs this first: it builds dist/ when it is missing or older than any source, so
// a fresh clone needs only `npm install` and `npm start`, and the server itself always starts
// as plain `node dist/server.js`. Nothing to do costs a directory walk, not a compile.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const inputs = ['src', 'web', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

function newestMtime(file) {
  const stat = fs.statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file changes its directory's mtime
  for (const entry of fs.readdirSync(file)) newest = Math.max(newest, newestMtime(path.join(file, entry)));
  return newest;
}

// The build's other output, outside dist/: the OpenAPI document and the REST client's types.
const generated = [path.join(root, 'generated', 'openapi.json'), path.join(root, 'generated', 'client', 'rest-api-types.d.ts')];

function builtAt() {
  if (!generated.every((file) => fs.existsSync(file))) return -1;
  try {
    return fs.statSync(stamp).mtimeMs;
  } catch {
    return -1;
  }
}

// A deployed build (the container image) ships dist/ without the sources: nothing to compare.
if (!fs.existsSync(path.join(root, 'src'))) process.exit(0);

const sourcesAt = Math.max(...inputs.map((input) => newestMtime(path.join(root, input))));
if (builtAt() >= sourcesAt) process.exit(0);

process.stderr.write('dist/ (or generated/) is missing or older than the sources: building (npm run build)\n');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// The build's own output goes to stderr: stdout is the command's (the CLI's JSON, piped to jq).
const result = spawnSync(npm, ['run', '-s', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
process.exit(result.status ?? 1);
