import type { EngineBench } from './context';
import type { CpuSpan } from './cpu';
import type { Floor, FloorResult } from './floor';
import { productTables, readSchema, WriteTally } from './index-entries';
import { measureThroughput, type TagCaseProbe, type ThroughputResult } from './throughput';

// The tag case beside the floor (issue 35): floor, engine, floor, back to back on one database,
// so that the engine's figures are read against the floor's of the same minutes. Each side's
// runs/s, CPU per 1,000 runs (this process + the database server), statements and index
// entries per run; the ratios are engine ÷ floor (the floor's figures: both of its runs
// together).

export const TAG_STEP = { id: 'mark', type: 'tag', add: ['bench'] };
// Issue 35's five local steps: tag, branch (taken: the tag is there), update, tag, exit.
export const LOCAL5_STEPS = [
  { id: 'mark', type: 'tag', add: ['bench'] },
  { id: 'fork', type: 'branch', if: { tag: 'bench' }, then: 'note', else: 'done' },
  { id: 'note', type: 'update', customFields: { stage: 'five' } },
  { id: 'mark2', type: 'tag', add: ['bench2'] },
  { id: 'done', type: 'exit' },
];

const FLOOR_WARM_RUNS = 2_000;

export interface Side {
  name: string;
  runs: number;
  seconds: number;
  perSecond: number;
  cpu: CpuSpan;
  statements: number;
  entries: number;
  // rows and index entries per run, by table
  writes: string;
}

export interface TagComparison {
  floors: Side[];
  engine: Side;
  engineResult: ThroughputResult;
  ratios: Ratios;
}

export interface Ratios {
  rate: number;
  cpu: number;
  nodeCpu: number;
  dbCpu: number;
  statements: number;
  entries: number;
}

function floorSide(name: string, r: FloorResult): Side {
  return { name, runs: r.runs, seconds: r.seconds, perSecond: r.perSecond, cpu: r.cpu, statements: r.statements, entries: r.tally.entries, writes: r.tally.describe(r.runs) };
}

export function engineSide(name: string, r: ThroughputResult): Side {
  return { name, runs: r.runs, seconds: r.seconds, perSecond: r.perSecond, cpu: r.cpu, statements: r.statements, entries: r.tally?.entries ?? NaN, writes: r.tally?.describe(r.runs) ?? '' };
}

// The floor's sides as one: their rates' mean, and CPU, statements and entries over all their runs.
export function pooled(floors: readonly Side[]): Side {
  const runs = floors.reduce((sum, s) => sum + s.runs, 0);
  const add = (pick: (s: Side) => number) => floors.reduce((sum, s) => sum + pick(s), 0);
  return {
    name: 'floor (both)',
    runs,
    seconds: add((s) => s.seconds),
    perSecond: add((s) => s.perSecond) / floors.length,
    cpu: { nodeMs: add((s) => s.cpu.nodeMs), dbMs: add((s) => s.cpu.dbMs), othersMs: add((s) => s.cpu.othersMs) },
    statements: add((s) => s.statements),
    entries: add((s) => s.entries),
    writes: floors[0]?.writes ?? '',
  };
}

export const cpuPerThousand = (s: Side) => (1000 * (s.cpu.nodeMs + s.cpu.othersMs + (Number.isFinite(s.cpu.dbMs) ? s.cpu.dbMs : 0))) / s.runs;

export function ratios(engine: Side, floor: Side): Ratios {
  const per = (v: number, s: Side) => v / s.runs;
  return {
    rate: engine.perSecond / floor.perSecond,
    cpu: cpuPerThousand(engine) / cpuPerThousand(floor),
    nodeCpu: per(engine.cpu.nodeMs + engine.cpu.othersMs, engine) / per(floor.cpu.nodeMs + floor.cpu.othersMs, floor),
    dbCpu: per(engine.cpu.dbMs, engine) / per(floor.cpu.dbMs, floor),
    statements: per(engine.statements, engine) / per(floor.statements, floor),
    entries: per(engine.entries, engine) / per(floor.entries, floor),
  };
}

export async function engineTally(bench: EngineBench): Promise<WriteTally> {
  return new WriteTally(await readSchema(bench.admin, await productTables(bench.admin)));
}

export async function warmFloor(floor: Floor): Promise<void> {
  await floor.run(FLOOR_WARM_RUNS);
}

// floor, engine, floor: `runs` each.
export async function measureTagBesideFloor(
  bench: EngineBench,
  floor: Floor,
  runs: number,
  dbPid: number | undefined,
  progress: (text: string) => void,
  probe?: TagCaseProbe,
): Promise<TagComparison & { probeRows: Array<[string, string, string, boolean]> }> {
  await warmFloor(floor);
  progress(`tag: floor, ${runs} runs`);
  const before = floorSide('floor (before)', await floor.run(runs, dbPid));
  progress(`tag: engine, ${runs} runs`);
  const options = { tally: await engineTally(bench), dbPid, probe, probeRows: [] as Array<[string, string, string, boolean]> };
  const engineResult = await measureThroughput(bench, TAG_STEP, runs, options);
  const engine = engineSide('engine', engineResult);
  progress(`tag: floor again, ${runs} runs`);
  const after = floorSide('floor (after)', await floor.run(runs, dbPid));
  const floors = [before, after];
  return { floors, engine, engineResult, ratios: ratios(engine, pooled(floors)), probeRows: options.probeRows };
}
