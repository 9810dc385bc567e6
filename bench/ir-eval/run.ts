// Retrieval quality through the search API on every IR collection under shared/corpus/ir:
// `npx tsx bench/ir-eval/run.ts [--engine pglite|postgres] [--corpus DIR] [--only a,b]`.
// See README.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/app.js';
import { startRuntime } from '../../src/runtime.js';
import { migrateToLatest, openStore, type Engine, type Store } from '../../src/store/engine.js';
import { TEXT_SEARCH_CONFIG } from '../../src/store/pages.js';
import { collectionsDir, quality, readCollections, RECALL_DEPTH, type Collection, type IrDoc, type Quality } from './collections.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ALPHAS = [0, 0.5, 1] as const;

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'pglite' },
    corpus: { type: 'string' },
    only: { type: 'string' },
    'database-url': { type: 'string' },
  },
});
if (args.engine !== 'pglite' && args.engine !== 'postgres') {
  throw new Error('usage: run.ts [--engine pglite|postgres] [--corpus DIR] [--only a,b] [--database-url URL]');
}
const engine: Engine = args.engine;
const collections = readCollections(collectionsDir(ROOT, args.corpus), args.only?.split(','));
if (collections.length === 0) throw new Error('no collection found');
const keyOf = (c: Collection) => `ir-eval-${c.name}`;

interface Bench {
  app: App;
  store: Store;
  close(): Promise<void>;
}

