// Retrieval quality on the Cranfield collection through the search API:
// `npx tsx bench/ir-eval/run.ts [--engine pglite|postgres] [--variants] [--data DIR]`.
// See README.md.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/app.js';
import { hashEmbed } from '../../src/providers/embeddings/index.js';
import { startRuntime } from '../../src/runtime.js';
import { topK } from '../../src/search/kernel/index.js';
import { keywordScore, semanticScore } from '../../src/search/scores.js';
import { migrateToLatest, openStore, type Engine, type Store } from '../../src/store/engine.js';
import { TEXT_SEARCH_CONFIG } from '../../src/store/pages.js';
import type { Database } from '../../src/store/schema.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KEY = 'ir-eval-key';
const WORKSPACE = 'cranfield';
const TOP_K = 100;
const ALPHAS = [0, 0.5, 1];
const NDCG_DEPTH = 10;

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'pglite' },
    variants: { type: 'boolean', default: false },
    data: { type: 'string' },
    configs: { type: 'string', default: 'english,simple' },
    'database-url': { type: 'string' },
  },
});
if (args.engine !== 'pglite' && args.engine !== 'postgres') {
  throw new Error('usage: run.ts [--engine pglite|postgres] [--variants] [--data DIR] [--database-url URL]');
}
const engine: Engine = args.engine;

// ---------------------------------------------------------------------------------------------
// The collection (formats: shared/corpus/MANIFEST.md, section B).

interface CranDoc {
  id: string;
  title: string;
  text: string;
}
interface CranQuery {
  id: string;
  text: string;
}

function dataDir(): string {
  const candidates = [
    args.data,
    process.env.CRANFIELD_DIR,
    path.join(ROOT, 'shared/corpus/ir/cranfield'),
    path.join(ROOT, '../shared/corpus/ir/cranfield'),
  ].filter((d): d is string => !!d);
  const found = candidates.find((d) => existsSync(path.join(d, 'corpus.jsonl')));
  if (!found) throw new Error(`Cranfield collection not found (tried ${candidates.join(', ')}); pass --data DIR`);
  return found;
}

