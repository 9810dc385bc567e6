// Runs the real folio command in child processes, with no build needed: under vitest src/ as
// test/global-setup.ts compiled it for the run, elsewhere (Playwright's setup) through tsx.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** node's arguments that run `folio <args>`. */
export function folioArgs(args: string[]): string[] {
  if (process.env.VITEST) return [inject('folioMain'), ...args];
  return ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), ...args];
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function baseEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env };
}

/** Runs `folio <args>` to completion. */
export function runFolio(args: string[], env: Record<string, string>): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, folioArgs(args), { cwd: ROOT, env: baseEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Server {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `folio serve` and waits until /health answers. */
// A first start creates the database (initdb): seconds when idle, far more while other test
// files keep both cores busy.
export async function startServer(env: Record<string, string>, timeoutMs = 90_000, args: string[] = []): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, folioArgs(['serve', ...args]), {
    cwd: ROOT,
    env: baseEnv({ PORT: String(port), HOST: '127.0.0.1', ...env }),
  });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`folio serve exited with ${child.exitCode}: ${output}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`folio serve did not answer within ${timeoutMs} ms: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
