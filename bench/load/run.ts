// Search while ingesting, over real HTTP against a `folio serve` process:
// `npx tsx bench/load/run.ts [--engine pglite|postgres|both] [--pages N] [--seconds N] [--rounds N] [--searchers N]
//   [--ingesters N] [--uploaders N] [--server worktree|head] [--profile DIR]`.
// Reads files to upload from ../shared/corpus/docs. See README.md.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import type { Engine } from '../../src/store/engine.js';
import { cpuSeconds, freePort, freshSchema } from '../lib/serve.js';
import { buildTree, monotonicMicros, spawnServe } from '../lib/tree.js';
import { Corpus } from '../search/corpus.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CORPUS_DOCS = path.join(ROOT, '../shared/corpus/docs');
const KEY = 'bench';
const HEADERS = { 'x-api-key': KEY, 'content-type': 'application/json' };
// Ingesting alone writes to a workspace of its own (see phase()).
const SIDE_KEY = 'bench-side';

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    pages: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '60' }, // of each kind of phase, in all
    rounds: { type: 'string', default: '6' }, // the three kinds take turns, so the machine's drift touches each alike
    searchers: { type: 'string', default: '8' },
    ingesters: { type: 'string', default: '2' },
    uploaders: { type: 'string', default: '1' },
    server: { type: 'string', default: 'worktree' },
    profile: { type: 'string' }, // directory for the server's --cpu-prof output
  },
});
const pages = Number(args.pages);
const seconds = Number(args.seconds);
const rounds = Number(args.rounds);
const phaseSeconds = seconds / rounds;
const searchers = Number(args.searchers);
const ingesters = Number(args.ingesters);
const uploaders = Number(args.uploaders);
if (
  !['pglite', 'postgres', 'both'].includes(args.engine!) ||
  ![pages, seconds, searchers].every((n) => n > 0) ||
  !(Number.isInteger(rounds) && rounds >= 1) ||
  !(ingesters >= 0 && uploaders >= 0 && ingesters + uploaders > 0) ||
  !['worktree', 'head'].includes(args.server!)
) {
  console.error('usage: run.ts [--engine pglite|postgres|both] [--pages N] [--seconds N] [--rounds N] [--searchers N] [--ingesters N] [--uploaders N] [--server worktree|head] [--profile DIR]');
  process.exit(2);
}
const engines: Engine[] = args.engine === 'both' ? ['pglite', 'postgres'] : [args.engine as Engine];
const log = (message: string) => console.error(`[load] ${message}`);

// ---------------------------------------------------------------------------------------------
// HTTP

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

interface Answer {
  status: number;
  ms: number;
  text: string;
}

function send(port: number, method: string, url: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, text }));
    });
    req.on('error', (error) => resolve({ status: 0, ms: performance.now() - started, text: error.message }));
    req.end(body);
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

// ---------------------------------------------------------------------------------------------
// Work: the search benchmark's corpus (pages embedded by the offline embedder, as the server
// embeds query text), and real files to upload.

const corpus = new Corpus(42);

function pageBody(n: number): string {
  const page = corpus.page(n);
  return JSON.stringify({ embedding: Array.from(hashEmbed(page.content)), content: page.content, metadata: { bucket: page.bucket } });
}

interface UploadFile {
  name: string;
  bytes: Buffer;
}

function uploadFiles(): UploadFile[] {
  const files: UploadFile[] = [];
  for (const folder of ['html', 'docx', 'markdown', 'txt']) {
    const dir = path.join(CORPUS_DOCS, folder);
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      // A picture without text, which fails its task by design.
      if (name.isFile() && name.name !== 'mammoth-tiny-picture.docx') files.push({ name: name.name, bytes: readFileSync(path.join(dir, name.name)) });
    }
  }
  if (files.length === 0) throw new Error(`no files to upload under ${CORPUS_DOCS}`);
  return files;
}

function multipart(file: UploadFile): { body: Buffer; contentType: string } {
  const boundary = `bench${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head), file.bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

interface Tally {
  searchMs: number[];
  ingested: number;
  uploaded: number;
  errors: string[];
}

function newTally(): Tally {
  return { searchMs: [], ingested: 0, uploaded: 0, errors: [] };
}

function noteError(tally: Tally, what: string, answer: Answer): void {
  if (tally.errors.length < 5) tally.errors.push(`${what}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
  else tally.errors.push('');
}

