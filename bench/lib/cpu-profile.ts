import fs from 'node:fs';

// Reads a V8 CPU profile (node --cpu-prof) and says where the busy time went, by package.
// Time in Node's own code (the socket writes, timers, microtasks) is charged to the nearest
// caller that is a package or a project file: the writev of an HTTP answer counts under the
// code that ended the response, a statement's socket write under mysql2.

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileShares {
  busyMs: number;
  // Part of the busy time, 0..1, by package (`express`, `@trpc/server`), project file
  // (`http/rest-api`) or `GC`, largest first.
  byPart: Array<[string, number]>;
  // Self time by function (`name file:line`), largest first.
  byFunction: Array<[string, number]>;
}

// codeDir: where the server's own compiled code lives (its files are named relative to it).
export function readProfile(file: string, codeDir: string): ProfileShares {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const { total, byPart, byFunction } = attribute(profile.nodes, selfUs, codeDir);
  return { busyMs: total / 1000, byPart, byFunction };
}

export interface Attribution {
  // The sum of the amounts attributed (idle time left out).
  total: number;
  byPart: Array<[string, number]>;
  byFunction: Array<[string, number]>;
}

// Sums an amount per profile node (µs of CPU, or bytes allocated) by part and by function, as
// shares of the total. A node's part is the nearest package or project file on its stack.
export function attribute(nodes: readonly ProfileNode[], selfAmounts: Map<number, number>, codeDir: string): Attribution {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const part = (url: string): string | undefined => {
    const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
    if (pkg) return pkg[1];
    if (url.includes(codeDir)) return url.slice(url.indexOf(codeDir) + codeDir.length).replace(/\.js$/, '');
    return undefined;
  };
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  for (const [id, amount] of selfAmounts) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    total += amount;
    let name = functionName === '(garbage collector)' ? 'GC' : undefined;
    for (let at: ProfileNode | undefined = node; !name && at; at = byId.get(parentOf.get(at.id) ?? -1)) name = part(at.callFrame.url);
    name ??= `node (${functionName || 'anonymous'})`;
    parts.set(name, (parts.get(name) ?? 0) + amount);
    const where = url.includes('node_modules/') ? url.replace(/.*node_modules\//, '') : url.includes(codeDir) ? url.slice(url.indexOf(codeDir) + codeDir.length) : url;
    const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + amount);
  }
  const shares = (map: Map<string, number>) =>
    [...map].map(([key, amount]): [string, number] => [key, amount / total]).sort((a, b) => b[1] - a[1]);
  return { total, byPart: shares(parts), byFunction: shares(functions) };
}
