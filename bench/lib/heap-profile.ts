import fs from 'node:fs';
import { attribute, type Attribution, type ProfileNode } from './cpu-profile';

// Reads a sampling heap profile (bench/lib/heap-sampler.cjs) and says where the bytes were
// allocated, by part and by function, as bench/lib/cpu-profile.ts does for CPU time.

interface HeapNode {
  id: number;
  callFrame: ProfileNode['callFrame'];
  children: HeapNode[];
}

interface HeapProfile {
  head: HeapNode;
  samples: Array<{ size: number; nodeId: number }>;
}

export function readHeapProfile(file: string, codeDir: string): Attribution {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as HeapProfile;
  const nodes: ProfileNode[] = [];
  const flatten = (node: HeapNode) => {
    nodes.push({ id: node.id, callFrame: node.callFrame, children: node.children.map((child) => child.id) });
    node.children.forEach(flatten);
  };
  flatten(profile.head);
  const bytes = new Map<number, number>();
  for (const sample of profile.samples) bytes.set(sample.nodeId, (bytes.get(sample.nodeId) ?? 0) + sample.size);
  return attribute(nodes, bytes, codeDir);
}
