import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import { REPO } from '../support/server-process';

// Two Node lines: 20, which machines come with (the oldest engines admits), and 24, the
// current LTS the container image runs. CI runs the SQLite suite on 20 and the MariaDB suite on
// 24 (.ci/run, through scripts/ci/install-node.sh), so a defect of one line fails CI; and on
// both, `npm install` warns about no package's engines (EBADENGINE).

interface Semver {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string; major: number } | null;
  major(version: string): number;
}
const semver = createRequire(__filename)('semver') as Semver;

const read = (file: string) => fs.readFileSync(path.join(REPO, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } | string[] }> };

const oldest = semver.minVersion(pkg.engines.node)!;
const ciVersion = /^VERSION="\$\{NODE_VERSION:-(\d+\.\d+\.\d+)\}"$/m.exec(read('scripts/ci/install-node.sh'))?.[1] ?? '';
const ci20Version = /^NODE20_VERSION="\$\{NODE20_VERSION:-(\d+\.\d+\.\d+)\}"$/m.exec(read('.ci/run'))?.[1] ?? '';
const image = /^ARG NODE_IMAGE=node:(\d+)-/m.exec(read('Dockerfile'))?.[1];

describe('the Node line', () => {
  it('admits Node 20 and 24 in engines; the Dockerfile runs 24; CI runs the SQLite suite on 20 and MariaDB on 24', () => {
    expect(oldest.major, 'the oldest Node engines admits').to.equal(20);
    expect(ciVersion, 'scripts/ci/install-node.sh names a version').to.match(/^24\.\d+\.\d+$/);
    expect(ci20Version, '.ci/run names a Node 20 version').to.match(/^20\.\d+\.\d+$/);
    for (const version of [ci20Version, ciVersion]) {
      expect(semver.satisfies(version, pkg.engines.node), `${version} satisfies ${pkg.engines.node}`).to.equal(true);
    }
    expect(Number(image), "the Dockerfile's node image").to.equal(semver.major(ciVersion));
    const ci = read('.ci/run');
    expect(ci).to.include('scripts/ci/install-node.sh');
    // The first suite on 20, then sqlite3 rebuilt for 24 and the second suite on it.
    const order = ['use_node "$NODE20_PREFIX"', 'run_suite sqlite', 'use_node "$NODE24_PREFIX"', 'npm rebuild sqlite3', 'run_suite mariadb'];
    const at = order.map((text) => ci.indexOf(text));
    expect(at.every((index) => index >= 0), `.ci/run has ${order.join(', ')}`).to.equal(true);
    expect([...at].sort((a, b) => a - b)).to.deep.equal(at);
    expect(ci).to.match(/export npm_config_nodedir="\$1"/);
  });

  it('satisfies every dependency\'s engines, from the oldest version the package accepts to the one CI runs', () => {
    const refused: string[] = [];
    for (const [name, entry] of Object.entries(lock.packages)) {
      const range = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
      if (!name || !range) continue;
      for (const version of [oldest.version, ci20Version, ciVersion]) {
        if (!semver.satisfies(version, range)) refused.push(`${name} (node ${range}) refuses ${version}`);
      }
    }
    expect(refused).to.deep.equal([]);
  });

  it('is what the README asks for', () => {
    expect(read('README.md')).to.include(`Node.js 20 (${oldest.version} or later) or 24`);
  });
});
