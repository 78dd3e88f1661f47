import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { select } from '../src/db/sql/statements';
import { withDatabaseAt } from './support/cli';
import { rebindModelsToTestDb } from './support/db';
import { demoKey, startServer } from './support/server-process';

// The examples of the README and of the manual it links to (docs/*.md) run as pasted: their
// shell blocks with curl, in order, in one bash (so an id one block takes from an answer is
// there for the next), and their TypeScript blocks with tsx, against a live service. The order
// is the README's, then each page of docs/ in the order the README first links to it (a page
// it does not link to comes last, by name). A block is left out only when an HTML comment
// `<!-- readme-test: skip (why) -->` stands right before it. curl fails here on any HTTP error
// status (--fail-with-body), so an example that no longer works fails the suite.

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..');

interface Block {
  file: string;
  lang: string;
  line: number;
  code: string;
  skipped: boolean;
  // Runs in the background meanwhile, as in a second terminal (the README's receiver).
  background: boolean;
}

function manualFiles(): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const linked = Array.from(readme.matchAll(/\]\((docs\/[\w-]+\.md)(?:#[\w-]*)?\)/g), ([, file]) => file!);
  const all = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`)
    .sort();
  return ['README.md', ...new Set([...linked.filter((file) => all.includes(file)), ...all])];
}

// GitHub's anchors: a heading lower-cased, punctuation dropped, spaces as hyphens.
function headingSlugs(markdown: string): Set<string> {
  const headings = markdown.split('\n').filter((line) => /^#{1,6} /.test(line));
  return new Set(headings.map((line) => line.replace(/^#+ /, '').toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-')));
}

function readmeBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const file of manualFiles()) {
    const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i += 1) {
      const open = /^```(\w+)\s*$/.exec(lines[i]!);
      if (!open) continue;
      const end = lines.indexOf('```', i + 1);
      blocks.push({
        file,
        lang: open[1]!,
        line: i + 1,
        code: lines.slice(i + 1, end).join('\n'),
        skipped: /^<!-- readme-test: skip \(.+\) -->$/.test(lines[i - 1] ?? ''),
        background: /^<!-- readme-test: background \(.+\) -->$/.test(lines[i - 1] ?? ''),
      });
      i = end;
    }
  }
  return blocks;
}

