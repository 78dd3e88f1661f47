import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { REPO } from './compile';

// The benchmarks' knobs, all from the environment (bench/README.md lists them).

export function numberFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number, not ${JSON.stringify(raw)}`);
  return value;
}

export function listFrom(name: string, fallback: readonly string[]): string[] {
  const raw = process.env[name];
  return raw ? raw.split(',').map((item) => item.trim()).filter(Boolean) : [...fallback];
}

// One line on what the figures were measured on.
export function machineLine(): string {
  const [one, five] = os.loadavg();
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['-C', REPO, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', REPO, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim();
    if (dirty) commit += ' + uncommitted changes in src/';
  } catch {
    // not a git checkout
  }
  return `node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? '?'}), load average ${one.toFixed(2)} / ${five.toFixed(2)} (1 / 5 min), commit ${commit}`;
}

export function loadAverage(): string {
  return os.loadavg()[0].toFixed(2);
}