async function searcher(port: number, id: number, until: number, tally: Tally): Promise<void> {
  for (let i = 0; performance.now() < until; i++) {
    const answer = await send(port, 'POST', '/api/v1/documents/search/pages', HEADERS, JSON.stringify({ query: corpus.query(id, i), alpha: 0.5, top_k: 10 }));
    if (answer.status === 200) tally.searchMs.push(answer.ms);
    else noteError(tally, 'search', answer);
  }
}

let nextPage = 0;

// The bodies sent while measuring are made beforehand, so that the client's CPU (embedding and
// serialising a page costs more than sending it) does not compete with the server's.
let ingestBodies: string[] = [];

async function ingester(port: number, key: string, until: number, tally: Tally): Promise<void> {
  const headers = { ...HEADERS, 'x-api-key': key };
  while (performance.now() < until) {
    const answer = await send(port, 'POST', '/api/v1/documents/ingest/embedding', headers, ingestBodies[nextPage++ % ingestBodies.length]);
    if (answer.status === 201) tally.ingested++;
    else noteError(tally, 'ingest', answer);
  }
}

/** Uploads a file and waits for its task to end, again and again. */
async function uploader(port: number, key: string, files: UploadFile[], until: number, tally: Tally): Promise<void> {
  const headers = { ...HEADERS, 'x-api-key': key };
  for (let i = 0; performance.now() < until; i++) {
    const file = files[i % files.length];
    const { body, contentType } = multipart(file);
    const answer = await send(port, 'POST', '/api/v1/documents/ingest', { 'x-api-key': key, 'content-type': contentType }, body);
    if (answer.status !== 201) {
      noteError(tally, `upload ${file.name}`, answer);
      continue;
    }
    const task = (JSON.parse(answer.text) as { data: { task_identifier: string } }).data.task_identifier;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const status = await send(port, 'GET', `/api/v1/tasks/status/${task}`, headers);
      const state = status.status === 200 ? (JSON.parse(status.text) as { data: { status: string } }).data.status : 'ERROR';
      if (state === 'COMPLETED') {
        tally.uploaded++;
        break;
      }
      if (state === 'FAILED' || state === 'ERROR') {
        noteError(tally, `task of ${file.name}`, status);
        break;
      }
    }
  }
}

// The /health prober runs on a thread of its own, with its own connection: on the load
// generator's thread its probes waited behind the searchers' and ingesters' answers being read,
// which the server's latency should not include.
const PROBER = `
const http = require('node:http');
const { parentPort, workerData: { port, ms } } = require('node:worker_threads');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const probe = () => new Promise((resolve) => {
  const started = performance.now();
  const req = http.request({ host: '127.0.0.1', port, path: '/health', agent }, (res) => {
    res.resume();
    res.on('end', () => resolve(performance.now() - started));
  });
  req.on('error', () => resolve(performance.now() - started));
  req.end();
});
(async () => {
  const latencies = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    latencies.push(await probe());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  agent.destroy();
  parentPort.postMessage(latencies);
})();
`;

function probeHealth(port: number, until: number, latencies: number[]): Promise<void> {
  const worker = new Worker(PROBER, { eval: true, workerData: { port, ms: until - performance.now() } });
  return new Promise((resolve, reject) => {
    worker.once('message', (measured: number[]) => {
      latencies.push(...measured);
      resolve();
    });
    worker.once('error', reject);
  });
}

/** What the phases of one kind measured, summed over the rounds. */
interface PhaseTotals {
  tally: Tally;
  health: number[];
  seconds: number;
  /** CPU seconds of the server process (all its threads), and of the whole machine. */
  serverCpu: number;
  machineCpu: number;
}

const TICKS = 100; // clock ticks per second in /proc (USER_HZ)

/** CPU seconds the machine's cores have been busy (all but idle and iowait). */
function machineCpu(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - ticks[3] - ticks[4]) / TICKS;
}

