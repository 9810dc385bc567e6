// A `folio serve` child process on either engine for benchmarks, with the probes they share:
// resident memory from /proc, /health latency while work runs, percentiles.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { API_KEYS_ENV } from '../../test/helpers/app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export interface Served {
  port: number;
  child: ChildProcess;
  cleanup: () => Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Answer {
  status: number;
  ms: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export function send(port: number, method: string, url: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    // A request Node refuses to send (a header it finds invalid) or a reset counts as status 0.
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(body);
  });
}

/** Lets the process exit once the benchmark is done with its keep-alive connections. */
export function closeConnections(): void {
  agent.destroy();
}

export function residentMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(field));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

/** Clock ticks a second in /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_A_SECOND = 100;

/** CPU seconds (user and system) a process has used, all its threads or only `thread`; 0 once it is gone. */
export function cpuSeconds(pid: number, thread?: number): number {
  try {
    // The command name (field 2) may hold spaces: the fields counted are those after its ')'.
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_A_SECOND;
  } catch {
    return 0;
  }
}

/** CPU seconds used by each process named `postgres` running now (the server's backends and background processes). */
function postgresCpuSeconds(): Map<number, number> {
  const used = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') used.set(Number(entry), cpuSeconds(Number(entry)));
    } catch {
      // gone since the listing
    }
  }
  return used;
}

/**
 * Follows the CPU seconds PostgreSQL's processes use from now until stop(): /proc is read every
 * second, as a process that exits takes its count with it (the pool closes connections idle for
 * 10 s, and opens others), so such a process loses at most its last second.
 */
export function followPostgresCpu(): { stop(): number } {
  const first = postgresCpuSeconds();
  const last = new Map(first);
  /** Seconds of processes whose pid was taken again by a later one. */
  let ended = 0;
  const read = () => {
    for (const [pid, used] of postgresCpuSeconds()) {
      const before = last.get(pid);
      if (before !== undefined && used < before) {
        ended += before - (first.get(pid) ?? 0);
        first.delete(pid);
      }
      last.set(pid, used);
    }
  };
  const timer = setInterval(read, 1000);
  return {
    stop() {
      clearInterval(timer);
      read();
      let used = ended;
      for (const [pid, seconds] of last) used += seconds - (first.get(pid) ?? 0);
      return used;
    },
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** A fresh schema in the PostgreSQL server: the `DATABASE_URL` that uses it, and how to drop it. */
export async function freshSchema(prefix = 'bench'): Promise<{ databaseUrl: string; drop: () => Promise<void> }> {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return {
    databaseUrl: `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

/** `folio serve` on the engine (PostgreSQL: a fresh schema, dropped by cleanup), OCR off. */
export async function startServer(engine: string, env: Record<string, string> = {}): Promise<Served> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-bench-'));
  const schema = engine === 'postgres' ? await freshSchema() : null;
  const databaseUrl = schema?.databaseUrl ?? '';
  const dropSchema = schema?.drop ?? (async () => {});
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      FOLIO_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      FOLIO_API_KEYS: API_KEYS_ENV,
      FOLIO_RATE_LIMIT: '0',
      FOLIO_OCR: 'off',
      LOG_LEVEL: 'silent',
      OPENAI_API_KEY: '',
      OPENAI_BASE_URL: '',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 300; i++) {
    const ready = await fetch(`http://127.0.0.1:${port}/ready`).then((r) => r.ok, () => false);
    if (ready) {
      return {
        port,
        child,
        cleanup: async () => {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
          await rm(dataDir, { recursive: true, force: true });
          await dropSchema();
        },
      };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('server did not become ready');
}

/** /health every `everyMs` while `work` runs; the latencies. */
export async function probeHealth(port: number, work: () => Promise<void>, everyMs = 10): Promise<number[]> {
  const latencies: number[] = [];
  let done = false;
  const prober = (async () => {
    while (!done) {
      latencies.push((await send(port, 'GET', '/health', {})).ms);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  await work();
  done = true;
  await prober;
  return latencies;
}
