// The code a benchmark measures, built as users run it: src/ compiled with the project's build
// settings into a cache directory (dist/ is left alone), beside a copy of bin/, so that
// `bin/folio serve` starts it with the launcher's memory settings. From the working tree as it
// is, or from the last commit (others' edits in progress cannot break that one).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface BuiltTree {
  /** Holds dist/ and bin/. */
  root: string;
  /** What was built, for the report. */
  label: string;
  /** tsc's complaints (what it emitted is still there), or null. */
  errors: string | null;
}

function git(...gitArgs: string[]): string {
  return execFileSync('git', gitArgs, { cwd: ROOT, encoding: 'utf8' }).trim();
}

function tsc(project: string, outDir: string): string | null {
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project, '--outDir', outDir], { cwd: ROOT, stdio: 'pipe' });
    return null;
  } catch (error) {
    return String((error as { stdout?: Buffer }).stdout ?? error);
  }
}

/** Compiles `source` into node_modules/.cache/<cache>/<source>. */
export async function buildTree(cache: string, source: 'worktree' | 'head'): Promise<BuiltTree> {
  const root = path.join(ROOT, 'node_modules/.cache', cache, source);
  const head = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--', 'src', 'bin').length > 0;
  if (source === 'worktree') {
    const errors = tsc('tsconfig.build.json', path.join(root, 'dist'));
    await cp(path.join(ROOT, 'bin'), path.join(root, 'bin'), { recursive: true });
    return { root, label: `working tree${dirty ? ' (uncommitted changes)' : ''} at ${head}`, errors };
  }
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  execFileSync('sh', ['-c', 'git archive HEAD src bin tsconfig.json tsconfig.build.json | tar -x -C "$0"', root], { cwd: ROOT });
  const errors = tsc(path.join(root, 'tsconfig.build.json'), path.join(root, 'dist'));
  return { root, label: `HEAD ${head}${dirty ? ' (the working tree has uncommitted changes, not measured)' : ''}`, errors };
}

/** How `folio serve` starts: a tree's bin/folio, or node itself (src/ through tsx). */
export interface ServeCommand {
  command: string;
  args: string[];
}

/**
 * Starts `folio serve` on `port` with `env`, a benchmark API key (`bench`, write scope) unless
 * `env` sets FOLIO_API_KEYS, no rate limit and warnings only in the log; with `--cpu-prof` into
 * `profileDir` when given.
 */
export function spawnServe(serve: ServeCommand, port: number, env: Record<string, string>, profileDir: string | null): ChildProcess {
  const profileFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  // bin/folio takes node's flags from FOLIO_NODE_FLAGS (--cpu-prof may not be in NODE_OPTIONS).
  const viaNode = serve.command === process.execPath;
  return spawn(serve.command, viaNode ? [...profileFlags, ...serve.args] : serve.args, {
    cwd: ROOT,
    env: {
      ...process.env,
      ...(viaNode ? {} : { FOLIO_NODE_FLAGS: profileFlags.join(' ') }),
      FOLIO_API_KEYS: 'bench:bench:write',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      FOLIO_RATE_LIMIT: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Whether `child`, serving on `port`, answered /ready within `seconds` (false once it exited). */
export async function untilReady(port: number, child: ChildProcess, seconds = 600): Promise<boolean> {
  for (let i = 0; i < seconds * 10; i++) {
    if (await fetch(`http://127.0.0.1:${port}/ready`).then((r) => r.ok, () => false)) return true;
    if (child.exitCode !== null) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** A time of performance.now() on CLOCK_MONOTONIC in microseconds, the clock of V8's CPU profiles. */
export function monotonicMicros(at: number): number {
  return Math.round(Number(process.hrtime.bigint() / 1000n) - (performance.now() - at) * 1000);
}
