import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Document, Spectral } from '@stoplight/spectral-core';
import { Json } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';

// The two linters integrators run on the document, offline. Spectral through its library (its
// CLI takes about 2 s to start); Redocly through its CLI (2.x ships no library API; it answers in
// about 1 s), with telemetry and the update check off.

const ROOT = path.resolve(__dirname, '..', '..');

export interface LintProblem {
  tool: 'spectral' | 'redocly';
  severity: string;
  rule: string;
  where: string;
  message: string;
}

// spectral:oas, as `extends: ["spectral:oas"]` gives it: the recommended rules.
export async function spectralLint(document: object): Promise<LintProblem[]> {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas as never, 'recommended']] });
  const results = await spectral.run(new Document(JSON.stringify(document, null, 2), Json));
  const severities = ['error', 'warning', 'info', 'hint'];
  return results
    .filter((result) => result.severity <= 1)
    .map((result) => ({
      tool: 'spectral' as const,
      severity: severities[result.severity] ?? String(result.severity),
      rule: String(result.code),
      where: result.path.join('.'),
      message: result.message,
    }));
}

// Redocly's `recommended` ruleset, as configured in redocly.yaml at the repository root.
export async function redoclyLint(document: object): Promise<LintProblem[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
  const file = path.join(dir, 'openapi.json');
  try {
    fs.writeFileSync(file, JSON.stringify(document, null, 2));
    const cli = require.resolve('@redocly/cli/bin/cli.js');
    const args = [cli, 'lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'json'];
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const { stdout, stderr } = await run(process.execPath, args, env, 20_000);
    const start = stdout.indexOf('{');
    if (start < 0) throw new Error(`redocly printed no report:\n${stdout}\n${stderr}`);
    const report = JSON.parse(stdout.slice(start)) as {
      problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
    };
    return report.problems.map((problem) => ({
      tool: 'redocly' as const,
      severity: problem.severity,
      rule: problem.ruleId,
      where: problem.location[0]?.pointer ?? '',
      message: problem.message,
    }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => resolve({ stdout, stderr }));
  });
}

export function formatProblems(problems: LintProblem[]): string {
  return problems.map((p) => `${p.tool} ${p.severity} ${p.rule} at ${p.where}: ${p.message}`).join('\n');
}
