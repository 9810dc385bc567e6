// Search and bulk ingestion at scale: `npx tsx bench/scale/run.ts [--engine pglite|postgres|both]
//   [--sizes 100000,300000,1000000] [--sets clustered,isotropic] [--queries 1000] [--timed 200]
//   [--clients 4] [--batch 500] [--server worktree|head] [--seed N] [--profile DIR] [--keep]`. See README.md.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cpuSeconds, followPostgresCpu, freePort, freshSchema, percentile, POSTGRES_URL, residentMb } from '../lib/serve.js';
import { buildTree, monotonicMicros, spawnServe, untilReady, type ServeCommand } from '../lib/tree.js';
import { Corpus } from '../search/corpus.js';
import { CATEGORIES, searchModes } from './modes.js';
import { serverEnv, startQueryEmbedder } from './query-embedder.js';
import { SET_KINDS, VectorSet, type SetKind } from './vectors.js';

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    sizes: { type: 'string', default: '100000,300000,1000000' },
    sets: { type: 'string', default: SET_KINDS.join(',') },
    queries: { type: 'string', default: '1000' }, // recall queries per size
    timed: { type: 'string', default: '200' }, // timed queries per mode and size
    clients: { type: 'string', default: '4' },
    batch: { type: 'string', default: '500' },
    server: { type: 'string', default: 'worktree' },
    seed: { type: 'string', default: '42' },
    profile: { type: 'string' }, // the server's CPU profiles (every thread's) go here
    keep: { type: 'boolean', default: false }, // keep each store for searches.ts
  },
});
const engines = args.engine === 'both' ? ['pglite', 'postgres'] : [args.engine!];
const sizes = args.sizes!.split(',').map(Number);
const sets = args.sets!.split(',') as SetKind[];
const [recallQueries, timedQueries, clients, batchSize, seed] = [args.queries, args.timed, args.clients, args.batch, args.seed].map(Number);
if (
  engines.some((e) => !['pglite', 'postgres'].includes(e)) ||
  sizes.some((s, i) => !Number.isInteger(s) || s < 1000 || (i > 0 && s <= sizes[i - 1])) ||
  sets.some((s) => !SET_KINDS.includes(s)) ||
  ![recallQueries, timedQueries, clients, batchSize].every((n) => Number.isInteger(n) && n >= 1) ||
  batchSize > 1000 ||
  !['worktree', 'head'].includes(args.server!)
) {
  throw new Error('usage: run.ts [--engine pglite|postgres|both] [--sizes increasing, >= 1000] [--sets clustered,isotropic] [--queries N] [--timed N] [--clients N] [--batch N<=1000] [--server worktree|head] [--seed N] [--profile DIR] [--keep]');
}

const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'bench' };
const BASE = (port: number) => `http://127.0.0.1:${port}/api/v1`;
const log = (message: string) => console.error(`[scale] ${message}`);
const corpus = new Corpus(seed);
/** The set being measured; the query embedder embeds the hybrid searches' texts as its queries. */
let measured: VectorSet | null = null;
const embedder = await startQueryEmbedder(() => measured!);

// ---------------------------------------------------------------------------------------------
// The server, on a store that outlives its restarts

interface Store {
  env: Record<string, string>;
  dataDir: string;
  schema: string | null;
  drop(): Promise<void>;
}

async function newStore(engine: string): Promise<Store> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-bench-scale-'));
  const fresh = engine === 'postgres' ? await freshSchema('bench_scale') : null;
  const schema = fresh ? decodeURIComponent(fresh.databaseUrl).match(/search_path=(\w+)/)![1] : null;
  return {
    env: serverEnv(dataDir, fresh?.databaseUrl ?? '', embedder),
    dataDir,
    schema,
    drop: async () => {
      await rm(dataDir, { recursive: true, force: true });
      await fresh?.drop();
    },
  };
}

