// File-ingest benchmark: raw PDF text extraction against the whole pipeline over real HTTP,
// and search latency while documents are being ingested.
// `npx tsx bench/ingest/run.ts [--engine pglite|postgres|both] [--queries N] [--profile DIR]`.
// See README.md.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { parseDocument } from '../../src/sources/parsers/index.js';
import { segmentPage } from '../../src/text/segmentation.js';
import { HASHING_V2_MODEL, createHashingV2EmbeddingProvider, lexemeEmbed } from '../../src/providers/embeddings/index.js';
import { insertDocument, insertPages, type NewPage } from '../../src/store/documents.js';
import { migrateToLatest, openStore, type Engine, type Store } from '../../src/store/engine.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CORPUS = path.resolve(import.meta.dirname, '../../test/fixtures/corpus/docs/pdf/text');
const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const KEY = 'bench';
/** Aims from the issue: pipeline >= 80% of raw extraction; p99 under ingestion <= 2x idle. */
const AIM_RATIO = 0.8;
const AIM_P99 = 2;
/** Characters of a page the pipeline embeds, and pages per embedding call (pipeline.ts). */
const EMBED_CHARS = 8000;
const EMBED_BATCH = 32;
const POLL_MS = 50;

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'pglite' },
    queries: { type: 'string', default: '500' },
    passes: { type: 'string', default: '3' },
    profile: { type: 'string' }, // directory for the server's --cpu-prof output
    'parser-threads': { type: 'string' }, // FOLIO_PARSER_THREADS for the server (default: its own)
    'worker-concurrency': { type: 'string' }, // FOLIO_WORKER_CONCURRENCY for the server
    ocr: { type: 'boolean', default: false }, // leave OCR as the server configures it (default: FOLIO_OCR=off)
  },
});
const queryCount = Number(args.queries);
const passes = Number(args.passes);
if (!['pglite', 'postgres', 'both'].includes(args.engine!) || !(queryCount > 0) || !(passes > 0)) {
  console.error(
    'usage: run.ts [--engine pglite|postgres|both] [--queries N] [--passes N] [--profile DIR] [--parser-threads N] [--worker-concurrency N] [--ocr]',
  );
  process.exit(2);
}
const engines: Engine[] = args.engine === 'both' ? ['pglite', 'postgres'] : [args.engine as Engine];
// Text PDFs, compared with text extraction: OCR (which reads image-covered pages too) is off
// unless --ocr.
const serverEnv: Record<string, string> = args.ocr ? {} : { FOLIO_OCR: 'off' };
if (args['parser-threads']) serverEnv.FOLIO_PARSER_THREADS = args['parser-threads'];
if (args['worker-concurrency']) serverEnv.FOLIO_WORKER_CONCURRENCY = args['worker-concurrency'];

interface CorpusFile {
  name: string;
  bytes: Buffer;
  pages: number;
}

const files: CorpusFile[] = readdirSync(CORPUS)
  .filter((f) => f.toLowerCase().endsWith('.pdf'))
  .sort()
  .map((name) => ({ name, bytes: readFileSync(path.join(CORPUS, name)), pages: 0 }));
if (files.length === 0) throw new Error(`no PDFs in ${CORPUS}`);

// Queries about the corpus (Free Culture, Bitcoin, TraceMonkey, a tax form, tables...).
const QUERIES = [
  'copyright law and free culture',
  'peer-to-peer electronic cash double spending',
  'trace-based just-in-time compilation of loops',
  'income tax return filing status',
  'table with rows and columns',
  'geology topography map',
  'technology acceptance model review',
  'proof of work timestamp server',
  'Wikipedia encyclopedia article',
  'creative commons licence remix',
  'type specialization in dynamic languages',
  'the crazy ones misfits rebels',
];

// ---------------------------------------------------------------------------------------------
// Part 1, in this process, single thread: pdfjs alone, then each stage of the pipeline.

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
const pdfjs: PdfJs = await import('pdfjs-dist/legacy/build/pdf.mjs');
const pdfRoot = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));

/** getDocument + getPage + getTextContent for every page, with the options parsePdf uses. */
async function extractRaw(bytes: Buffer): Promise<{ pages: number; chars: number }> {
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes), // a copy: pdfjs detaches its buffer
    standardFontDataUrl: path.join(pdfRoot, 'standard_fonts') + path.sep,
    cMapUrl: path.join(pdfRoot, 'cmaps') + path.sep,
    wasmUrl: path.join(pdfRoot, 'wasm') + path.sep,
    cMapPacked: true,
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    useWorkerFetch: false,
    enableXfa: false,
    stopAtErrors: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  const doc = await task.promise;
  try {
    let chars = 0;
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      for (const item of content.items) if ('str' in item) chars += item.str.length;
      page.cleanup();
    }
    return { pages: doc.numPages, chars };
  } finally {
    await doc.destroy();
  }
}

