import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import { REPO } from '../support/server-process';

// One Node line for the package (engines), the image (Dockerfile) and CI (.ci/run, through
// scripts/ci/install-node.sh), and on it `npm install` warns about no package's engines
// (EBADENGINE): every engines range in the lock file admits both the oldest Node the package
// accepts and the one CI runs on.

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
const image = /^ARG NODE_IMAGE=node:(\d+)-/m.exec(read('Dockerfile'))?.[1];

describe('the Node line', () => {
  it('is one line in package.json engines, the Dockerfile and CI', () => {
    expect(ciVersion, 'scripts/ci/install-node.sh names a version').to.match(/^\d+\.\d+\.\d+$/);
    expect(semver.satisfies(ciVersion, pkg.engines.node), `${ciVersion} satisfies ${pkg.engines.node}`).to.equal(true);
    expect(semver.major(ciVersion)).to.equal(oldest.major);
    expect(Number(image), 'the Dockerfile\'s node image').to.equal(oldest.major);
    // .ci/run puts that Node first on PATH, and builds native modules against its headers.
    const ci = read('.ci/run');
    expect(ci).to.include('scripts/ci/install-node.sh');
    expect(ci).to.match(/export PATH="\$NODE_PREFIX\/bin:\$PATH"/);
    expect(ci).to.match(/export npm_config_nodedir="\$NODE_PREFIX"/);
  });

  it('is a line still supported: 24 or later (Node 20 reached its end of life in April 2026)', () => {
    expect(oldest.major).to.be.at.least(24);
  });

  it('satisfies every dependency\'s engines, from the oldest version the package accepts to the one CI runs', () => {
    const refused: string[] = [];
    for (const [name, entry] of Object.entries(lock.packages)) {
      const range = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
      if (!name || !range) continue;
      for (const version of [oldest.version, ciVersion]) {
        if (!semver.satisfies(version, range)) refused.push(`${name} (node ${range}) refuses ${version}`);
      }
    }
    expect(refused).to.deep.equal([]);
  });

  it('is the one the README asks for', () => {
    expect(read('README.md')).to.include(`Node.js ${oldest.major} (${pkg.engines.node.replace(/^>=/, '')} or later)`);
  });
});