interface Running {
  port: number;
  child: ChildProcess;
  /** SIGTERM (a clean stop), or SIGKILL (a crash), and the process's exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

async function start(serve: ServeCommand, store: Store): Promise<Running> {
  const port = await freePort();
  const child = spawnServe(serve, port, store.env, args.profile ? path.resolve(args.profile) : null);
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stdout!.resume();
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  };
  if (await untilReady(port, child)) return { port, child, stop };
  await stop();
  throw new Error(`the server did not become ready:\n${output}`);
}

async function post<T>(port: number, route: string, body: string): Promise<T> {
  const response = await fetch(`${BASE(port)}${route}`, { method: 'POST', headers: HEADERS, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`${route}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { data: T }).data;
}

// ---------------------------------------------------------------------------------------------
// Ingestion, search, recall

function documentJson(vectors: VectorSet, n: number): string {
  return `{"content":${JSON.stringify(corpus.page(n).content)},"embedding":${vectors.documentJson(n)},"metadata":{"category":${n % CATEGORIES}},"external_id":"d${n}"}`;
}

interface Ingestion {
  /** Documents a second. */
  rate: number;
  /** CPU milliseconds a document: the service's process (all its threads; on PGlite, the database's too), the PostgreSQL server's processes, and this process (the load generator). */
  serviceMs: number;
  databaseMs: number | null;
  generatorMs: number;
}

