// Compiles src/ once per run for the tests that start `folio` as a child process (and builds
// the typed client that `folio mcp` imports). Through
// tsx's loader each child (and each of its worker threads) took about 1.7 s longer to start,
// and the suite starts some sixty. TypeScript's transpileModule makes what tsx makes: each
// file on its own, no type check (the CI's typecheck does that). The output goes under
// node_modules/.cache, where the children resolve their packages from the project's
// node_modules, and is reused while no file of src/ changes.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import type { TestProject } from 'vitest/node';

const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');
const CACHE = path.join(ROOT, 'node_modules/.cache/folio-test-src');

declare module 'vitest' {
  export interface ProvidedContext {
    /** src/main.ts compiled to JavaScript, for `node <folioMain> ...`. */
    folioMain: string;
  }
}

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : []))
    .sort();
}

/** The compiled tree of the sources as they are: made when missing, written whole (rename). */
function compiledSources(): string {
  const files = sourceFiles(SRC);
  const hash = createHash('sha256').update(ts.version);
  for (const file of files) hash.update(path.relative(SRC, file)).update(fs.readFileSync(file));
  const dir = path.join(CACHE, hash.digest('hex').slice(0, 16));
  if (fs.existsSync(dir)) return dir;
  const partial = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}`;
  for (const file of files) {
    const { outputText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, inlineSourceMap: true, inlineSources: true },
    });
    const out = path.join(partial, 'src', path.relative(SRC, file)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, outputText);
  }
  // Earlier compilations are of sources that no longer exist (another run's partial one,
  // named with a dot, is left to it).
  for (const old of fs.readdirSync(CACHE)) if (!old.includes('.')) fs.rmSync(path.join(CACHE, old), { recursive: true, force: true });
  fs.renameSync(partial, dir);
  return dir;
}

const CLIENT = path.join(ROOT, 'clients/typescript');

/**
 * The typed client's dist/, which `folio mcp` imports as @folio/client: built (as `npm run
 * build` builds it) when missing or older than a source file of the client.
 */
function builtClient(): void {
  const built = path.join(CLIENT, 'dist/index.js');
  const builtAt = fs.existsSync(built) ? fs.statSync(built).mtimeMs : 0;
  if (sourceFiles(path.join(CLIENT, 'src')).every((file) => fs.statSync(file).mtimeMs <= builtAt)) return;
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(CLIENT, 'tsconfig.json')], { stdio: 'inherit' });
}

export default function setup(project: TestProject): void {
  builtClient();
  project.provide('folioMain', path.join(compiledSources(), 'src/main.js'));
}
