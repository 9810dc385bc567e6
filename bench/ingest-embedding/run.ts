// Embedding-ingest benchmark over real HTTP:
// `npx tsx bench/ingest-embedding/run.ts [--engine pglite|postgres|both] [--seconds N] [--server worktree|head|tsx] [--profile DIR]`.
// See README.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql, type RawBuilder } from 'kysely';
import { EmbeddingIngester, type EmbeddingIngestInput } from '../../src/documents/ingest-embedding.js';
import { openStore, type Engine, type Store } from '../../src/store/engine.js';
import { ensureWorkspace } from '../../src/store/workspaces.js';
import { cpuSeconds } from '../lib/serve.js';
import { buildTree, spawnServe, type ServeCommand } from '../lib/tree.js';

const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const PATH = '/api/v1/documents/ingest/embedding';
const CONCURRENCY = [1, 8, 32];
const AIM: Record<Engine, number> = { postgres: 300, pglite: 100 };
/** Issue 12: the embedded engine with 8 concurrent clients. */
const AIM_PGLITE_8_CLIENTS = 2000;
const DIMS = 1536;

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    seconds: { type: 'string', default: '10' },
    server: { type: 'string', default: 'worktree' },
    profile: { type: 'string' }, // directory for the server's --cpu-prof output
  },
});
const seconds = Number(args.seconds);
if (!['pglite', 'postgres', 'both'].includes(args.engine!) || !(seconds > 0) || !['worktree', 'head', 'tsx'].includes(args.server!)) {
  console.error('usage: run.ts [--engine pglite|postgres|both] [--seconds N] [--server worktree|head|tsx] [--profile DIR]');
  process.exit(2);
}
const engines: Engine[] = args.engine === 'both' ? ['pglite', 'postgres'] : [args.engine as Engine];

// ---------------------------------------------------------------------------------------------
// Request bodies: random vectors and a few paragraphs of prose, pre-serialised in pools so that
// the client spends its CPU on HTTP rather than on JSON; external_id is unique per request.

const WORDS = (
  'the a report quarterly revenue customer contract service team project data system review ' +
  'policy market growth product release support network security update budget analysis risk ' +
  'delivery schedule invoice account region office manager engineer partner agreement storage ' +
  'performance quality request change meeting plan results increase decrease shows includes ' +
  'requires describes confirms expects improved delayed approved final annual new current our ' +
  'their with for from after before during under across within'
).split(' ');
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

function sentence(): string {
  const words = Array.from({ length: 8 + Math.floor(Math.random() * 12) }, () => pick(WORDS));
  if (Math.random() < 0.3) words.splice(4, 0, `${(Math.random() * 100).toFixed(1)}%,`);
  const text = words.join(' ');
  return text[0].toUpperCase() + text.slice(1) + pick(['.', '.', '.', '?', '!']);
}

function content(): string {
  const target = 1000 + Math.random() * 1000;
  const paragraphs: string[] = [];
  while (paragraphs.join('\n\n').length < target) {
    paragraphs.push(Array.from({ length: 3 + Math.floor(Math.random() * 3) }, sentence).join(' '));
  }
  return paragraphs.join('\n\n').slice(0, 2900);
}

const vectors = Array.from({ length: 128 }, () => JSON.stringify(Array.from({ length: DIMS }, () => Math.random() * 2 - 1)));
const contents = Array.from({ length: 128 }, () => JSON.stringify(content()));
let sequence = 0;

function body(): string {
  const n = sequence++;
  const metadata = { source: 'bench', category: pick(['finance', 'legal', 'ops']), year: 2015 + (n % 10), tags: ['a', 'b'] };
  const externalId = n % 2 === 0 ? `,"external_id":"bench-${n}"` : '';
  return `{"embedding":${pick(vectors)},"content":${pick(contents)},"metadata":${JSON.stringify(metadata)}${externalId}}`;
}

/** The same kind of bodies, parsed once, for the in-process reference (no HTTP, no JSON). */
const parsedBodies = Array.from({ length: 128 }, () => JSON.parse(body()) as EmbeddingIngestInput);

// ---------------------------------------------------------------------------------------------
// The server process, started the way users run it.

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Server {
  port: number;
  child: ChildProcess;
  output: () => string;
}

/** How `folio serve` starts: the built tree's bin/folio (the launcher's settings), or src/ through tsx. */
async function serveCommand(): Promise<ServeCommand & { label: string }> {
  if (args.server === 'tsx') return { command: process.execPath, args: ['--import', 'tsx', 'src/main.ts', 'serve'], label: "src/ through tsx (without bin/folio's settings)" };
  const tree = await buildTree('folio-bench-ingest', args.server as 'worktree' | 'head');
  if (tree.errors) console.error(`tsc reported errors (running what it emitted):\n${tree.errors.slice(0, 2000)}`);
  return { command: path.join(tree.root, 'bin/folio'), args: ['serve'], label: tree.label };
}

