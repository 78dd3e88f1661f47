'use strict';
// The import graph of src/services, read from the source text (no compiler): which file imports
// which, which folder imports which, and the file-level cycles. test/architecture/
// import-direction.test.ts holds the rules; `node scripts/import-graph.js` prints the figures.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const servicesDir = path.join(root, 'src', 'services');

// `import ... from '...'`, `export ... from '...'`, `import '...'` and `import('...')`, type-only
// imports included: a type is a dependency of the design even when it costs nothing at run time.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;

function sourceFiles(dir) {
  const files = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(full);
  }
  return files.sort();
}

function resolveRelative(from, specifier) {
  const base = path.resolve(path.dirname(from), specifier.replace(/\.js$/, ''));
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const relative = (dir, file) => path.relative(dir, file).split(path.sep).join('/');

/** File-level edges inside src/services, as paths relative to it ('runs/run-state.ts'). */
function servicesGraph(dir = servicesDir) {
  const graph = new Map();
  for (const file of sourceFiles(dir)) {
    const targets = new Set();
    for (const match of stripComments(fs.readFileSync(file, 'utf8')).matchAll(SPECIFIER)) {
      if (!match[1].startsWith('.')) continue;
      const target = resolveRelative(file, match[1]);
      if (target && target.startsWith(dir + path.sep)) targets.add(relative(dir, target));
    }
    graph.set(relative(dir, file), [...targets].sort());
  }
  return graph;
}

/** The top folder of a services path: 'engine/outbound/dispatcher.ts' -> 'engine'; a file at the top is '.'. */
function folderOf(file) {
  const parts = file.split('/');
  return parts.length > 1 ? parts[0] : '.';
}

/** Each file import that crosses from folder `from` into folder `to`, as 'a.ts -> b.ts'. */
function crossings(graph, from, to) {
  const found = [];
  for (const [file, targets] of graph) {
    if (folderOf(file) !== from) continue;
    for (const target of targets) if (folderOf(target) === to) found.push(`${file} -> ${target}`);
  }
  return found;
}

/** Strongly connected components with more than one file (or a file importing itself): Tarjan. */
function cycles(graph) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  function visit(node) {
    indices.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), indices.get(next)));
      }
    }
    if (low.get(node) !== indices.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
  }
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/** Folder-level edges: 'engine -> runs' with the number of file imports behind each. */
function folderEdges(graph) {
  const counts = new Map();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const edge = `${folderOf(file)} -> ${folderOf(target)}`;
      if (folderOf(file) !== folderOf(target)) counts.set(edge, (counts.get(edge) ?? 0) + 1);
    }
  }
  return new Map([...counts].sort(([a], [b]) => a.localeCompare(b)));
}

module.exports = { servicesGraph, folderOf, crossings, cycles, folderEdges };

if (require.main === module) {
  const graph = servicesGraph();
  console.log(`${graph.size} files under src/services`);
  for (const [from, to] of [['sequences', 'engine'], ['engine', 'sequences']]) {
    const found = crossings(graph, from, to);
    console.log(`\n${from} -> ${to}: ${found.length}`);
    for (const line of found) console.log(`  ${line}`);
  }
  const found = cycles(graph);
  console.log(`\nfile-level cycles: ${found.length}`);
  for (const component of found) console.log(`  [${component.length}] ${component.join(', ')}`);
  if (process.argv.includes('--folders')) {
    console.log('\nfolder edges:');
    for (const [edge, count] of folderEdges(graph)) console.log(`  ${edge} (${count})`);
  }
}
