import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const REPO = path.resolve(__dirname, '..', '..');

// Compiles a TypeScript entry and the project files it requires (relative imports, followed
// through the emitted JavaScript, so type-only imports are left behind) into outDir, laid out
// as in the repository. The bare server then runs as plain `node file.js`, as the service runs
// from dist/: no loader, no source maps. Packages resolve through NODE_PATH (see nodePath).
export function compileEntry(entry: string, outDir: string): string {
  const seen = new Set<string>();
  const pending = [path.resolve(REPO, entry)];
  while (pending.length > 0) {
    const source = pending.pop()!;
    if (seen.has(source)) continue;
    seen.add(source);
    const { outputText } = ts.transpileModule(fs.readFileSync(source, 'utf8'), {
      fileName: source,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        experimentalDecorators: true,
        useDefineForClassFields: false,
      },
    });
    const target = path.join(outDir, path.relative(REPO, source)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, outputText);
    for (const [, specifier] of outputText.matchAll(/require\("(\.{1,2}\/[^"]+)"\)/g)) {
      pending.push(resolveSource(path.resolve(path.dirname(source), specifier)));
    }
  }
  return path.join(outDir, path.relative(REPO, path.resolve(REPO, entry))).replace(/\.ts$/, '.js');
}

function resolveSource(base: string): string {
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error(`cannot find the source of ${base}`);
}

// Where a compiled file outside the repository finds the project's packages.
export function nodePath(): string {
  return path.join(REPO, 'node_modules');
}