interface Stage {
  name: string;
  sync: boolean; // one synchronous block per pass: no event-loop block figure
  pages: number;
  ms: number[]; // wall time of each measured pass
  cpuMs: number[]; // this process's CPU time of each measured pass
  stallMs: number; // the longest the event loop was blocked during the measured passes
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A cold pass, then `passes` warm ones. */
async function measureStage(name: string, pages: number, pass: () => Promise<void> | void, sync = false): Promise<Stage> {
  await pass();
  const stage: Stage = { name, sync, pages, ms: [], cpuMs: [], stallMs: 0 };
  // A probe timer every millisecond: the longest gap between its ticks is the longest time
  // the event loop could not run anything else (a request, a timer).
  let lastTick = performance.now();
  const probe = setInterval(() => {
    const now = performance.now();
    stage.stallMs = Math.max(stage.stallMs, now - lastTick);
    lastTick = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 10));
  stage.stallMs = 0;
  for (let i = 0; i < passes; i++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await pass();
    stage.ms.push(performance.now() - t0);
    const cpu = process.cpuUsage(cpu0);
    stage.cpuMs.push((cpu.user + cpu.system) / 1000);
    await new Promise((r) => setTimeout(r, 10)); // the probe sees the end of a block
  }
  clearInterval(probe);
  return stage;
}

/** Each file's pages as the pipeline stores them: text, paragraphs and sentences, embedding. */
let parsedDocs: NewPage[][] = [];

async function measureStages(): Promise<Stage[]> {
  // The page counts come from the cold pass of pdfjs itself.
  for (const f of files) f.pages = (await extractRaw(f.bytes)).pages;
  const totalPages = files.reduce((n, f) => n + f.pages, 0);
  const raw = await measureStage('pdfjs getTextContent (raw)', totalPages, async () => {
    for (const f of files) await extractRaw(f.bytes);
  });
  let docs: string[][] = [];
  const parse = await measureStage('parsePdf (pdfjs + layout)', totalPages, async () => {
    docs = [];
    for (const f of files) docs.push((await parseDocument(f.bytes, 'pdf')).pages);
  });
  const texts = docs.flat();
  const segment = await measureStage(
    'segmentPage',
    texts.length,
    () => {
      for (const t of texts) segmentPage(t);
    },
    true,
  );
  const embed = await measureStage(
    'lexemeEmbed (offline v2)',
    texts.length,
    () => {
      for (const t of texts) lexemeEmbed(t.slice(0, EMBED_CHARS));
    },
    true,
  );
  // What a worker task does on the event loop between parse and commit, as pipeline.ts does
  // it: segment every page, then embed in awaited batches.
  const embedder = createHashingV2EmbeddingProvider();
  const mainThread = await measureStage('segment + embed per doc (as pipeline.ts)', texts.length, async () => {
    for (const pages of docs) {
      pages.map((text) => segmentPage(text));
      for (let i = 0; i < pages.length; i += EMBED_BATCH) {
        await embedder.embed(pages.slice(i, i + EMBED_BATCH).map((p) => p.slice(0, EMBED_CHARS)));
      }
    }
  });
  parsedDocs = docs.map((pages) =>
    pages.map((content, i) => {
      const embedding = lexemeEmbed(content.slice(0, EMBED_CHARS));
      const nonZero = embedding.some((x) => x !== 0);
      return {
        pageNumber: i + 1,
        content,
        embedding: nonZero ? embedding : null,
        embeddingModel: nonZero ? HASHING_V2_MODEL : null,
        paragraphs: segmentPage(content),
      };
    }),
  );
  return [raw, parse, segment, embed, mainThread];
}

/**
 * The pipeline's write, in this process: one transaction per document inserting the document,
 * its pages (full-text vector computed by the database), paragraphs and sentences. On PGlite
 * the database runs on this thread, so cpu ms/page is the whole cost; on PostgreSQL it is
 * the client's share only.
 */
async function measureStore(engine: Engine): Promise<Stage> {
  let store: Store;
  let schema: string | undefined;
  let cleanup: () => Promise<void>;
  if (engine === 'pglite') {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-bench-store-'));
    store = await openStore({ databaseUrl: null, dataDir });
    cleanup = async () => {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    };
  } else {
    const name = `bench_ingest_store_${randomBytes(4).toString('hex')}`;
    schema = name;
    const admin = await openStore({ databaseUrl: POSTGRES_URL, dataDir: null, poolSize: 1 });
    await sql`CREATE SCHEMA ${sql.id(name)}`.execute(admin.db);
    await admin.close();
    store = await openStore({ databaseUrl: POSTGRES_URL, dataDir: null, poolSize: 2, schema: name });
    cleanup = async () => {
      await sql`DROP SCHEMA ${sql.id(name)} CASCADE`.execute(store.db);
      await store.close();
    };
  }
  try {
    await migrateToLatest(store.db, schema);
    const { id: workspaceId } = await store.db.insertInto('workspaces').values({ name: 'bench' }).returning('id').executeTakeFirstOrThrow();
    const pages = parsedDocs.reduce((n, d) => n + d.length, 0);
    return await measureStage(`store: insertPages (${engine})`, pages, async () => {
      for (const [i, doc] of parsedDocs.entries()) {
        await store.db.transaction().execute(async (trx) => {
          const row = await insertDocument(trx, {
            workspaceId,
            externalId: null,
            filePath: files[i].name,
            fileUrl: null,
            metadata: {},
            source: 'file',
            taskIdentifier: null,
          });
          await insertPages(trx, workspaceId, row.id, doc);
        });
      }
    });
  } finally {
    await cleanup();
  }
}

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

let running: ChildProcess | null = null;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    running?.kill('SIGKILL'); // temporary data dirs and schemas of this run stay behind
    process.exit(130);
  });
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const nodeArgs = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args.profile)}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...serverEnv,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      FOLIO_API_KEYS: `${KEY}:bench:write`,
      FOLIO_RATE_LIMIT: '0',
      LOG_LEVEL: 'warn',
      OPENAI_API_KEY: '', // the offline hashing embedder
      OPENAI_BASE_URL: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running = child;
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
// HTTP: one keep-alive agent for search and task polling; uploads are multipart.

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function request(port: number, method: string, urlPath: string, body?: Buffer, contentType?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { 'x-api-key': KEY };
    if (body) {
      headers['content-type'] = contentType ?? 'application/json';
      headers['content-length'] = body.length;
    }
    const req = http.request({ agent, host: '127.0.0.1', port, method, path: urlPath, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      response.on('error', (e) => resolve({ status: 0, text: String(e) }));
    });
    req.on('error', (e) => resolve({ status: 0, text: String(e) }));
    req.end(body);
  });
}

