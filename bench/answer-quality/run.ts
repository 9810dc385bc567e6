// Answer-quality benchmark: `npx tsx bench/answer-quality/run.ts [--part answer|all]`.
// Ingests corpus documents through the real pipeline (PGlite in memory), asks the labelled
// questions of answer-set.ts and prints source hit-rate@5, citation accuracy and the
// not-found behaviour, offline and, when OPENAI_API_KEY or OPENAI_BASE_URL and
// FOLIO_LLM_MODEL are set, with the language model. See README.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ANSWER_ALPHA, answerQuestion } from '../../src/answer/answer.js';
import { MetadataCatalogue } from '../../src/answer/catalogue.js';
import { Optimizer } from '../../src/answer/optimize.js';
import { loadConfig } from '../../src/config.js';
import type { LlmProvider } from '../../src/providers/llm/types.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { searchPages } from '../../src/search/search.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/engine.js';
import { ANSWER_FILES, ANSWER_SET } from './answer-set.js';

const DOCS = fileURLToPath(new URL('../../test/fixtures/corpus/docs/', import.meta.url));
const KEY = 'bench-answer-key';
const K = 5;

export interface BenchContext {
  store: Store;
  runtime: Runtime;
  workspaceId: number;
  /** Document id of each ingested file. */
  documents: Map<string, number>;
  /** Page numbers of each document, with their text. */
  pages: Map<number, { page_number: number; content: string }[]>;
  close(): Promise<void>;
}

