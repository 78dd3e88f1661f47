import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createApp } from '../src/app';
import { select } from '../src/db/sql/statements';
import { silentLogger } from './support/app';
import { testDb } from './support/db';
import { buildApiKey, buildSequence, buildTenant } from './support/factories';
import { closeServer, listenOnLoopback } from './support/listen';
import { startReceiver } from './support/webhook-receiver';
import { SequenceEngine } from '../src/services/engine/engine';

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
      });
      i = end;
    }
  }
  return blocks;
}

describe('README and docs/ examples, run as pasted', function () {
  this.timeout(60_000);
  let server: Server;
  let base: string;
  // The README's sequence runs for real: an engine on the real clock, and a receiver for its
  // webhook step (the README's $HOOK).
  let engine: SequenceEngine;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    for (const tool of ['bash', 'curl', 'jq']) {
      await run('sh', ['-c', `command -v ${tool}`]).catch(() => {
        throw new Error(`${tool} is missing: the README's examples need it (.ci/run installs it from Debian's packages)`);
      });
    }
    const app = createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000 },
      logger: silentLogger,
      webhooks: { allowInsecure: true, now: () => new Date() },
    });
    ({ server, base } = await listenOnLoopback(app));
    receiver = await startReceiver(() => 204);
    engine = new SequenceEngine(testDb(), { logger: silentLogger, idlePollMs: 100, webhook: { timeoutMs: 2_000, allowInsecure: true } });
    engine.start();
  });
  after(async () => {
    await engine.stop(1_000);
    await receiver.close();
    await closeServer(server);
  });

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
    // The README's own taste runs too.
    expect(blocks.filter((b) => b.file === 'README.md' && b.lang === 'sh' && b.code.includes('curl') && !b.skipped)).to.have.length(2);
  });

  it('runs the curl examples in order in one shell, every request answered with success', async () => {
    const { accountId, key } = await buildTenant();
    await buildSequence(accountId, 'active');
    const examples = readmeBlocks().filter((b) => b.lang === 'sh' && b.code.includes('curl') && !b.skipped);
    const script = [
      'set -eo pipefail',
      'curl() { command curl --fail-with-body --max-time 10 "$@"; }',
      ...examples.map((b) => `echo "--- ${b.file} line ${b.line}" >&2\n${b.code}\necho`),
    ].join('\n');
    const result = await run('bash', ['-c', script], { env: { PATH: process.env.PATH, B: `${base}/api/v1`, KEY: key, HOOK: receiver.url }, maxBuffer: 8 << 20 }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect('code' in result ? result.code : 0, `${result.stderr}\n${result.stdout.slice(-2000)}`).to.equal(0);

    // What the examples did is stored: grace from the README's taste, lin and her completed run
    // from its sequence, ada (deleted by the contacts example, made again by the trigger, tagged
    // by enroll-by-email), a and b from the batch, the trigger's run cancelled.
    const contacts = await select<{ email: string; tags: string }>(testDb(), 'SELECT email, tags FROM contacts WHERE account_id = ? ORDER BY email', [accountId]);
    expect(contacts.map((c) => c.email)).to.deep.equal(['a@example.com', 'ada@example.com', 'b@example.com', 'grace@example.com', 'lin@example.com']);
    expect(JSON.parse(contacts[4]!.tags)).to.deep.equal(['welcomed']);
    const runs = await select<{ status: string }>(testDb(), 'SELECT status FROM sequence_runs WHERE account_id = ? ORDER BY status', [accountId]);
    expect(runs.map((r) => r.status)).to.deep.equal(['cancelled', 'completed']);
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).to.deep.equal(['run.step']);
    // docs/api.md's draft made while trying things is deleted again.
    const names = await select<{ name: string }>(testDb(), 'SELECT name FROM sequences WHERE account_id = ?', [accountId]);
    expect(names.map((row) => row.name)).to.not.include('Trying things');
  });

  it('runs the TypeScript examples with tsx, as their first line says', async () => {
    const { accountId } = await buildTenant();
    await buildSequence(accountId, 'active');
    // The tRPC example moves a run, which takes a runner key, as its comment says.
    const runner = await buildApiKey(accountId, { kind: 'runner' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-ts-'));
    for (const [index, block] of readmeBlocks()
      .filter((b) => b.lang === 'ts' && !b.skipped)
      .entries()) {
      // Written where the first line says (the repository), under a name of its own.
      const file = path.join(ROOT, `.readme-example-${process.pid}-${index}.ts`);
      fs.writeFileSync(file, block.code);
      try {
        const tsx = path.join(ROOT, 'node_modules', '.bin', 'tsx');
        const result = await run(tsx, [file], { cwd: dir, env: { ...process.env, BASE_URL: base, API_KEY: runner.key } }).catch(
          (error: { code: number; stdout: string; stderr: string }) => error,
        );
        expect('code' in result ? result.code : 0, `${block.file} line ${block.line}: ${result.stderr}`).to.equal(0);
      } finally {
        fs.rmSync(file, { force: true });
      }
    }
    const runs = await select<{ status: string }>(testDb(), 'SELECT status FROM sequence_runs WHERE account_id = ?', [accountId]);
    expect(runs.map((r) => r.status)).to.deep.equal(['running']);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
