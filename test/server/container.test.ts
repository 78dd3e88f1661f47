import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ensureBuilt, REPO, whenListening } from '../support/server-process';

// Docker does not run on these machines, so the image's runtime stage is checked as far as it
// can be without it: the Dockerfile is read, a directory is laid out as its COPY lines lay out
// /app, and its CMD runs literally there, as an unprivileged user, with the stage's ENV.

interface Stage {
  from: string;
  lines: string[];
}

function dockerfileStages(): Stage[] {
  const text = fs.readFileSync(path.join(REPO, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (/^FROM\s/i.test(line)) stages.push({ from: line, lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

function instruction(stage: Stage, name: string): string[] {
  return stage.lines.filter((line) => line.toUpperCase().startsWith(`${name} `)).map((line) => line.slice(name.length).trim());
}

// ENV A=1 B=2 (no quoted values in this Dockerfile).
function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const args of instruction(stage, 'ENV')) {
    for (const pair of args.split(/\s+/)) {
      const [name, ...value] = pair.split('=');
      env[name] = value.join('=');
    }
  }
  return env;
}

// An unprivileged account to run as, when the test runs as root (as CI does).
function unprivileged(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = fs.readFileSync('/etc/passwd', 'utf8').split('\n');
  const nobody = passwd.map((line) => line.split(':')).find((fields) => fields[0] === 'nobody');
  if (!nobody) throw new Error('no "nobody" user to run the server as');
  return { uid: Number(nobody[2]), gid: Number(nobody[3]) };
}

// Whether another user can reach files under dir (every directory above it searchable by all).
function reachableByOthers(dir: string): boolean {
  for (let current = dir; ; current = path.dirname(current)) {
    if ((fs.statSync(current).mode & 0o001) === 0) return false;
    if (path.dirname(current) === current) return true;
  }
}

describe('the container image (Dockerfile)', function () {
  this.timeout(60_000);
  const stages = dockerfileStages();
  const runtime = stages.at(-1)!;

  it('builds in one stage and runs in another that has no compilers, no tsx and no npm in its CMD', () => {
    expect(stages.length).to.be.at.least(2);
    expect(stages[0].lines.join('\n')).to.match(/npm ci/).and.to.match(/npm run build/);
    expect(runtime.lines.join('\n')).not.to.match(/g\+\+|\bmake\b|python3|apt-get install|tsx/);
    // The production dependencies come from the build stage, which pruned its dev ones.
    expect(stages[0].lines.join('\n')).to.match(/npm prune --omit=dev/);
    expect(instruction(runtime, 'COPY').join('\n')).to.match(/--from=build \/app\/node_modules/);
  });

  it('runs node directly as PID 1, as a non-root user, with a health check and a data volume', () => {
    const [cmd] = instruction(runtime, 'CMD');
    expect(JSON.parse(cmd)).to.deep.equal(['node', 'dist/server.js']);
    expect(instruction(runtime, 'USER')).to.deep.equal(['node']);
    expect(instruction(runtime, 'HEALTHCHECK').join(' ')).to.include('/readyz');
    expect(instruction(runtime, 'VOLUME').join(' ')).to.include('/app/data');
    // The service's own default is this machine only; a container is reached from outside it.
    expect(stageEnv(runtime)).to.include({ HOST: '0.0.0.0' });
    // The base is a current Node LTS, not Node 20 (end of life in April 2026).
    const image = /ARG NODE_IMAGE=(\S+)/.exec(fs.readFileSync(path.join(REPO, 'Dockerfile'), 'utf8'))?.[1] ?? '';
    expect(Number(/^node:(\d+)/.exec(image)?.[1])).to.be.at.least(24);
    const ignored = fs.readFileSync(path.join(REPO, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).to.include.members(['node_modules', 'dist', 'data', '.git', '.env']);
  });

  it("serves from the runtime stage's layout on the embedded default, as an unprivileged user, and stops cleanly on SIGTERM", async () => {
    ensureBuilt();
    const app = fs.mkdtempSync(path.join(os.tmpdir(), 'image-app-'));
    fs.chmodSync(app, 0o755);
    const user = unprivileged();
    try {
      // COPY [--from=build] /app/<x> ./<x>, COPY db ./db: every source lives in the repository
      // (the build stage's /app is the repository after npm run build).
      for (const copy of instruction(runtime, 'COPY')) {
        const [source, target] = copy.replace(/--\S+\s+/g, '').split(/\s+/);
        const from = path.join(REPO, source.replace(/^\/app\/?/, ''));
        expect(fs.existsSync(from), `${source} exists`).to.equal(true);
        // Linked where the unprivileged user can reach the repository, copied where it cannot.
        if (!user || reachableByOthers(REPO)) fs.symlinkSync(from, path.join(app, target));
        else fs.cpSync(from, path.join(app, target), { recursive: true, verbatimSymlinks: true });
      }
      // RUN mkdir -p /app/data && chown node:node /app/data
      fs.mkdirSync(path.join(app, 'data'));
      if (user) fs.chownSync(path.join(app, 'data'), user.uid, user.gid);
      const [command, ...args] = JSON.parse(instruction(runtime, 'CMD')[0]) as string[];
      const child = spawn(command, args, {
        cwd: app,
        ...user,
        // The stage's ENV, with the port and address a `docker run -e` would override.
        env: { PATH: process.env.PATH, ...stageEnv(runtime), PORT: '0', HOST: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const server = await whenListening(child);
      const ready = await fetch(`http://127.0.0.1:${server.port}/readyz`);
      expect(ready.status).to.equal(200);
      expect(fs.existsSync(path.join(app, 'data', 'service.sqlite')), 'the embedded database is in /app/data').to.equal(true);
      if (user) expect(fs.statSync(path.join(app, 'data', 'service.sqlite')).uid).to.equal(user.uid);
      expect(server.stdout()).to.match(/API key:\s+svc_[0-9a-f]{40}/);
      // The dashboard ships in dist/, and the demo user's setup link is printed beside the key.
      expect(server.stdout()).to.match(/http:\/\/localhost:\d+\/dashboard\/setup\?token=[A-Za-z0-9_-]{43}/);
      const dashboard = await fetch(`http://127.0.0.1:${server.port}/dashboard/`);
      expect(dashboard.status).to.equal(200);
      expect(await dashboard.text()).to.include('<div id="root"></div>');
      // The document is made by the server, not read from the build's generated/ (not in /app).
      const document = await fetch(`http://127.0.0.1:${server.port}/api/v1/openapi.json`);
      expect(document.status).to.equal(200);
      expect(((await document.json()) as { paths: object }).paths).to.have.property('/contacts');
      child.kill('SIGTERM');
      expect(await server.exited).to.equal(0);
      expect(server.stderr()).to.include('"msg":"stopped"');
    } finally {
      fs.rmSync(app, { recursive: true, force: true });
    }
  });
});