describe('README and docs/ examples, run as pasted', function () {
  this.timeout(120_000);

  it('keeps the README a front door, and every link of the manual leads somewhere', () => {
    expect(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length).to.be.at.most(200);
    const broken: string[] = [];
    for (const file of manualFiles()) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      for (const [, target, anchor] of text.matchAll(/\]\(((?!https?:)[^)#\s]*)(?:#([^)\s]*))?\)/g)) {
        const resolved = target ? path.join(path.dirname(path.join(ROOT, file)), target) : path.join(ROOT, file);
        if (!fs.existsSync(resolved)) broken.push(`${file}: ${target} does not exist`);
        else if (anchor && resolved.endsWith('.md') && !headingSlugs(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${file}: ${target || file} has no heading #${anchor}`);
        }
      }
      // A file of the repository named in the text (`src/db/sql/statements.ts`) is there.
      for (const [named] of text.matchAll(/\b(?:src|test|web|bench|scripts|db)\/[\w./-]+\.(?:ts|tsx|js|mts|sh|json)\b/g)) {
        if (!fs.existsSync(path.join(ROOT, named))) broken.push(`${file}: names ${named}, which does not exist`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it('finds the blocks it runs, and skips only marked ones', () => {
    const blocks = readmeBlocks();
    expect(blocks.filter((b) => b.lang === 'sh' && b.code.includes('curl') && !b.skipped).length).to.be.at.least(4);
    expect(blocks.filter((b) => b.lang === 'ts' && !b.skipped).length).to.equal(2);
    expect(blocks.filter((b) => b.skipped).length).to.be.at.most(6);
    // The README's own taste and walk-through run too, with the receiver it shows.
    expect(blocks.filter((b) => b.file === 'README.md' && b.lang === 'sh' && b.code.includes('curl') && !b.skipped)).to.have.length(2);
    expect(blocks.filter((b) => b.file === 'README.md' && b.background)).to.have.length(1);
  });

  // A newcomer's first hour: `npm start` as it comes (the embedded database, every default), the
  // key its first start printed, and every example of the README and docs/ pasted in the order
  // a reader meets them: shell blocks in one bash (so an id one block takes is there for the
  // next), TypeScript blocks with tsx, the README's receiver in the background. curl fails here
  // on any HTTP error status (--fail-with-body), so an example that no longer works fails.
  it('runs every example in the order a reader meets it, against a first start\'s demo key, and leaves git status as it was', async () => {
    const gitStatus = async () => (await run('git', ['status', '--porcelain'], { cwd: ROOT })).stdout;
    const statusBefore = await gitStatus();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-'));
    const url = `sqlite:${path.join(dir, 'service.sqlite')}`;
    // HOST and WEBHOOK_ALLOW_INSECURE unset (empty is unset): the defaults a newcomer gets.
    const server = await startServer(url, { HOST: '', WEBHOOK_ALLOW_INSECURE: '', SEQUENCE_ENGINE: '', REDIS_URL: '' });
    const tsFiles: string[] = [];
    try {
      const { key } = demoKey(server);
      const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
      const hook = /^HOOK=(\S+)/m.exec(readme)?.[1];
      expect(hook, 'the README sets HOOK').to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      const tsx = path.join(ROOT, 'node_modules', '.bin', 'tsx');
      const receiverLog = path.join(dir, 'receiver.log');
      const parts: string[] = [
        'set -eo pipefail',
        'curl() { command curl --fail-with-body --max-time 10 "$@"; }',
      ];
      for (const block of readmeBlocks()) {
        if (block.skipped) continue;
        const where = `echo "--- ${block.file} line ${block.line}" >&2`;
        if (block.background) {
          parts.push(where, `${block.code} > ${JSON.stringify(receiverLog)} 2>&1 &`, 'BACKGROUND_PID=$!', 'trap \'kill $BACKGROUND_PID\' EXIT');
          // Until the receiver answers, as a person would wait for it to start.
          parts.push(`for i in $(seq 100); do (exec 3<>/dev/tcp/${new URL(hook!).hostname}/${new URL(hook!).port}) 2>/dev/null && break; sleep 0.1; done`);
        } else if (block.lang === 'sh' && block.code.includes('curl')) {
          parts.push(where, block.code, 'echo');
        } else if (block.lang === 'ts') {
          // Written where its first line says (the repository), under a name of its own.
          const file = path.join(ROOT, `.readme-example-${process.pid}-${tsFiles.length}.ts`);
          fs.writeFileSync(file, block.code);
          tsFiles.push(file);
          parts.push(where, `(cd ${JSON.stringify(dir)} && BASE_URL="\${B%/api/v1}" API_KEY="$KEY" ${JSON.stringify(tsx)} ${JSON.stringify(file)})`);
        }
      }
      const result = await run('bash', ['-c', parts.join('\n')], {
        env: { PATH: process.env.PATH, B: `http://localhost:${server.port}/api/v1`, KEY: key, HOOK: hook },
        maxBuffer: 8 << 20,
      }).catch((error: { code: number; stdout: string; stderr: string }) => error);
      expect('code' in result ? result.code : 0, `${result.stderr}\n${result.stdout.slice(-2000)}`).to.equal(0);
      // The walk-through's run completed, as its loop printed.
      expect(result.stdout).to.include('["pause","succeeded",1]');
      expect(result.stdout).to.include('["hello","succeeded",1]');
      expect(result.stdout).to.include('["notify","succeeded",1]');
      // Its email, captured (no SMTP server on a first start), as the walk-through says.
      expect(result.stdout).to.include('["email","captured","lin@example.com","Welcome, lin@example.com"]');
      // The receiver printed one run.step request, with its webhook-id.
      const received = fs.readFileSync(receiverLog, 'utf8').trim().split('\n');
      expect(received).to.have.length(1);
      expect(received[0]).to.match(/^run_\S+ \{.*"type":"run\.step"/);

      // What the examples did is stored: grace from the README's taste (and the tRPC example),
      // lin and her completed run from its walk-through, ada (deleted by the contacts example,
      // made again by the trigger, her run unenrolled), a and b from the batch; grace's run of
      // the demo sequence, triggered by the tRPC example, under way.
      const stored = await withDatabaseAt(url, async (db) => ({
        contacts: await select<{ email: string }>(db, 'SELECT email FROM contacts ORDER BY email', []),
        sequences: await select<{ name: string }>(db, 'SELECT name FROM sequences', []),
        runs: await select<{ email: string; status: string }>(
          db,
          'SELECT c.email, r.status FROM sequence_runs r JOIN contacts c ON c.id = r.contact_id ORDER BY c.email',
          [],
        ),
      }));
      rebindModelsToTestDb();
      expect(stored.contacts.map((c) => c.email)).to.deep.equal(['a@example.com', 'ada@example.com', 'b@example.com', 'grace@example.com', 'lin@example.com']);
      expect(stored.runs.map((r) => `${r.email} ${r.status}`)).to.have.members(['ada@example.com cancelled', 'lin@example.com completed', `grace@example.com ${stored.runs.find((r) => r.email === 'grace@example.com')?.status}`]);
      expect(['pending', 'running']).to.include(stored.runs.find((r) => r.email === 'grace@example.com')?.status);
      // docs/api.md's draft made while trying things is deleted again.
      expect(stored.sequences.map((row) => row.name)).to.not.include('Trying things');
    } finally {
      for (const file of tsFiles) fs.rmSync(file, { force: true });
      server.child.kill('SIGTERM');
      await server.exited;
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(await gitStatus()).to.equal(statusBefore);
  });
});