interface PhaseFigures {
  searchesPerS: number;
  p50: number;
  p99: number;
  ingestedPerS: number;
  uploadedPerS: number;
  healthP99: number;
  /** Cores busy on average: the server process's threads, and the whole machine's. */
  serverCores: number;
  machineCores: number;
  errors: string[];
}

/** One phase of `phaseSeconds`, its figures added to `totals`. */
async function phase(server: Running, files: UploadFile[], search: boolean, ingest: boolean, totals: PhaseTotals): Promise<void> {
  const { port } = server;
  const { tally, health } = totals;
  const [serverBefore, machineBefore] = [cpuSeconds(server.pid), machineCpu()];
  const started = performance.now();
  const until = started + phaseSeconds * 1000;
  const work: Promise<void>[] = [probeHealth(port, until, health)];
  if (search) for (let s = 0; s < searchers; s++) work.push(searcher(port, 1000 + s, until, tally));
  if (ingest) {
    // Alone, ingestion writes to another workspace: into the searched one, it would grow it by
    // half between the phase searching alone and the mixed one (at 450 pages/s), so that the
    // mixed phase's searches scanned more pages than their reference, and its first search
    // caught up with them all. Its cost is the same: no search reads that workspace.
    const key = search ? KEY : SIDE_KEY;
    for (let c = 0; c < ingesters; c++) work.push(ingester(port, key, until, tally));
    for (let u = 0; u < uploaders; u++) work.push(uploader(port, key, files, until, tally));
  }
  await Promise.all(work);
  // The profile's clock (CLOCK_MONOTONIC in microseconds), to read each phase's part of it.
  if (args.profile) log(`phase ${search ? (ingest ? 'both' : 'searching') : 'ingesting'} on the profile's clock: ${monotonicMicros(started)} to ${monotonicMicros(performance.now())}`);
  totals.seconds += (performance.now() - started) / 1000;
  totals.serverCpu += cpuSeconds(server.pid) - serverBefore;
  totals.machineCpu += machineCpu() - machineBefore;
}

function figures({ tally, health, seconds: elapsed, serverCpu, machineCpu: busy }: PhaseTotals): PhaseFigures {
  return {
    searchesPerS: tally.searchMs.length / elapsed,
    p50: percentile(tally.searchMs, 0.5),
    p99: percentile(tally.searchMs, 0.99),
    ingestedPerS: tally.ingested / elapsed,
    uploadedPerS: tally.uploaded / elapsed,
    healthP99: percentile(health, 0.99),
    serverCores: serverCpu / elapsed,
    machineCores: busy / elapsed,
    errors: tally.errors,
  };
}

// ---------------------------------------------------------------------------------------------
// The server

interface Running {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

async function startServer(engine: Engine, serve: { command: string; args: string[] }): Promise<Running> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-bench-load-'));
  const env: Record<string, string> = { FOLIO_API_KEYS: `${KEY}:${KEY}:write,${SIDE_KEY}:${SIDE_KEY}:write`, FOLIO_DATA_DIR: dataDir, FOLIO_OCR: 'off', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', DATABASE_URL: '' };
  const schema = engine === 'postgres' ? await freshSchema('bench_load') : null;
  if (schema) env.DATABASE_URL = schema.databaseUrl;
  const dropSchema = schema?.drop ?? (async () => {});
  const child = spawnServe(serve, port, env, args.profile ? path.resolve(args.profile) : null);
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stdout!.resume();
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
    await dropSchema();
  };
  for (let i = 0; i < 600; i++) {
    if ((await send(port, 'GET', '/ready', {})).status === 200) return { port, pid: child.pid!, stop };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`the server did not become ready:\n${output}`);
}