const DATA = dataDir();
const readJsonl = <T>(file: string): T[] =>
  readFileSync(path.join(DATA, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

const docs = readJsonl<CranDoc>('corpus.jsonl');
const queries = readJsonl<CranQuery>('queries.jsonl');
/** query id -> (doc id -> grade 1..4, 4 = complete answer). */
const qrels = new Map<string, Map<string, number>>();
for (const line of readFileSync(path.join(DATA, 'qrels.tsv'), 'utf8').split('\n')) {
  if (line.trim() === '') continue;
  const [qid, did, grade] = line.split('\t');
  if (!qrels.has(qid)) qrels.set(qid, new Map());
  qrels.get(qid)!.set(did, Number(grade));
}
const judged = queries.filter((q) => (qrels.get(q.id)?.size ?? 0) > 0);

// ---------------------------------------------------------------------------------------------
// Metrics: gain = the qrels grade (linear, as trec_eval), discount 1 / log2(rank + 1), ideal
// DCG from all of the query's judgments (including documents that could not be ingested).

/** Gain of a grade: linear (trec_eval's default) or exponential, 2^grade - 1 (the issue's). */
type Gain = (grade: number) => number;
const LINEAR: Gain = (g) => g;
const EXPONENTIAL: Gain = (g) => 2 ** g - 1;

function ndcg(ranked: string[], judgments: Map<string, number>, gain: Gain, depth = NDCG_DEPTH): number {
  let dcg = 0;
  for (let i = 0; i < Math.min(depth, ranked.length); i++) dcg += gain(judgments.get(ranked[i]) ?? 0) / Math.log2(i + 2);
  const ideal = [...judgments.values()].sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(depth, ideal.length); i++) idcg += gain(ideal[i]) / Math.log2(i + 2);
  return idcg > 0 ? dcg / idcg : 0;
}

function recall(ranked: string[], judgments: Map<string, number>, depth = TOP_K): number {
  let found = 0;
  for (const id of ranked.slice(0, depth)) if ((judgments.get(id) ?? 0) > 0) found++;
  return judgments.size > 0 ? found / judgments.size : 0;
}

interface Scores {
  ndcg: number;
  recall: number;
}

/** nDCG@10 and recall@100 of each judged query (in `judged` order) for a ranking per query id. */
function perQuery(rankings: Map<string, string[]>, gain: Gain = LINEAR): { ndcg: number[]; recall: number[] } {
  const out = { ndcg: [] as number[], recall: [] as number[] };
  for (const q of judged) {
    const ranked = rankings.get(q.id) ?? [];
    out.ndcg.push(ndcg(ranked, qrels.get(q.id)!, gain));
    out.recall.push(recall(ranked, qrels.get(q.id)!));
  }
  return out;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Mean nDCG@10 and recall@100 over the judged queries. */
function evaluate(rankings: Map<string, string[]>): Scores {
  const q = perQuery(rankings);
  return { ndcg: mean(q.ndcg), recall: mean(q.recall) };
}

// ---------------------------------------------------------------------------------------------
// The app, built the way main.ts builds it, on an in-memory PGlite or a fresh PostgreSQL schema.

interface Bench {
  app: App;
  store: Store;
  close(): Promise<void>;
}

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
  // An explicit environment: the hashing embedder whatever OPENAI_* the shell has; blobs
  // (unused by these routes) under a temporary directory.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'folio-ir-eval-'));
  const config = loadConfig({ FOLIO_API_KEYS: `${KEY}:${WORKSPACE}:write`, FOLIO_RATE_LIMIT: '0', FOLIO_DATA_DIR: dataDir });
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

async function post<T>(app: App, url: string, body: unknown): Promise<T> {
  const res = await app.inject({
    method: 'POST',
    url,
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return (JSON.parse(res.body) as { data: T }).data;
}

interface Ingested {
  /** internal document id -> Cranfield doc id */
  cranId: Map<number, string>;
  workspaceId: number;
  /** Cranfield ids of the abstracts stored as more than one page */
  split: string[];
  skipped: string[];
}

async function upload(bench: Bench, doc: CranDoc): Promise<string> {
  const boundary = `----ir-eval-${randomBytes(8).toString('hex')}`;
  const payload = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="external_id"\r\n\r\n${doc.id}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cranfield-${doc.id}.txt"\r\n` +
      `Content-Type: text/plain\r\n\r\n${doc.text}\r\n--${boundary}--\r\n`,
  );
  const res = await bench.app.inject({
    method: 'POST',
    url: '/api/v1/documents/ingest',
    headers: { 'x-api-key': KEY, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload,
  });
  if (res.statusCode !== 201) throw new Error(`upload of ${doc.id}: ${res.statusCode} ${res.body}`);
  return (JSON.parse(res.body) as { data: { task_identifier: string } }).data.task_identifier;
}

async function settled(bench: Bench, task: string): Promise<void> {
  for (;;) {
    const res = await bench.app.inject({ method: 'GET', url: `/api/v1/tasks/status/${task}`, headers: { 'x-api-key': KEY } });
    const { status, message } = (JSON.parse(res.body) as { data: { status: string; message: string } }).data;
    if (status === 'COMPLETED') return;
    if (status === 'FAILED') throw new Error(`${task} failed: ${message}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Every abstract uploaded as a `.txt` file, as a user would: the service segments it (pages
 * of at most 3,000 characters) and embeds each page with its offline embedder.
 */
async function ingest(bench: Bench): Promise<Ingested> {
  const skipped: string[] = [];
  const tasks: string[] = [];
  for (const doc of docs) {
    // Two abstracts are empty in the original: an empty file is refused, and there is
    // nothing to find in them anyway.
    if (doc.text.trim() === '') skipped.push(doc.id);
    else tasks.push(await upload(bench, doc));
  }
  for (const task of tasks) await settled(bench, task);
  const rows = (
    await sql<{ id: number; external_id: string; workspace_id: number; pages: number }>`
      SELECT d.id, d.external_id, d.workspace_id, (SELECT count(*) FROM pages p WHERE p.document_id = d.id)::int AS pages
      FROM documents d JOIN workspaces w ON w.id = d.workspace_id WHERE w.name = ${WORKSPACE}
    `.execute(bench.store.db)
  ).rows;
  return {
    cranId: new Map(rows.map((r) => [Number(r.id), r.external_id])),
    workspaceId: Number(rows[0].workspace_id),
    split: rows.filter((r) => r.pages > 1).map((r) => r.external_id).sort((a, b) => +a - +b),
    skipped,
  };
}

/** Cranfield ids in the order of the pages that rank them, each once (an abstract may span two pages). */
function documentsOf(ingested: Ingested, documentIds: number[]): string[] {
  return [...new Set(documentIds.map((id) => ingested.cranId.get(id)!))];
}

interface SearchHit {
  document_id: number;
}

async function searchAll(bench: Bench, ingested: Ingested, alpha: number): Promise<{ rankings: Map<string, string[]>; ms: number[] }> {
  const rankings = new Map<string, string[]>();
  const ms: number[] = [];
  for (const q of judged) {
    const started = performance.now();
    const data = await post<{ results: SearchHit[] }>(bench.app, '/api/v1/documents/search/pages', {
      query: q.text,
      alpha,
      top_k: TOP_K,
    });
    ms.push(performance.now() - started);
    rankings.set(q.id, documentsOf(ingested, data.results.map((r) => r.document_id)));
  }
  return { rankings, ms };
}

/**
 * BM25 (k1 0.9, b 0.4) over the stored pages' own lexemes, a document being the sum of its
 * pages, with document frequencies and the average length of this collection: the reference
 * the service's absolute rank is held to.
 */
async function bm25Rankings(bench: Bench, ingested: Ingested): Promise<Map<string, string[]>> {
  const db = bench.store.db;
  const pages = (
    await sql<{ document_id: number; len: string }>`
      SELECT p.document_id, sum((SELECT sum(array_length(u.positions, 1)) FROM unnest(p.tsv) u))::text AS len
      FROM pages p WHERE p.workspace_id = ${ingested.workspaceId} GROUP BY p.document_id
    `.execute(db)
  ).rows;
  const length = new Map(pages.map((p) => [p.document_id, Number(p.len ?? 0)]));
  const average = mean([...length.values()]);
  const rankings = new Map<string, string[]>();
  for (const q of judged) {
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
      const tf = (h.tf * 1.9) / (h.tf + 0.9 * (1 - 0.4 + (0.4 * length.get(h.document_id)!) / average));
      score.set(h.document_id, (score.get(h.document_id) ?? 0) + idf * tf);
    }
    const ranked = [...score].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, TOP_K);
    rankings.set(q.id, documentsOf(ingested, ranked.map(([id]) => id)));
  }
  return rankings;
}

/** How long each query's search takes at `alpha` and top_k `k`, in ms. */
async function timeSearches(bench: Bench, alpha: number, k: number): Promise<number[]> {
  const ms: number[] = [];
  for (const q of judged) {
    const started = performance.now();
    await post(bench.app, '/api/v1/documents/search/pages', { query: q.text, alpha, top_k: k });
    ms.push(performance.now() - started);
  }
  return ms;
}

function latencyRow(label: string, ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return `${label.padEnd(28)} ${at(0.5).toFixed(1).padStart(6)} / ${at(0.95).toFixed(1).padStart(6)}`;
}

/** A row of figures: nDCG@10 (exponential gain) on all queries, the tuning half and the test half; linear gain; recall@100. */
function qualityRow(label: string, rankings: Map<string, string[]>): string {
  const exp = perQuery(rankings, EXPONENTIAL);
  const lin = perQuery(rankings, LINEAR);
  const half = (xs: number[], odd: number) => mean(xs.filter((_, i) => i % 2 === odd));
  return `${label.padEnd(26)} ${fmt(mean(exp.ndcg))}  ${fmt(half(exp.ndcg, 1))}  ${fmt(half(exp.ndcg, 0))}   ${fmt(mean(lin.ndcg))}   ${fmt(mean(exp.recall))}`;
}

// ---------------------------------------------------------------------------------------------
// Keyword rank variants, computed directly in SQL over the ingested pages.

type RankFunction = 'ts_rank' | 'ts_rank_cd';
const CONFIGS = args.configs!.split(',');
// Normalisation flags (PostgreSQL manual, "Ranking Search Results"): 1 divides the rank by
// 1 + log of the document length, 2 by the length, 4 by the mean harmonic distance between
// extents (ts_rank_cd only; ts_rank ignores it), 8 by the number of unique words, 16 by
// 1 + log of that, and 32 maps r to r/(r+1). 32 comes last and is monotone, so it is applied
// here to the rank under the other flags: x|32 ranks exactly as x at alpha 0.
const FLAGS: Record<RankFunction, number[]> = {
  ts_rank: [0, 1, 2, 4, 8, 16, 1 | 8, 1 | 16, 2 | 8, 2 | 16],
  ts_rank_cd: [0, 1, 2, 4, 8, 16, 1 | 4, 2 | 4, 4 | 8, 4 | 16, 1 | 8, 1 | 16, 2 | 8, 2 | 16],
};
// Multipliers of r tried in the hybrid check (the rank is linear in the weights array, so
// s <= 10 is ts_rank('{0.1s,...}', ...); any s is `s * ts_rank(...)`).
const SCALES = [1, 2, 5, 10, 20, 30, 50, 100];
// The RANK_EXPRESSION this study started from, and the one it proposes (see README.md).
const ORIGINAL = { config: 'english', fn: 'ts_rank', flags: 1, plus32: false, scale: 1 } as const;
const PROPOSED = { config: 'english', fn: 'ts_rank', flags: 16, plus32: false, scale: 50 } as const;

interface Variant {
  config: string;
  fn: RankFunction;
  flags: number;
}
interface Transformed extends Variant {
  plus32: boolean;
  scale: number;
}

const flagText = (f: number): string => (f === 0 ? '0' : [1, 2, 4, 8, 16, 32].filter((b) => f & b).join('|'));
const nameOf = (v: Variant & Partial<Transformed>): string =>
  `${v.fn}(tsv, q, ${flagText(v.flags | (v.plus32 ? 32 : 0))})${v.scale && v.scale !== 1 ? ` x${v.scale}` : ''}`;

/** The pages in page id order (the API's tie order) as Cranfield ids. */
async function pageOrder(db: Kysely<Database>, ingested: Ingested): Promise<string[]> {
  const rows = await db.selectFrom('pages').select(['id', 'document_id']).where('workspace_id', '=', ingested.workspaceId).orderBy('id').execute();
  return rows.map((r) => ingested.cranId.get(r.document_id)!);
}

interface QueryRanks {
  /** Positions in page order of the pages the any-term query matches. */
  hits: Int32Array;
  /** Per variant, the rank of each hit. */
  ranks: Float64Array[];
}

/** Every variant's rank of every matching page, per judged query, for one configuration. */
async function variantRanks(db: Kysely<Database>, ingested: Ingested, order: string[], config: string, list: Variant[]): Promise<QueryRanks[]> {
  // The stored column for the pages' own configuration; for another, the vectors are made
  // once into a scratch table of this throwaway database (per query and per expression,
  // to_tsvector would run 1,400 x 24 times a query).
  let from = sql`pages p`;
  if (config !== TEXT_SEARCH_CONFIG) {
    const table = `ir_eval_tsv_${config}`;
    await sql`CREATE TABLE ${sql.id(table)} AS SELECT id, workspace_id, to_tsvector(${config}::regconfig, content) AS tsv FROM pages`.execute(db);
    from = sql`${sql.id(table)} p`;
  }
  const position = new Map(order.map((id, i) => [id, i]));
  const pageToCran = new Map(
    (await db.selectFrom('pages').select(['id', 'document_id']).execute()).map((r) => [r.id, ingested.cranId.get(r.document_id)!]),
  );
  const columns = sql.join(list.map((v, i) => sql`${sql.raw(v.fn)}(p.tsv, q.q, ${sql.lit(v.flags)})::float8 AS ${sql.ref(`r${i}`)}`));
  const out: QueryRanks[] = new Array(judged.length);
  const one = async (n: number): Promise<void> => {
    const result = await sql<Record<string, number>>`
      WITH q AS (
        SELECT coalesce(string_agg(quote_literal(l), ' | ')::tsquery, ''::tsquery) AS q
        FROM unnest(tsvector_to_array(to_tsvector(${config}::regconfig, ${judged[n].text}))) AS l
        WHERE strpos(l, chr(92)) = 0
      )
      SELECT p.id AS page_id, ${columns}
      FROM q, ${from}
      WHERE p.workspace_id = ${ingested.workspaceId} AND p.tsv @@ q.q
    `.execute(db);
    out[n] = {
      hits: Int32Array.from(result.rows, (r) => position.get(pageToCran.get(Number(r.page_id))!)!),
      ranks: list.map((_, i) => Float64Array.from(result.rows, (r) => Number(r[`r${i}`]))),
    };
  };
  // PGlite is one session; the server takes queries in parallel.
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < judged.length) await one(next++);
  };
  await Promise.all(Array.from({ length: engine === 'pglite' ? 1 : 8 }, worker));
  return out;
}

/** Cosine of the hashing embeddings of each judged query with each page, as the index scores it. */
function semanticScores(order: string[]): Float64Array[] {
  const text = new Map(docs.map((d) => [d.id, d.text]));
  const vectors = order.map((id) => hashEmbed(text.get(id)!));
  return judged.map((q) => {
    const qv = hashEmbed(q.text);
    return Float64Array.from(vectors, (dv) => {
      let dot = 0;
      for (let i = 0; i < qv.length; i++) dot += qv[i] * dv[i];
      return semanticScore(dot);
    });
  });
}

/** r as the transformed expression gives it: scaled, then r/(r+1) under flag 32. */
function transform(r: number, t: Transformed): number {
  const s = r * t.scale;
  return t.plus32 ? s / (s + 1) : s;
}

/** Per judged query, the top 100 by alpha x semantic + (1 - alpha) x r/(r+1), ties in page order. */
function rankings(order: string[], ranks: QueryRanks[], index: number, t: Transformed, semantic: Float64Array[], alpha: number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  judged.forEach((q, n) => {
    const { hits, ranks: r } = ranks[n];
    if (alpha === 0) {
      // Only matching pages are candidates; ties by page order, as the API's topK does.
      const kw = Float64Array.from(r[index], (x) => keywordScore(transform(x, t)));
      out.set(q.id, Array.from(topK(kw, TOP_K, hits), (i) => order[hits[i]]));
      return;
    }
    const relevance = Float64Array.from(semantic[n], (s) => alpha * s);
    hits.forEach((h, i) => (relevance[h] += (1 - alpha) * keywordScore(transform(r[index][i], t))));
    out.set(q.id, Array.from(topK(relevance, TOP_K), (i) => order[i]));
  });
  return out;
}

/** Two-sided paired randomisation test (sign flips) of the mean difference of b over a. */
function pValue(a: number[], b: number[], rounds = 20000): number {
  const d = a.map((x, i) => b[i] - x);
  const observed = Math.abs(mean(d));
  let seed = 12345;
  let extreme = 0;
  for (let k = 0; k < rounds; k++) {
    let sum = 0;
    for (const x of d) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      sum += seed & 0x40000000 ? x : -x;
    }
    if (Math.abs(sum / d.length) >= observed - 1e-12) extreme++;
  }
  return (extreme + 1) / (rounds + 1);
}

const fmt = (x: number): string => x.toFixed(4);
const fmtP = (p: number): string => (p < 1e-4 ? '< 0.0001' : `= ${p.toFixed(4)}`);
const pad = (s: string, n: number): string => s.padEnd(n);

async function variantStudy(bench: Bench, ingested: Ingested): Promise<void> {
  const db = bench.store.db;
  const order = await pageOrder(db, ingested);
  const semantic = semanticScores(order);
  interface Row {
    variant: Variant;
    ranks: QueryRanks[];
    index: number;
    alpha0: Scores;
  }
  const rows: Row[] = [];
  for (const config of CONFIGS) {
    const list: Variant[] = (['ts_rank', 'ts_rank_cd'] as const).flatMap((fn) => FLAGS[fn].map((flags) => ({ config, fn, flags })));
    const t0 = performance.now();
    const ranks = await variantRanks(db, ingested, order, config, list);
    console.error(`(${config}: ranks of ${list.length} variants for ${judged.length} queries in ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    list.forEach((variant, index) => {
      const alpha0 = evaluate(rankings(order, ranks, index, { ...variant, plus32: false, scale: 1 }, semantic, 0));
      rows.push({ variant, ranks, index, alpha0 });
    });
  }

  console.log(`\nKeyword only (alpha 0), ranked in SQL over the ingested pages; x|32 ranks as x (monotone):\n`);
  console.log(`${pad('config', 8)} ${pad('rank expression', 26)} nDCG@10  recall@100`);
  for (const r of rows) console.log(`${pad(r.variant.config, 8)} ${pad(nameOf(r.variant), 26)} ${fmt(r.alpha0.ndcg)}   ${fmt(r.alpha0.recall)}`);

  // Hybrid: every english variant and the best four 'simple' ones, with and without 32, at
  // each scale, first at alpha 0.5; then the best of those at 0.3 and 0.7 as well.
  const simpleBest = rows.filter((r) => r.variant.config === 'simple').sort((a, b) => b.alpha0.ndcg - a.alpha0.ndcg).slice(0, 4);
  // ts_rank ignores flag 4, so those rows repeat the ones without it.
  const pool = [...rows.filter((r) => r.variant.config === 'english'), ...simpleBest].filter(
    (r) => !(r.variant.fn === 'ts_rank' && r.variant.flags & 4),
  );
  interface Candidate {
    row: Row;
    t: Transformed;
    h5: Scores;
  }
  const candidates: Candidate[] = [];
  for (const row of pool) {
    for (const plus32 of [false, true]) {
      for (const scale of SCALES) {
        const t = { ...row.variant, plus32, scale };
        candidates.push({ row, t, h5: evaluate(rankings(order, row.ranks, row.index, t, semantic, 0.5)) });
      }
    }
  }
  const same = (c: Candidate, t: Transformed): boolean =>
    c.t.config === t.config && c.t.fn === t.fn && c.t.flags === t.flags && c.t.plus32 === t.plus32 && c.t.scale === t.scale;
  const before = candidates.find((c) => same(c, ORIGINAL))!;
  const current = candidates.find((c) => same(c, PROPOSED))!;
  const byHybrid = [...candidates].sort((a, b) => b.h5.ndcg - a.h5.ndcg);
  const both = (c: Candidate): number => (c.row.alpha0.ndcg + c.h5.ndcg) / 2;
  const byBoth = [...candidates].sort((a, b) => both(b) - both(a));
  const shown = [...new Set([before, current, ...byBoth.slice(0, 12), ...byHybrid.slice(0, 6)])];
  const mark = (c: Candidate): string => (c === current ? ' (p)' : c === before ? ' (o)' : '');

  console.log(`\nHybrid (semantic = cosine of the hashing embeddings), ${candidates.length} expressions tried at alpha 0.5;`);
  console.log(`(o) the original expression, (p) the proposed one, then the best 12 by the mean of alpha 0 and 0.5`);
  console.log(`nDCG@10 and the best 6 at 0.5 (xS: the rank times S):\n`);
  console.log(`${pad('config', 8)} ${pad('rank expression', 30)} a=0     a=0.3   a=0.5   a=0.7   mean(0,.5)  a=.5 R@100`);
  for (const c of shown) {
    const h3 = evaluate(rankings(order, c.row.ranks, c.row.index, c.t, semantic, 0.3));
    const h7 = evaluate(rankings(order, c.row.ranks, c.row.index, c.t, semantic, 0.7));
    console.log(
      `${pad(c.t.config, 8)} ${pad(nameOf(c.t) + mark(c), 30)} ${fmt(c.row.alpha0.ndcg)}  ${fmt(h3.ndcg)}  ` +
        `${fmt(c.h5.ndcg)}  ${fmt(h7.ndcg)}  ${fmt(both(c))}      ${fmt(c.h5.recall)}`,
    );
  }

  // Paired randomisation tests on per-query nDCG@10: the best on both against the original and
  // the proposed expressions, and against the original's flags at the same scale (is the normalisation choice real?).
  const pick = byBoth[0];
  const sameScale = candidates.find((c) => same(c, { ...ORIGINAL, scale: pick.t.scale, plus32: pick.t.plus32 }));
  const perQ = (c: Candidate, alpha: number): number[] => perQuery(rankings(order, c.row.ranks, c.row.index, c.t, semantic, alpha)).ndcg;
  console.log(`\nBest on both: ${pick.t.config} ${nameOf(pick.t)}. Paired randomisation tests on per-query nDCG@10:`);
  for (const base of [before, current, sameScale]) {
    if (!base || base === pick) continue;
    for (const alpha of [0, 0.5]) {
      const a = perQ(base, alpha);
      const b = perQ(pick, alpha);
      const wins = b.filter((x, i) => x > a[i] + 1e-12).length;
      const losses = b.filter((x, i) => x < a[i] - 1e-12).length;
      console.log(
        `  vs ${pad(nameOf(base.t), 24)} alpha ${alpha.toFixed(1)}: ${fmt(mean(a))} -> ${fmt(mean(b))} ` +
          `(${wins} queries better, ${losses} worse, p ${fmtP(pValue(a, b))})`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------

const bench = await startApp();
try {
  const t0 = performance.now();
  const ingested = await ingest(bench);
  console.log(
    `engine ${engine}: uploaded ${ingested.cranId.size} of ${docs.length} abstracts as .txt files in ` +
      `${((performance.now() - t0) / 1000).toFixed(1)} s; skipped (empty) ${ingested.skipped.join(', ') || 'none'}; ` +
      `stored as two pages or more (over 3,000 characters): ${ingested.split.length} (${ingested.split.join(', ')})`,
  );
  console.log(`${judged.length} of ${queries.length} queries have judgments; search top_k ${TOP_K}\n`);
  console.log('nDCG@10 with exponential gain (2^grade - 1) on all queries, on the tuning half (2nd, 4th, ... query)');
  console.log('and on the test half (1st, 3rd, ...); nDCG@10 with linear gain; recall@100.\n');
  console.log(`${'ranking'.padEnd(26)} nDCG    tune    test     linear   recall`);
  let keywordMs: number[] = [];
  for (const alpha of ALPHAS) {
    const { rankings, ms } = await searchAll(bench, ingested, alpha);
    if (alpha === 0) keywordMs = ms;
    console.log(qualityRow(`Folio alpha ${alpha.toFixed(1)}`, rankings));
  }
  console.log(qualityRow('BM25 reference (k1 0.9, b 0.4)', await bm25Rankings(bench, ingested)));
  console.log(`\nsearch latency over the ${judged.length} queries, in process (p50 / p95 ms):`);
  console.log(`  ${latencyRow('alpha 0, top_k 100 (above)', keywordMs)}`);
  for (const [alpha, k] of [[0, 10], [1, 10], [1, 100]] as const) {
    console.log(`  ${latencyRow(`alpha ${alpha}, top_k ${k}`, await timeSearches(bench, alpha, k))}`);
  }
  if (args.variants) await variantStudy(bench, ingested);
} finally {
  await bench.close();
}