const serve = await serveCommand();

async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawnServe(serve, port, env, args.profile ? path.resolve(args.profile) : null);
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) break;
    const ok = await fetch(`http://127.0.0.1:${port}/ready`).then((r) => r.ok, () => false);
    if (ok) return { port, child, output: () => output };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become ready:\n${output}`);
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

// ---------------------------------------------------------------------------------------------
// Load: `clients` loops, each posting one request at a time over a keep-alive connection.

const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(...CONCURRENCY) });

function post(port: number, payload: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const request = http.request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: PATH,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-api-key': 'bench' },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        response.on('error', (e) => resolve({ status: 0, text: String(e) }));
      },
    );
    request.on('error', (e) => resolve({ status: 0, text: String(e) }));
    request.end(payload);
  });
}

interface Level {
  clients: number;
  requests: number;
  created: number;
  errors: number;
  firstError: string | null;
  seconds: number;
  latencies: number[];
  serverCpu: number; // seconds of server process CPU
  mainCpu: number; // of which its main thread's (HTTP, JSON, validation, segmentation)
  clientCpu: number; // seconds of this (load generator) process's CPU
  busy: number; // fraction of the machine's CPU time in use (all processes)
  /** The lowest and highest document id answered (the level's documents lie between: levels do not overlap). */
  ids: [number, number] | null;
  /** Documents per transaction that wrote them (distinct `txid`), read from the store after the run. */
  perTransaction: number;
}

// [busy, total] jiffies of the whole machine (Linux; zeros elsewhere).
function machineCpu(): [number, number] {
  try {
    const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    return [total - ticks[3] - (ticks[4] ?? 0), total];
  } catch {
    return [0, 0];
  }
}

// Share of the machine's CPU already in use by other processes, sampled over `ms`.
async function backgroundLoad(ms = 1000): Promise<number> {
  const [busy0, total0] = machineCpu();
  await new Promise((r) => setTimeout(r, ms));
  const [busy1, total1] = machineCpu();
  return total1 > total0 ? (busy1 - busy0) / (total1 - total0) : 0;
}

async function load(server: Server, clients: number, durationS: number): Promise<Level> {
  const level: Level = { clients, requests: 0, created: 0, errors: 0, firstError: null, seconds: 0, latencies: [], serverCpu: 0, mainCpu: 0, clientCpu: 0, busy: 0, ids: null, perTransaction: 0 };
  const pid = server.child.pid!;
  const cpu0 = cpuSeconds(pid);
  const main0 = cpuSeconds(pid, pid);
  const client0 = process.cpuUsage();
  const [busy0, total0] = machineCpu();
  const start = performance.now();
  const deadline = start + durationS * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const { status, text } = await post(server.port, body());
      level.latencies.push(performance.now() - t0);
      level.requests++;
      if (status === 201) {
        level.created++;
        const id = Number(/"document_id":(\d+)/.exec(text)?.[1]);
        level.ids = level.ids ? [Math.min(level.ids[0], id), Math.max(level.ids[1], id)] : [id, id];
      } else {
        level.errors++;
        level.firstError ??= `HTTP ${status}: ${text.slice(0, 500)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
  level.seconds = (performance.now() - start) / 1000;
  level.serverCpu = cpuSeconds(pid) - cpu0;
  level.mainCpu = cpuSeconds(pid, pid) - main0;
  const client = process.cpuUsage(client0);
  level.clientCpu = (client.user + client.system) / 1e6;
  const [busy1, total1] = machineCpu();
  level.busy = total1 > total0 ? (busy1 - busy0) / (total1 - total0) : 0;
  return level;
}

// ---------------------------------------------------------------------------------------------
// References measured in the same run, since this machine's speed drifts: what HTTP and
// JSON.parse of these bodies alone allow, and what Folio's ingester does without HTTP.

// Reads each body, parses it and answers as the ingest route does, storing nothing.
const FLOOR_SERVER = `require('node:http').createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString());
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end('{"data":{"task_identifier":"IngestEmbedding:00000000-0000-0000-0000-000000000000","file_path":"embedding/00000000-0000-0000-0000-000000000000","external_id":null,"document_id":1}}');
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));`;

async function httpFloor(clients: number): Promise<Level> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', FLOOR_SERVER], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the bare server exited with ${code}`)));
  });
  const server = { port, child, output: () => '' };
  try {
    await load(server, Math.max(...CONCURRENCY), 1);
    return await load(server, clients, seconds);
  } finally {
    await stopServer(server);
  }
}

