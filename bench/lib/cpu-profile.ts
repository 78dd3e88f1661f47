import fs from 'node:fs';

// Reads a V8 CPU profile (node --cpu-prof) and says where the busy time went, by package.
// Time in Node's own code (the socket writes, timers, microtasks) is charged to the nearest
// caller that is a package or a project file: the writev of an HTTP answer counts under the
// code that ended the response, a statement's socket write under mysql2.

interface ProfileNode {
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
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

  const part = (url: string): string | undefined => {
    const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
    if (pkg) return pkg[1];
    if (url.includes(codeDir)) return url.slice(url.indexOf(codeDir) + codeDir.length).replace(/\.js$/, '');
    return undefined;
  };
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    busy += us;
    let name = functionName === '(garbage collector)' ? 'GC' : undefined;
    for (let at: ProfileNode | undefined = node; !name && at; at = byId.get(parentOf.get(at.id) ?? -1)) name = part(at.callFrame.url);
    name ??= `node (${functionName || 'anonymous'})`;
    parts.set(name, (parts.get(name) ?? 0) + us);
    const where = url.includes('node_modules/') ? url.replace(/.*node_modules\//, '') : url.includes(codeDir) ? url.slice(url.indexOf(codeDir) + codeDir.length) : url;
    const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const shares = (map: Map<string, number>) =>
    [...map].map(([key, us]): [string, number] => [key, us / busy]).sort((a, b) => b[1] - a[1]);
  return { busyMs: busy / 1000, byPart: shares(parts), byFunction: shares(functions) };
}