async function seed(port: number): Promise<void> {
  const started = performance.now();
  const tally = newTally();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (nextPage < pages) {
        const answer = await send(port, 'POST', '/api/v1/documents/ingest/embedding', HEADERS, pageBody(nextPage++));
        if (answer.status !== 201) throw new Error(`seeding: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
      }
    }),
  );
  ingestBodies = Array.from({ length: 512 }, (_, i) => pageBody(pages + i));
  log(`seeded ${pages} pages in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  // Warms the index and the query path.
  for (let i = 0; i < 50; i++) await searcher(port, 999, 0, tally);
  for (let i = 0; i < 50; i++) await send(port, 'POST', '/api/v1/documents/search/pages', HEADERS, JSON.stringify({ query: corpus.query(999, i), alpha: 0.5 }));
}

// ---------------------------------------------------------------------------------------------

const fmt = (n: number, digits = 1) => n.toFixed(digits);

const tree = await buildTree('folio-bench-load', args.server as 'worktree' | 'head');
if (tree.errors) console.error(`tsc reported errors (running what it emitted):\n${tree.errors.slice(0, 2000)}`);
const serve = { command: path.join(tree.root, 'bin/folio'), args: ['serve'] };
const files = uploadFiles();
const out: string[] = [];
out.push(`Search while ingesting: ${tree.label}; ${pages} pages seeded; each phase ${seconds} s in all, in ${rounds} turns; ${searchers} searchers at alpha 0.5 (query text, top_k 10);`);
out.push(`ingestion: ${ingesters} clients sending embeddings and ${uploaders} uploading files (${files.length} from ../shared/corpus/docs, each waited for).\n`);
out.push('| engine | phase | searches/s | search p50 ms | search p99 ms | embeddings/s | files/s | /health p99 ms | server cores | machine cores |');
out.push('|---|---|---|---|---|---|---|---|---|---|');
const verdicts: string[] = [];
let failed = false;

for (const engine of engines) {
  nextPage = 0;
  log(`${engine}: starting`);
  const server = await startServer(engine, serve);
  try {
    await seed(server.port);
    const totals = (): PhaseTotals => ({ tally: newTally(), health: [], seconds: 0, serverCpu: 0, machineCpu: 0 });
    const [alone, ingesting, both] = [totals(), totals(), totals()];
    for (let round = 1; round <= rounds; round++) {
      log(`${engine}: round ${round} of ${rounds}: searching alone, ingesting alone, both`);
      await phase(server, files, true, false, alone);
      await phase(server, files, false, true, ingesting);
      await phase(server, files, true, true, both);
    }
    const [idle, ingestOnly, mixed] = [figures(alone), figures(ingesting), figures(both)];
    const row = (name: string, f: PhaseFigures, search: boolean, ingest: boolean) =>
      `| ${engine} | ${name} | ${search ? fmt(f.searchesPerS, 0) : '-'} | ${search ? fmt(f.p50) : '-'} | ${search ? fmt(f.p99) : '-'} | ` +
      `${ingest ? fmt(f.ingestedPerS, 0) : '-'} | ${ingest ? fmt(f.uploadedPerS, 2) : '-'} | ${fmt(f.healthP99)} | ${fmt(f.serverCores, 2)} | ${fmt(f.machineCores, 2)} |`;
    out.push(row('searching alone', idle, true, false));
    out.push(row('ingesting alone', ingestOnly, false, true));
    out.push(row('both', mixed, true, true));
    const p50Ratio = mixed.p50 / idle.p50;
    const rateRatio = mixed.searchesPerS / idle.searchesPerS;
    verdicts.push(
      `${engine}: search p50 ${fmt(p50Ratio, 2)} x alone (aim <= 2), throughput ${fmt(rateRatio, 2)} x alone (aim >= 0.5), ` +
        `embeddings ${fmt(mixed.ingestedPerS / ingestOnly.ingestedPerS, 2)} x and files ${fmt(mixed.uploadedPerS / Math.max(ingestOnly.uploadedPerS, 1e-9), 2)} x ingesting alone, ` +
        `/health p99 ${fmt(mixed.healthP99)} ms (aim <= 20)`,
    );
    for (const f of [idle, ingestOnly, mixed]) {
      if (f.errors.length > 0) {
        failed = true;
        verdicts.push(`${engine}: ${f.errors.length} failed requests, e.g. ${f.errors.filter(Boolean).join(' | ')}`);
      }
    }
  } finally {
    await server.stop();
  }
}

agent.destroy();
console.log(`${out.join('\n')}\n\n${verdicts.join('\n')}`);
if (failed) process.exitCode = 1;