/** Folio's ingester on `store` in this process, `inFlight` ingests outstanding, for `seconds`: documents/s. */
async function inProcess(store: Store, inFlight: number): Promise<number> {
  const workspaceId = await ensureWorkspace(store.db, 'bench-in-process');
  const ingester = EmbeddingIngester.forStore(store);
  let sent = 0;
  let created = 0;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      await ingester.ingest(workspaceId, parsedBodies[sent++ % parsedBodies.length]);
      created++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  return created / ((performance.now() - start) / 1000);
}

// ---------------------------------------------------------------------------------------------
// One engine: fresh store, server, warm-up, the levels, the durability check, then the
// in-process reference on the same store.

interface EngineResult {
  engine: Engine;
  levels: Level[];
  created: number;
  stored: number;
  background: number;
  /** Documents/s of the ingester in this process, by ingests in flight. */
  inProcess: Map<number, number>;
}

/** Documents of `table`. */
async function countIn(store: Store, table: RawBuilder<unknown>): Promise<number> {
  return Number((await sql<{ n: string }>`SELECT count(*) AS n FROM ${table}`.execute(store.db)).rows[0].n);
}

/** Documents of `table` with ids in [from, to], and how many transactions wrote them (each document's `txid`). */
async function writtenIn(store: Store, table: RawBuilder<unknown>, from: number, to: number): Promise<{ documents: number; transactions: number }> {
  const { rows } = await sql<{ documents: string; transactions: string }>`
    SELECT count(*) AS documents, count(DISTINCT txid) AS transactions FROM ${table} WHERE id BETWEEN ${from} AND ${to}
  `.execute(store.db);
  return { documents: Number(rows[0].documents), transactions: Number(rows[0].transactions) };
}

async function runEngine(engine: Engine): Promise<EngineResult> {
  let env: Record<string, string>;
  let openCheckStore: () => Promise<Store>;
  let openReferenceStore: () => Promise<Store>;
  let cleanup: () => Promise<void>;
  /** The documents table the server writes, as the check store names it. */
  let documents: RawBuilder<unknown>;

  if (engine === 'pglite') {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-bench-'));
    env = { FOLIO_DATA_DIR: dataDir, DATABASE_URL: '' };
    openCheckStore = () => openStore({ databaseUrl: null, dataDir });
    openReferenceStore = openCheckStore;
    documents = sql`documents`;
    cleanup = () => rm(dataDir, { recursive: true, force: true });
  } else {
    const schema = `bench_ingest_${randomBytes(4).toString('hex')}`;
    const admin = await openStore({ databaseUrl: POSTGRES_URL, dataDir: null, poolSize: 1 });
    await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(admin.db);
    // The server gets the schema through the URL (main.ts passes no `schema` to openStore).
    // pg lets the URL's `options` replace the pool's, so the statement timeout rides along.
    const options = encodeURIComponent(`-c statement_timeout=30000 -c search_path=${schema}`);
    env = { DATABASE_URL: `${POSTGRES_URL}?options=${options}` };
    openCheckStore = async () => admin;
    openReferenceStore = () => openStore({ databaseUrl: POSTGRES_URL, dataDir: null, schema });
    // Schema-qualified, so documents written anywhere else would show as missing here.
    documents = sql.id(schema, 'documents');
    cleanup = async () => {
      await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(admin.db);
      await admin.close();
    };
  }

  try {
    const background = await backgroundLoad();
    const server = await startServer(env);
    const levels: Level[] = [];
    let warmupCreated = 0;
    try {
      // Warm up at the highest concurrency so that every keep-alive connection is open before
      // measuring: on PGlite, connections opened while the server is saturated wait seconds.
      const warmup = await load(server, Math.max(...CONCURRENCY), 1);
      warmupCreated = warmup.created;
      if (warmup.firstError) console.error(`[${engine}] warm-up error: ${warmup.firstError}`);
      for (const clients of CONCURRENCY) {
        const level = await load(server, clients, seconds);
        levels.push(level);
        console.error(`[${engine}] ${clients} clients: ${(level.created / level.seconds).toFixed(0)} ingests/s`);
      }
    } finally {
      await stopServer(server); // releases the data dir lock so that the store can be opened here
    }
    const created = warmupCreated + levels.reduce((n, l) => n + l.created, 0);
    const checkStore = await openCheckStore();
    let stored: number;
    try {
      stored = await countIn(checkStore, documents);
      for (const level of levels) {
        if (!level.ids) continue;
        const written = await writtenIn(checkStore, documents, ...level.ids);
        level.perTransaction = written.transactions > 0 ? written.documents / written.transactions : 0;
      }
    } finally {
      if (checkStore.engine === 'pglite') await checkStore.close();
    }
    const inProcessRates = new Map<number, number>();
    const store = await openReferenceStore();
    try {
      for (const inFlight of [8, 32]) inProcessRates.set(inFlight, await inProcess(store, inFlight));
    } finally {
      await store.close();
    }
    console.error(`[${engine}] in process: ${[...inProcessRates].map(([n, rate]) => `${rate.toFixed(0)}/s with ${n} in flight`).join(', ')}`);
    return { engine, levels, created, stored, background, inProcess: inProcessRates };
  } finally {
    await cleanup();
  }
}