function multipart(fields: Record<string, string>, filename: string, data: Buffer): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = Object.entries(fields).map(([name, value]) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
  );
  parts.push(
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** A service on an in-memory PGlite with `files` ingested through the upload endpoint. */
export async function setUp(files: string[]): Promise<BenchContext> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'folio-bench-answer-'));
  const config = loadConfig({ ...process.env, FOLIO_API_KEYS: `${KEY}:bench:write`, FOLIO_RATE_LIMIT: '0', FOLIO_DATA_DIR: dataDir });
  const store = await openStore({ databaseUrl: null, dataDir: null });
  await migrateToLatest(store.db);
  const runtime = await startRuntime(config, store, { role: 'all', logger: false, worker: { pollMs: 50 } });
  const app = runtime.app!;
  const documents = new Map<string, number>();
  const pages = new Map<number, { page_number: number; content: string }[]>();
  const started = Date.now();
  for (const file of files) {
    const kind = file.split('/')[0];
    const body = multipart({ metadata: JSON.stringify({ corpus: file, kind }) }, path.basename(file), readFileSync(path.join(DOCS, file)));
    const res = await app.inject({ method: 'POST', url: '/api/v1/documents/ingest', headers: { ...body.headers, 'x-api-key': KEY }, payload: body.payload });
    if (res.statusCode !== 201) throw new Error(`ingest ${file}: ${res.statusCode} ${res.body}`);
    const task = res.json().data.task_identifier as string;
    for (;;) {
      const status = (await app.inject({ method: 'GET', url: `/api/v1/tasks/status/${task}`, headers: { 'x-api-key': KEY } })).json().data;
      if (status.status === 'FAILED') throw new Error(`ingest ${file} failed: ${status.message}`);
      if (status.status === 'COMPLETED') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const doc = (await app.inject({ method: 'GET', url: `/api/v1/documents/task/${task}`, headers: { 'x-api-key': KEY } })).json().data;
    documents.set(file, doc.id);
    pages.set(doc.id, doc.pages);
  }
  console.log(`ingested ${files.length} files (${[...pages.values()].reduce((n, p) => n + p.length, 0)} pages) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const workspace = await store.db.selectFrom('workspaces').select('id').where('name', '=', 'bench').executeTakeFirstOrThrow();
  return {
    store,
    runtime,
    workspaceId: workspace.id,
    documents,
    pages,
    close: async () => {
      await runtime.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const squash = (text: string) => text.replace(/\s+/g, ' ').toLowerCase();

export interface AnswerFigures {
  questions: number;
  /** Answerable questions with a gold page among the first K sources. */
  hitAt5: number;
  /** Answerable questions whose first cited source is a gold page. */
  firstCitationCorrect: number;
  /** Cited sources that are gold pages, over all cited sources (answerable questions). */
  citationPrecision: number;
  /** Unanswerable questions answered with "not found". */
  notFoundCorrect: number;
  unanswerable: number;
  modes: Record<string, number>;
  meanMs: number;
}

/** Asks every labelled question with `llm` (null: offline) and scores the sources. */
export async function answerQuality(ctx: BenchContext, llm: LlmProvider | null, verbose = false): Promise<AnswerFigures> {
  const db = ctx.store.db;
  const deps = {
    db,
    index: ctx.runtime.index!,
    embedder: ctx.runtime.embedder,
    llm,
    optimizer: new Optimizer({ db, catalogue: new MetadataCatalogue(db), llm }),
    onLlmError: (error: unknown) => verbose && console.log(`  (model not used: ${(error as Error).message})`),
  };
  const figures: AnswerFigures = { questions: 0, hitAt5: 0, firstCitationCorrect: 0, citationPrecision: 0, notFoundCorrect: 0, unanswerable: 0, modes: {}, meanMs: 0 };
  let cited = 0;
  let citedGold = 0;
  let elapsed = 0;
  for (const item of ANSWER_SET) {
    const started = performance.now();
    const { data, mode } = await answerQuestion(deps, ctx.workspaceId, { question: item.question, top_k: K });
    elapsed += performance.now() - started;
    figures.modes[mode] = (figures.modes[mode] ?? 0) + 1;
    const citedSources = data.sources.filter((s) => s.sentence_ids.length > 0 || mode === 'llm');
    if (item.evidence === null) {
      figures.unanswerable++;
      const notFound = data.sources.length === 0;
      if (notFound) figures.notFoundCorrect++;
      if (verbose) console.log(`${notFound ? 'ok  ' : 'MISS'} [none] ${item.question}\n      ${data.answer.slice(0, 160).replace(/\n/g, ' ')}`);
      continue;
    }
    figures.questions++;
    const documentId = ctx.documents.get(item.file)!;
    const gold = new Set(
      ctx.pages.get(documentId)!.filter((p) => squash(p.content).includes(squash(item.evidence!))).map((p) => p.page_number),
    );
    if (gold.size === 0) throw new Error(`evidence not found in ${item.file}: ${item.evidence}`);
    const isGold = (s: { document_id: number; page_number: number }) => s.document_id === documentId && gold.has(s.page_number);
    const hit = data.sources.slice(0, K).some(isGold);
    if (hit) figures.hitAt5++;
    if (citedSources.length > 0 && isGold(citedSources[0])) figures.firstCitationCorrect++;
    cited += citedSources.length;
    citedGold += citedSources.filter(isGold).length;
    if (verbose) {
      const where = data.sources.map((s) => `${s.document_id}:${s.page_number}${isGold(s) ? '*' : ''}`).join(' ');
      console.log(`${hit ? 'ok  ' : 'MISS'} [${mode}] ${item.question}  gold ${documentId}:${[...gold].join(',')}  sources ${where}\n      ${data.answer.slice(0, 160).replace(/\n/g, ' ')}`);
    }
  }
  figures.citationPrecision = cited === 0 ? 0 : citedGold / cited;
  figures.meanMs = elapsed / ANSWER_SET.length;
  return figures;
}

/** Baseline: hit-rate@K of the retrieval alone (the hybrid search the answer starts from). */
export async function retrievalHitRate(ctx: BenchContext): Promise<{ hits: number; top1: number; questions: number }> {
  const deps = { db: ctx.store.db, index: ctx.runtime.index!, embedder: ctx.runtime.embedder };
  let hits = 0;
  let top1 = 0;
  let questions = 0;
  for (const item of ANSWER_SET) {
    if (item.evidence === null) continue;
    questions++;
    const documentId = ctx.documents.get(item.file)!;
    const gold = ctx.pages.get(documentId)!.filter((p) => squash(p.content).includes(squash(item.evidence!))).map((p) => p.page_number);
    const { results } = await searchPages(deps, ctx.workspaceId, { query: item.question, alpha: ANSWER_ALPHA, top_k: K });
    const isGold = (r: { document_id: number; page_number: number }) => r.document_id === documentId && gold.includes(r.page_number);
    if (results.some(isGold)) hits++;
    if (results.length > 0 && isGold(results[0])) top1++;
  }
  return { hits, top1, questions };
}

function report(label: string, f: AnswerFigures): void {
  const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(0)}%`;
  console.log(
    `${label.padEnd(9)} hit-rate@${K} ${f.hitAt5}/${f.questions} (${pct(f.hitAt5, f.questions)})  ` +
      `first citation on a gold page ${f.firstCitationCorrect}/${f.questions} (${pct(f.firstCitationCorrect, f.questions)})  ` +
      `citation precision ${(100 * f.citationPrecision).toFixed(0)}%  ` +
      `not-found on unanswerable ${f.notFoundCorrect}/${f.unanswerable}  ` +
      `modes ${JSON.stringify(f.modes)}  mean ${f.meanMs.toFixed(0)} ms/question`,
  );
}

export async function runAnswerPart(verbose: boolean): Promise<void> {
  const ctx = await setUp(ANSWER_FILES);
  try {
    const retrieval = await retrievalHitRate(ctx);
    console.log(
      `search    hit-rate@${K} ${retrieval.hits}/${retrieval.questions}  top page gold ${retrieval.top1}/${retrieval.questions}  (hybrid search alone, alpha ${ANSWER_ALPHA})`,
    );
    report('offline', await answerQuality(ctx, null, verbose));
    if (ctx.runtime.llm) report('llm', await answerQuality(ctx, ctx.runtime.llm, verbose));
    else console.log('llm       skipped: set OPENAI_API_KEY or OPENAI_BASE_URL, and FOLIO_LLM_MODEL');
  } finally {
    await ctx.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { part: { type: 'string', default: 'all' }, verbose: { type: 'boolean', default: false } } });
  if (values.part === 'answer' || values.part === 'all') await runAnswerPart(values.verbose!);
}

await main();