/** The service as `folio serve` runs it (API and workers), on an in-memory PGlite or a fresh PostgreSQL schema. */
async function startApp(): Promise<Bench> {
  let store: Store;
  let dropSchema = async (): Promise<void> => {};
  if (engine === 'pglite') {
    store = await openStore({ databaseUrl: null, dataDir: null });
    await migrateToLatest(store.db);
  } else {
    const url = args['database-url'] ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `ir_eval_${randomBytes(6).toString('hex')}`;
    const admin = async (statement: string): Promise<void> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(statement);
      } finally {
        await client.end();
      }
    };
    await admin(`CREATE SCHEMA ${schema}`);
    dropSchema = () => admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    store = await openStore({ databaseUrl: url, dataDir: null, schema, poolSize: 10 });
    await migrateToLatest(store.db, schema);
  }
  // An explicit environment: the offline embedder whatever OPENAI_* the shell has.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'folio-ir-eval-'));
  const keys = collections.map((c) => `${keyOf(c)}:${c.name}:write`).join(',');
  const config = loadConfig({ FOLIO_API_KEYS: keys, FOLIO_RATE_LIMIT: '0', FOLIO_DATA_DIR: dataDir });
  const runtime = await startRuntime(config, store, { role: 'all', logger: false, worker: { pollMs: 50 } });
  return {
    app: runtime.app!,
    store,
    close: async () => {
      await runtime.close();
      await store.close();
      await dropSchema();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function call<T>(app: App, key: string, method: 'GET' | 'POST', url: string, body?: unknown): Promise<T> {
  const res = await app.inject({
    method,
    url,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return (JSON.parse(res.body) as { data: T }).data;
}

/** Uploads a document's text as a .txt file, as a user would; answers its task. */
async function upload(app: App, key: string, doc: IrDoc): Promise<string> {
  const boundary = `----ir-eval-${randomBytes(8).toString('hex')}`;
  const payload = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="external_id"\r\n\r\n${doc.id}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="doc-${doc.id}.txt"\r\n` +
      `Content-Type: text/plain\r\n\r\n${doc.text}\r\n--${boundary}--\r\n`,
  );
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/documents/ingest',
    headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload,
  });
  if (res.statusCode !== 201) throw new Error(`upload of ${doc.id}: ${res.statusCode} ${res.body}`);
  return (JSON.parse(res.body) as { data: { task_identifier: string } }).data.task_identifier;
}

async function settled(app: App, key: string, task: string): Promise<void> {
  for (;;) {
    const { status, message } = await call<{ status: string; message: string }>(app, key, 'GET', `/api/v1/tasks/status/${task}`);
    if (status === 'COMPLETED') return;
    if (status === 'FAILED') throw new Error(`${task} failed: ${message}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Ingested {
  workspaceId: number;
  /** internal document id -> the collection's doc id */
  docId: Map<number, string>;
  /** Docs left out: empty in the original (an empty file is refused, and holds nothing to find). */
  skipped: number;
  seconds: number;
}

async function ingest(bench: Bench, c: Collection): Promise<Ingested> {
  const started = performance.now();
  const key = keyOf(c);
  const tasks: string[] = [];
  let skipped = 0;
  for (const doc of c.docs) {
    if (doc.text.trim() === '') skipped++;
    else tasks.push(await upload(bench.app, key, doc));
  }
  for (const task of tasks) await settled(bench.app, key, task);
  const rows = (
    await sql<{ id: number; external_id: string; workspace_id: number }>`
      SELECT d.id, d.external_id, d.workspace_id FROM documents d JOIN workspaces w ON w.id = d.workspace_id WHERE w.name = ${c.name}
    `.execute(bench.store.db)
  ).rows;
  return {
    workspaceId: Number(rows[0].workspace_id),
    docId: new Map(rows.map((r) => [Number(r.id), r.external_id])),
    skipped,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Doc ids in the order of the pages that rank them, each once (a long document spans pages). */
const documentsOf = (ingested: Ingested, documentIds: number[]): string[] => [...new Set(documentIds.map((id) => ingested.docId.get(id)!))];

interface Run {
  rankings: Map<string, string[]>;
  ms: number[];
}

async function searchAll(bench: Bench, c: Collection, ingested: Ingested, alpha: number, k: number): Promise<Run> {
  const rankings = new Map<string, string[]>();
  const ms: number[] = [];
  for (const q of c.queries) {
    const started = performance.now();
    const data = await call<{ results: { document_id: number }[] }>(bench.app, keyOf(c), 'POST', '/api/v1/documents/search/pages', {
      query: q.text,
      alpha,
      top_k: k,
    });
    ms.push(performance.now() - started);
    rankings.set(q.id, documentsOf(ingested, data.results.map((r) => r.document_id)));
  }
  return { rankings, ms };
}

/**
 * BM25 (k1 0.9, b 0.4) over the stored pages' own lexemes, a document being the sum of its
 * pages, with this collection's document frequencies and average length: the reference the
 * service's absolute ranks are held to.
 */
async function bm25Rankings(bench: Bench, c: Collection, ingested: Ingested): Promise<Map<string, string[]>> {
  const db = bench.store.db;
  const pages = (
    await sql<{ document_id: number; len: string }>`
      SELECT p.document_id, sum((SELECT sum(array_length(u.positions, 1)) FROM unnest(p.tsv) u))::text AS len
      FROM pages p WHERE p.workspace_id = ${ingested.workspaceId} GROUP BY p.document_id
    `.execute(db)
  ).rows;
  const length = new Map(pages.map((p) => [Number(p.document_id), Number(p.len ?? 0)]));
  const average = [...length.values()].reduce((a, b) => a + b, 0) / length.size;
  const rankings = new Map<string, string[]>();
  for (const q of c.queries) {
    const hits = (
      await sql<{ document_id: number; lexeme: string; tf: number }>`
        SELECT p.document_id, u.lexeme, sum(array_length(u.positions, 1))::int AS tf
        FROM pages p, unnest(p.tsv) u
        WHERE p.workspace_id = ${ingested.workspaceId}
          AND u.lexeme = ANY(tsvector_to_array(to_tsvector(${TEXT_SEARCH_CONFIG}::regconfig, ${q.text})))
        GROUP BY p.document_id, u.lexeme
      `.execute(db)
    ).rows;
    const df = new Map<string, number>();
    for (const h of hits) df.set(h.lexeme, (df.get(h.lexeme) ?? 0) + 1);
    const score = new Map<number, number>();
    for (const h of hits) {
      const n = df.get(h.lexeme)!;
      const idf = Math.log(1 + (length.size - n + 0.5) / (n + 0.5));
      const doc = Number(h.document_id);
      const tf = (h.tf * 1.9) / (h.tf + 0.9 * (1 - 0.4 + (0.4 * length.get(doc)!) / average));
      score.set(doc, (score.get(doc) ?? 0) + idf * tf);
    }
    const ranked = [...score].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, RECALL_DEPTH);
    rankings.set(q.id, documentsOf(ingested, ranked.map(([id]) => id)));
  }
  return rankings;
}

const percentile = (ms: number[], p: number): number => {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};
const latency = (ms: number[]): string => `${percentile(ms, 0.5).toFixed(1)} / ${percentile(ms, 0.95).toFixed(1)}`;
const f3 = (x: number): string => x.toFixed(3);

interface Row {
  name: string;
  docs: number;
  queries: number;
  byAlpha: Quality[];
  bm25: Quality;
  keywordMs: number[];
  semanticMs: number[];
}

function printTable(rows: Row[]): void {
  console.log(`\nengine ${engine}; nDCG@10 (gain 2^grade - 1) and recall@${RECALL_DEPTH}; alpha 0 = keyword, 1 = semantic`);
  console.log('| collection | docs | queries | measure | alpha 0 | alpha 0.5 | alpha 1 | BM25 | kw/BM25 | sem/BM25 | 0.5 - max(0,1) |');
  console.log('|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    for (const measure of ['ndcg', 'recall'] as const) {
      const [k, h, s] = r.byAlpha.map((q) => q[measure]);
      const b = r.bm25[measure];
      const label = measure === 'ndcg' ? 'nDCG@10' : `recall@${RECALL_DEPTH}`;
      console.log(
        `| ${r.name} | ${r.docs} | ${r.queries} | ${label} | ${f3(k)} | ${f3(h)} | ${f3(s)} | ${f3(b)} | ${(k / b).toFixed(2)} | ${(s / b).toFixed(2)} | ${(h - Math.max(k, s)).toFixed(3)} |`,
      );
    }
  }
  console.log('\nsearch latency in process, top_k 10, p50 / p95 ms');
  console.log('| collection | keyword (alpha 0) | semantic (alpha 1) |');
  console.log('|---|---:|---:|');
  for (const r of rows) console.log(`| ${r.name} | ${latency(r.keywordMs)} | ${latency(r.semanticMs)} |`);
}

const bench = await startApp();
try {
  const rows: Row[] = [];
  for (const c of collections) {
    const ingested = await ingest(bench, c);
    console.error(`${c.name}: ${ingested.docId.size} documents uploaded in ${ingested.seconds.toFixed(0)} s (${ingested.skipped} empty, skipped)`);
    const byAlpha: Quality[] = [];
    for (const alpha of ALPHAS) byAlpha.push(quality(c, (await searchAll(bench, c, ingested, alpha, RECALL_DEPTH)).rankings));
    const bm25 = quality(c, await bm25Rankings(bench, c, ingested));
    const keywordMs = (await searchAll(bench, c, ingested, 0, 10)).ms;
    const semanticMs = (await searchAll(bench, c, ingested, 1, 10)).ms;
    rows.push({ name: c.name, docs: ingested.docId.size, queries: c.queries.length, byAlpha, bm25, keywordMs, semanticMs });
  }
  printTable(rows);
} finally {
  await bench.close();
}