function multipart(file: CorpusFile): { body: Buffer; contentType: string } {
  const boundary = `----folio${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify({ source: 'bench-ingest' })}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\n` +
        `Content-Type: application/pdf\r\n\r\n`,
    ),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

interface IngestRun {
  pages: number;
  seconds: number; // first upload sent -> last completion seen
  uploadSeconds: number; // first upload sent -> last 201
  failures: string[];
  serverCpu: number;
  busy: number;
}

/**
 * Uploads every file back to back, then polls each task until it ends. Completion times
 * are as seen by the poller (POLL_MS resolution).
 */
async function ingestAll(server: Server): Promise<IngestRun> {
  const cpu0 = processCpu(server.child.pid!);
  const [busy0, total0] = machineCpu();
  const t0 = performance.now();
  const pending = new Map<string, CorpusFile>();
  const failures: string[] = [];
  for (const file of files) {
    const { body, contentType } = multipart(file);
    const res = await request(server.port, 'POST', '/api/v1/documents/ingest', body, contentType);
    if (res.status !== 201) {
      failures.push(`${file.name}: upload HTTP ${res.status} ${res.text.slice(0, 300)}`);
      continue;
    }
    pending.set((JSON.parse(res.text) as { data: { task_identifier: string } }).data.task_identifier, file);
  }
  const uploadSeconds = (performance.now() - t0) / 1000;
  let pages = 0;
  let last = performance.now();
  const deadline = t0 + 600_000;
  // Each sweep polls the pending tasks in upload order and stops at the first one still
  // running: the server then answers a few status requests per sweep rather than one per
  // task, and the last completion is still seen within one sweep (every other task is done).
  while (pending.size > 0) {
    for (const [id, file] of pending) {
      const res = await request(server.port, 'GET', `/api/v1/tasks/status/${id}`);
      if (res.status !== 200) throw new Error(`task status HTTP ${res.status}: ${res.text.slice(0, 300)}`);
      const status = (JSON.parse(res.text) as { data: { status: string; message: string } }).data;
      if (status.status !== 'COMPLETED' && status.status !== 'FAILED') break;
      last = performance.now();
      pending.delete(id);
      const stored = Number(/Completed: (\d+) page/.exec(status.message)?.[1] ?? NaN);
      if (status.status === 'FAILED') failures.push(`${file.name}: FAILED ${status.message}`);
      else if (stored !== file.pages) failures.push(`${file.name}: ${stored} pages stored, pdfjs counts ${file.pages}`);
      else pages += stored;
    }
    if (performance.now() > deadline) throw new Error(`${pending.size} tasks still running after 600 s`);
    if (pending.size > 0) await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const [busy1, total1] = machineCpu();
  return {
    pages,
    seconds: (last - t0) / 1000,
    uploadSeconds,
    failures,
    serverCpu: processCpu(server.child.pid!) - cpu0,
    busy: total1 > total0 ? (busy1 - busy0) / (total1 - total0) : 0,
  };
}

let queryIndex = 0;

/** One search, as a sequential client sends it; its latency in ms. */
async function search(port: number): Promise<number> {
  const body = Buffer.from(JSON.stringify({ query: QUERIES[queryIndex++ % QUERIES.length], alpha: 0.5, top_k: 10 }));
  const t0 = performance.now();
  const res = await request(port, 'POST', '/api/v1/documents/search/pages', body);
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`search HTTP ${res.status}: ${res.text.slice(0, 300)}`);
  if ((JSON.parse(res.text) as { data: { results: unknown[] } }).data.results.length === 0) {
    throw new Error('search found nothing: is the base corpus ingested?');
  }
  return ms;
}