/** Ingests documents [from, to) in batches from `clients` clients at once, and what it cost the cores. */
async function ingest(server: Running, engine: string, vectors: VectorSet, from: number, to: number): Promise<Ingestion> {
  const port = server.port;
  const pid = server.child.pid!;
  const [service, database, generator] = [cpuSeconds(pid), engine === 'postgres' ? followPostgresCpu() : null, process.cpuUsage()];
  let next = from;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < to) {
        const first = next;
        next = Math.min(to, next + batchSize);
        const items: string[] = [];
        for (let n = first; n < next; n++) items.push(documentJson(vectors, n));
        const answer = await post<{ created: number; failed: number }>(port, '/documents/ingest/embedding/batch', `{"documents":[${items.join(',')}]}`);
        if (answer.failed > 0) throw new Error(`${answer.failed} documents of a batch failed`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const perDocument = (cpu: number) => (1000 * cpu) / (to - from);
  const databaseCpu = database ? database.stop() : null;
  const generatorUsed = process.cpuUsage(generator);
  return {
    rate: (to - from) / seconds,
    serviceMs: perDocument(cpuSeconds(pid) - service),
    databaseMs: databaseCpu === null ? null : perDocument(databaseCpu),
    generatorMs: perDocument((generatorUsed.user + generatorUsed.system) / 1e6),
  };
}

interface Result {
  id: number;
  semantic_score: number;
}

const MODES = searchModes(corpus);

async function search(port: number, body: string, exact: boolean, topK = 10): Promise<{ ms: number; results: Result[] }> {
  const started = performance.now();
  const data = await post<{ results: Result[] }>(port, '/documents/search/pages', `${body},"top_k":${topK},"exact":${exact}}`);
  return { ms: performance.now() - started, results: data.results };
}

interface Timing {
  p50: number;
  p99: number;
  exactP50: number;
  exactP99: number;
}

/**
 * Each mode's latency: every mode's default searches, mode after mode, then the same queries with
 * `exact: true`. At a million pages an exact search reads the whole vector file (6 GB), and a
 * default search right after one ran 5-10 ms slower on this machine than after another default
 * search (README.md): sent in turn, or before the next mode's, the exact searches would be timed
 * into the defaults'.
 */
async function timeModes(port: number, vectors: VectorSet): Promise<Timing[]> {
  const fast = MODES.map(() => [] as number[]);
  const exact = MODES.map(() => [] as number[]);
  for (const [m, mode] of MODES.entries()) {
    for (let i = 0; i < 10; i++) await search(port, mode.body(vectors, 10_000 + i), false);
    const started = performance.now();
    for (let i = 0; i < timedQueries; i++) fast[m].push((await search(port, mode.body(vectors, i), false)).ms);
    // The profile's clock (CLOCK_MONOTONIC in microseconds), to read each mode's part of it.
    if (args.profile) log(`${mode.name} on the profile's clock: ${monotonicMicros(started)} to ${monotonicMicros(performance.now())}`);
  }
  for (const [m, mode] of MODES.entries()) {
    for (let i = 0; i < timedQueries; i++) exact[m].push((await search(port, mode.body(vectors, i), true)).ms);
  }
  return MODES.map((_, m) => ({ p50: percentile(fast[m], 50), p99: percentile(fast[m], 99), exactP50: percentile(exact[m], 50), exactP99: percentile(exact[m], 99) }));
}

interface Recall {
  at10: number;
  at100: number;
  /** Results whose semantic_score differs from the exact scan's (same page, other score). */
  scoreDiffers: number;
}

/** Recall@10 and @100 of the default search against `exact: true`, alpha 1, over `recallQueries` queries. */
async function measureRecall(port: number, vectors: VectorSet): Promise<Recall> {
  let hits10 = 0;
  let hits100 = 0;
  let scoreDiffers = 0;
  for (let i = 0; i < recallQueries; i++) {
    const body = MODES[0].body(vectors, 20_000 + i);
    const [fast, exact] = [(await search(port, body, false, 100)).results, (await search(port, body, true, 100)).results];
    const exactScore = new Map(exact.map((r) => [r.id, r.semantic_score]));
    const top10 = new Set(exact.slice(0, 10).map((r) => r.id));
    hits10 += fast.slice(0, 10).filter((r) => top10.has(r.id)).length;
    hits100 += fast.filter((r) => exactScore.has(r.id)).length;
    scoreDiffers += fast.filter((r) => exactScore.has(r.id) && exactScore.get(r.id) !== r.semantic_score).length;
  }
  return { at10: hits10 / (10 * recallQueries), at100: hits100 / (100 * recallQueries), scoreDiffers };
}

async function databaseMb(store: Store): Promise<number> {
  if (!store.schema) return Number(execFileSync('du', ['-sb', path.join(store.dataDir, 'pgdata')], { encoding: 'utf8' }).split('\t')[0]) / 2 ** 20;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string }>(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`,
      [store.schema],
    );
    return Number(rows[0].bytes) / 2 ** 20;
  } finally {
    await client.end();
  }
}

/** From a restart to the first search's answer: the server started on the store, then asked until it answers. */
/** How long a search that loads the index may take in all: a full load of a million pages takes minutes. */
const LOAD_LIMIT_MS = 30 * 60_000;

/**
 * A search that may wait for the workspace's index to load. fetch gives up on an answer whose
 * headers take 300 s (undici's limit): the search is then sent again, the load going on in the
 * server. Its time is from `started`.
 */
async function loadingSearch(port: number, vectors: VectorSet, started = performance.now()): Promise<number> {
  for (;;) {
    try {
      await search(port, MODES[0].body(vectors, 0), false);
      return performance.now() - started;
    } catch (error) {
      const code = ((error as Error).cause as { code?: string } | undefined)?.code;
      if (code !== 'UND_ERR_HEADERS_TIMEOUT' || performance.now() - started > LOAD_LIMIT_MS) throw error;
      log(`a search waiting for the index to load has not answered in ${fmt((performance.now() - started) / 1000, 0)} s; asking again`);
    }
  }
}

/** Starts the server again on the store and times its first search; a server that fails is stopped before the error goes up. */
async function restart(serve: ServeCommand, store: Store, vectors: VectorSet): Promise<{ server: Running; seconds: number }> {
  const started = performance.now();
  const server = await start(serve, store);
  try {
    await loadingSearch(server.port, vectors, started);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { server, seconds: (performance.now() - started) / 1000 };
}

// ---------------------------------------------------------------------------------------------

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
/** Service / database / load generator, or service (the database inside it) / load generator on PGlite. */
const cpuCell = (i: Ingestion) => [i.serviceMs, i.databaseMs, i.generatorMs].filter((ms) => ms !== null).map((ms) => fmt(ms, 2)).join(' / ');
const tree = await buildTree('folio-bench-scale', args.server as 'worktree' | 'head');
if (tree.errors) console.error(`tsc reported errors (running what it emitted):\n${tree.errors.slice(0, 2000)}`);
const serve: ServeCommand = { command: path.join(tree.root, 'bin/folio'), args: ['serve'] };
const out: string[] = [
  `Scale: ${tree.label}; one-page documents of ${1536} dimensions through the batch endpoint (${clients} clients, ${batchSize} a batch);`,
  `${timedQueries} timed queries per mode (p50/p99 ms, then the same queries with exact: true, the full float scan); recall of the default against exact over ${recallQueries} queries at alpha 1.\n`,
  '| engine | set | pages | ingest docs/s | CPU ms a doc | first search after ingest s | alpha 1 | exact | alpha 0 | alpha 0.5 | exact | filtered 10% | exact | recall@10 | recall@100 | scores off | RSS MB (peak) | stop s | restart to first search s | after SIGKILL s | database MB |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
];

for (const engine of engines) {
  for (const kind of sets) {
    const vectors = new VectorSet(kind, seed);
    measured = vectors;
    const store = await newStore(engine);
    let server = await start(serve, store);
    try {
      let held = 0;
      for (const size of sizes) {
        log(`${engine} ${kind}: ingesting to ${size} pages`);
        const ingestion = await ingest(server, engine, vectors, held, size);
        held = size;
        // A server that has served searches holds the workspace's index, which its stop keeps as a snapshot.
        const warmMs = await loadingSearch(server.port, vectors);
        log(`${engine} ${kind}: ${fmt(ingestion.rate, 0)} documents/s; a search first (${fmt(warmMs / 1000)} s); stopping`);
        const stopping = performance.now();
        await server.stop();
        const stopSeconds = (performance.now() - stopping) / 1000;
        const restarted = await restart(serve, store, vectors);
        server = restarted.server;
        log(`${engine} ${kind}: stopped in ${fmt(stopSeconds)} s; first search ${fmt(restarted.seconds)} s after the restart; timing`);
        const timings = await timeModes(server.port, vectors);
        if (args.profile) {
          // A killed process writes no profile: the one that answered the timed queries stops cleanly.
          await server.stop();
          server = (await restart(serve, store, vectors)).server;
        }
        log(`${engine} ${kind}: recall`);
        const recall = await measureRecall(server.port, vectors);
        const pid = server.child.pid!;
        const [rss, peak] = [residentMb(pid, 'VmRSS'), residentMb(pid, 'VmHWM')];
        // A crash: the next start reads the snapshot the killed process had read, and catches up.
        await server.stop('SIGKILL');
        const recovered = await restart(serve, store, vectors);
        server = recovered.server;
        log(`${engine} ${kind}: first search ${fmt(recovered.seconds)} s after a restart from SIGKILL`);
        const cell = (t: Timing) => `${fmt(t.p50)} / ${fmt(t.p99)}`;
        const exactCell = (t: Timing) => `${fmt(t.exactP50)} / ${fmt(t.exactP99)}`;
        out.push(
          `| ${engine} | ${kind} | ${size.toLocaleString('en')} | ${fmt(ingestion.rate, 0)} | ${cpuCell(ingestion)} | ${fmt(warmMs / 1000)} | ${cell(timings[0])} | ${exactCell(timings[0])} | ${cell(timings[1])} | ` +
            `${cell(timings[2])} | ${exactCell(timings[2])} | ${cell(timings[3])} | ${exactCell(timings[3])} | ${fmt(recall.at10, 4)} | ${fmt(recall.at100, 4)} | ` +
            `${recall.scoreDiffers} | ${fmt(rss, 0)} (${fmt(peak, 0)}) | ${fmt(stopSeconds)} | ${fmt(restarted.seconds)} | ${fmt(recovered.seconds)} | ${fmt(await databaseMb(store), 0)} |`,
        );
        console.error(out[out.length - 1]);
      }
    } finally {
      await server.stop();
      if (!args.keep) await store.drop();
      else log(`kept the store for searches.ts: --data-dir ${store.dataDir}${store.schema ? ` --database-url '${store.env.DATABASE_URL}' (remove the directory and schema ${store.schema} when done)` : ' (remove it when done)'}`);
    }
  }
}

await embedder.close();
console.log(out.join('\n'));