// ---------------------------------------------------------------------------------------------

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function report(results: EngineResult[], floor: Level): void {
  const header = ['engine', 'clients', 'requests', 'ingests/s', 'aim/s', 'p50 ms', 'p99 ms', 'errors', 'server cpu ms/req', 'main thread', 'client cpu ms/req', 'machine cpu busy', 'docs/transaction'];
  const rows = results.flatMap(({ engine, levels }) =>
    levels.map((l) => {
      const sorted = [...l.latencies].sort((a, b) => a - b);
      const rate = l.created / l.seconds;
      return [
        engine,
        String(l.clients),
        String(l.requests),
        rate.toFixed(0),
        `>=${AIM[engine]} ${rate >= AIM[engine] ? 'met' : 'MISSED'}`,
        percentile(sorted, 0.5).toFixed(1),
        percentile(sorted, 0.99).toFixed(1),
        String(l.errors),
        l.serverCpu > 0 ? ((1000 * l.serverCpu) / l.requests).toFixed(2) : '-',
        l.mainCpu > 0 ? ((1000 * l.mainCpu) / l.requests).toFixed(2) : '-',
        ((1000 * l.clientCpu) / l.requests).toFixed(2),
        l.busy > 0 ? `${(100 * l.busy).toFixed(0)}%` : '-',
        l.perTransaction > 0 ? l.perTransaction.toFixed(1) : '-',
      ];
    }),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(`\nPOST ${PATH}, ${seconds}s per level, 1536-dim vectors, ~1-2 KB content; server: ${serve.label}\n`);
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  rows.forEach((r) => console.log(line(r)));
  console.log();
  console.log(`Reference, same run: a bare node:http server that parses each body and stores nothing, 8 clients: ${(floor.requests / floor.seconds).toFixed(0)} requests/s (its cpu ${((1000 * floor.serverCpu) / floor.requests).toFixed(2)} ms/req)`);
  for (const r of results) {
    const best = Math.max(...r.levels.map((l) => l.created / l.seconds));
    console.log(`${r.engine}: best ${best.toFixed(0)} ingests/s, aim >= ${AIM[r.engine]}/s: ${best >= AIM[r.engine] ? 'met' : 'MISSED'}`);
    const eight = r.levels.find((l) => l.clients === 8);
    if (r.engine === 'pglite' && eight) {
      const rate = eight.created / eight.seconds;
      console.log(`  issue 12, 8 clients >= ${AIM_PGLITE_8_CLIENTS}/s: ${rate.toFixed(0)}/s, ${rate >= AIM_PGLITE_8_CLIENTS ? 'met' : 'MISSED'}`);
    }
    const inProcess = [...r.inProcess].map(([n, rate]) => `${rate.toFixed(0)}/s with ${n} in flight`).join(', ');
    const over = eight && r.inProcess.get(8) ? ` (over HTTP with 8 clients: ${((100 * eight.created) / eight.seconds / r.inProcess.get(8)!).toFixed(0)}% of it)` : '';
    console.log(`  reference, the same ingester in this process without HTTP or JSON, after the run: ${inProcess}${over}`);
    console.log(`  CPU already busy before the run (other processes): ${(100 * r.background).toFixed(0)}% of ${availableParallelism()} cores`);
    for (const l of r.levels) if (l.firstError) console.log(`  first error at ${l.clients} clients: ${l.firstError}`);
    const ok = r.stored === r.created;
    console.log(`  stored documents ${r.stored}, 201 responses ${r.created}: ${ok ? 'match' : 'MISMATCH'}`);
    if (!ok) process.exitCode = 1;
    if (r.levels.some((l) => l.errors > 0)) process.exitCode = 1;
  }
}

const floor = await httpFloor(8);
console.error(`[reference] bare node:http: ${(floor.requests / floor.seconds).toFixed(0)} requests/s with 8 clients`);
const results: EngineResult[] = [];
for (const engine of engines) results.push(await runEngine(engine));
agent.destroy();
report(results, floor);