// ---------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc; zeros elsewhere).

function processCpu(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function machineCpu(): [number, number] {
  try {
    const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    return [total - ticks[3] - (ticks[4] ?? 0), total];
  } catch {
    return [0, 0];
  }
}

async function backgroundLoad(ms = 1000): Promise<number> {
  const [busy0, total0] = machineCpu();
  await new Promise((r) => setTimeout(r, ms));
  const [busy1, total1] = machineCpu();
  return total1 > total0 ? (busy1 - busy0) / (total1 - total0) : 0;
}

// ---------------------------------------------------------------------------------------------
// One engine: fresh store and server; ingest the set three times: cold (the base corpus for
// search), warm (the pipeline's speed), and while a client searches; search idle in between.

interface EngineResult {
  engine: Engine;
  background: number;
  store: Stage;
  runs: { label: string; run: IngestRun }[];
  idle: number[];
  busy: number[];
}

async function runEngine(engine: Engine): Promise<EngineResult> {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-bench-')); // PGlite's data and the blobs
  if (engine === 'pglite') {
    env = { FOLIO_DATA_DIR: dataDir, DATABASE_URL: '' };
    cleanup = () => rm(dataDir, { recursive: true, force: true });
  } else {
    const schema = `bench_ingest_${randomBytes(4).toString('hex')}`;
    const admin = await openStore({ databaseUrl: POSTGRES_URL, dataDir: null, poolSize: 1 });
    await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(admin.db);
    // main.ts passes no schema to openStore: the server gets it through the URL.
    env = { FOLIO_DATA_DIR: dataDir, DATABASE_URL: `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}` };
    cleanup = async () => {
      await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(admin.db);
      await admin.close();
      await rm(dataDir, { recursive: true, force: true });
    };
  }
  try {
    const store = await measureStore(engine);
    const background = await backgroundLoad();
    const server = await startServer(env);
    try {
      const runs: EngineResult['runs'] = [];
      const ingest = async (label: string) => {
        const run = await ingestAll(server);
        runs.push({ label, run });
        console.error(`[${engine}] ingest ${label}: ${run.pages} pages in ${run.seconds.toFixed(2)} s`);
      };
      await ingest('cold');
      await ingest('warm');
      for (let i = 0; i < 20; i++) await search(server.port); // warm-up: index load, JIT, connections
      const idle: number[] = [];
      for (let i = 0; i < queryCount; i++) idle.push(await search(server.port));
      const busy: number[] = [];
      let ingesting = true;
      const searching = (async () => {
        while (ingesting) busy.push(await search(server.port));
      })();
      await ingest('while searching').finally(() => (ingesting = false));
      await searching;
      return { engine, background, store, runs, idle, busy };
    } catch (error) {
      console.error(`[${engine}] server output:\n${server.output()}`);
      throw error;
    } finally {
      await stopServer(server);
    }
  } finally {
    await cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function table(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  rows.forEach((r) => console.log(line(r)));
  console.log();
}

/** The commit the server ran, and whether src/ had uncommitted changes (tsx runs the working tree). */
function codeUnderTest(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return `${head}${dirty ? ' + uncommitted changes in src/' : ''}`;
  } catch {
    return 'unknown';
  }
}

function report(stages: Stage[], results: EngineResult[]): void {
  const totalPages = files.reduce((n, f) => n + f.pages, 0);
  const megabytes = files.reduce((n, f) => n + f.bytes.length, 0) / 1e6;
  const largest = files.reduce((a, b) => (b.pages > a.pages ? b : a));
  const rate = (s: Stage) => s.pages / (median(s.ms) / 1000);
  const raw = stages[0];
  const rawRate = rate(raw);
  const rawCpuPerPage = median(raw.cpuMs) / raw.pages;
  console.log(`\n${files.length} text PDFs from ${CORPUS}: ${totalPages} pages, ${megabytes.toFixed(1)} MB`);
  console.log(`largest: ${largest.name}, ${largest.pages} pages (${((100 * largest.pages) / totalPages).toFixed(0)}% of the pages)`);
  console.log(`${availableParallelism()} cores; server env: ${JSON.stringify(serverEnv)}; code: ${codeUnderTest()}\n`);

  console.log(`Single thread, in this process, median of ${passes} warm passes:\n`);
  table(
    ['stage', 'pages/s', 'best pages/s', 'wall ms/page', 'cpu ms/page', 'longest block ms'],
    [...stages, ...results.map((r) => r.store)].map((s) => [
      s.name,
      rate(s).toFixed(0),
      (s.pages / (Math.min(...s.ms) / 1000)).toFixed(0),
      (median(s.ms) / s.pages).toFixed(3),
      (median(s.cpuMs) / s.pages).toFixed(3),
      s.sync ? '-' : s.stallMs.toFixed(0),
    ]),
  );

  console.log('Pipeline end to end (first upload -> last COMPLETED), hashing embedder:\n');
  table(
    ['engine', 'run', 'pages', 'seconds', 'pages/s', 'raw pages/s', 'ratio', `aim >=${AIM_RATIO * 100}%`, 'server cpu ms/page', 'raw cpu / server cpu', 'machine busy'],
    results.flatMap((r) =>
      r.runs.map(({ label, run }) => {
        const speed = run.pages / run.seconds;
        const cpuPerPage = (1000 * run.serverCpu) / run.pages;
        return [
          r.engine,
          label,
          String(run.pages),
          run.seconds.toFixed(2),
          speed.toFixed(0),
          rawRate.toFixed(0),
          `${((100 * speed) / rawRate).toFixed(0)}%`,
          label === 'warm' ? (speed >= AIM_RATIO * rawRate ? 'met' : 'MISSED') : '-',
          run.serverCpu > 0 ? cpuPerPage.toFixed(2) : '-',
          run.serverCpu > 0 ? `${((100 * rawCpuPerPage) / cpuPerPage).toFixed(0)}%` : '-',
          run.busy > 0 ? `${(100 * run.busy).toFixed(0)}%` : '-',
        ];
      }),
    ),
  );

  console.log(`Search pages (alpha 0.5, top_k 10, one client, ${QUERIES.length} queries in turn):\n`);
  table(
    ['engine', 'while', 'queries', 'p50 ms', 'p99 ms', 'max ms', 'p99 / idle p99', `aim <=${AIM_P99}x`],
    results.flatMap((r) => {
      const idle = [...r.idle].sort((a, b) => a - b);
      const busy = [...r.busy].sort((a, b) => a - b);
      const ratio = percentile(busy, 0.99) / percentile(idle, 0.99);
      const row = (label: string, xs: number[], extra: [string, string]) => [
        r.engine,
        label,
        String(xs.length),
        percentile(xs, 0.5).toFixed(1),
        percentile(xs, 0.99).toFixed(1),
        xs[xs.length - 1].toFixed(1),
        ...extra,
      ];
      return [row('idle', idle, ['-', '-']), row('ingesting', busy, [`${ratio.toFixed(1)}x`, ratio <= AIM_P99 ? 'met' : 'MISSED'])];
    }),
  );

  for (const r of results) {
    console.log(`${r.engine}: CPU already busy before the run (other processes): ${(100 * r.background).toFixed(0)}% of ${availableParallelism()} cores`);
    const failures = r.runs.flatMap(({ label, run }) => run.failures.map((f) => `${label}: ${f}`));
    for (const f of failures) console.log(`  ${f}`);
    if (failures.length > 0) process.exitCode = 1;
  }
}

const stages = await measureStages();
const results: EngineResult[] = [];
for (const engine of engines) results.push(await runEngine(engine));
agent.destroy();
report(stages, results);
