// The upgrade of the offline embedder: pages stored with v1 are searched correctly before,
// during and after their re-embedding with v2, on both engines. Correct means each page's
// semantic_score is the cosine with the query embedded by the page's own model, never with
// the other model's query; and the background task reports its progress and ends COMPLETED.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashEmbed, HASHING_V1_MODEL } from '../../src/providers/embeddings/hashing.js';
import { HASHING_V2_MODEL, lexemeEmbed } from '../../src/providers/embeddings/lexeme-hashing.js';
import { insertDocument, insertPages } from '../../src/store/documents.js';
import { replaceEmbeddings } from '../../src/store/reembedding.js';
import { KEYS, call, startTestApp, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/poll.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';

const SEARCH = '/api/v1/documents/search/pages';
const CONTENTS = [
  'Boundary layer transition on a flat plate at supersonic speeds.',
  'Heat transfer in the laminar boundary layer of a cone.',
  'Buckling of thin cylindrical shells under axial compression.',
  'Pressure distribution on slender wings at hypersonic speeds.',
  'Vibration of cantilever plates with a crack.',
  'Turbulent boundary layer separation ahead of a compression corner.',
];
const QUERY = 'supersonic boundary layer';

interface Result {
  id: number;
  relevance: number;
  semantic_score: number;
  keyword_score: number;
}

const dot = (a: Float32Array, b: Float32Array): number => a.reduce((sum, x, i) => sum + x * b[i], 0);

describe.each(ENGINES)('re-embedding pages of the former offline model on %s', (engine) => {
  let store: TestStore;
  let api: TestApp;
  const pages: { id: number; content: string }[] = [];

  beforeAll(async () => {
    store = await openTestStore(engine);
    // The API alone first: no worker, so nothing is embedded again until the test says so.
    api = await startTestApp(engine, { store, role: 'api' });
    const workspace = await store.db.selectFrom('workspaces').select('id').where('name', '=', 'alpha').executeTakeFirstOrThrow();
    for (const [n, content] of CONTENTS.entries()) {
      const doc = await insertDocument(store.db, {
        workspaceId: workspace.id, externalId: `v1-${n}`, filePath: `v1/${n}`, fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null,
      });
      const [id] = await insertPages(store.db, workspace.id, doc.id, [
        { pageNumber: 1, content, embedding: hashEmbed(content), embeddingModel: HASHING_V1_MODEL, paragraphs: [] },
      ]);
      pages.push({ id, content });
    }
  });
  afterAll(async () => {
    await api?.close();
    await store?.close();
  });

  async function search(alpha: number): Promise<Result[]> {
    const res = await call(api.app, 'POST', SEARCH, { key: KEYS.read, body: { query: QUERY, alpha, top_k: 100 } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.results as Result[];
  }

  /** Every result's semantic score is its page's cosine with the query embedded by the page's model. */
  async function expectScoredByOwnModel(): Promise<void> {
    const rows = await store.db.selectFrom('pages').select(['id', 'embedding_model']).execute();
    const model = new Map(rows.map((r) => [Number(r.id), r.embedding_model]));
    const own = new Map(
      pages.map((p) => [
        p.id,
        Math.max(0, model.get(p.id) === HASHING_V1_MODEL ? dot(hashEmbed(QUERY), hashEmbed(p.content)) : dot(lexemeEmbed(QUERY), lexemeEmbed(p.content))),
      ]),
    );
    for (const alpha of [0, 0.5, 1]) {
      const results = await search(alpha);
      // At alpha > 0 every page with a positive cosine is a result.
      const found = new Set(results.map((r) => r.id));
      if (alpha > 0) for (const p of pages) if (own.get(p.id)! > 0) expect(found.has(p.id), `page ${p.id} at alpha ${alpha}`).toBe(true);
      for (const r of results) {
        expect(r.semantic_score, `page ${r.id} (${model.get(r.id)}) at alpha ${alpha}`).toBeCloseTo(own.get(r.id)!, 5);
        expect(r.relevance).toBeCloseTo(alpha * r.semantic_score + (1 - alpha) * r.keyword_score, 6);
      }
      for (let i = 1; i < results.length; i++) expect(results[i].relevance).toBeLessThanOrEqual(results[i - 1].relevance);
    }
  }

  it('scores v1 pages with a v1 query before the re-embedding', async () => {
    await expectScoredByOwnModel();
    const top = (await search(1))[0];
    expect(top.id).toBe(pages[0].id);
  });

  it('scores each page with the query of its own model while half of them are embedded again', async () => {
    const half = pages.slice(0, 3);
    await replaceEmbeddings(store.db, half.map((p) => ({ id: p.id, embedding: lexemeEmbed(p.content) })), HASHING_V2_MODEL);
    const models = await store.db.selectFrom('pages').select('embedding_model').execute();
    expect(models.map((m) => m.embedding_model).sort()).toEqual([...Array(3).fill(HASHING_V1_MODEL), ...Array(3).fill(HASHING_V2_MODEL)]);
    await expectScoredByOwnModel();
  });

  it('embeds the rest again in a background task with progress, after which every page is v2', async () => {
    const worker = await startTestApp(engine, { store, role: 'worker' });
    try {
      const task = await until(
        () => store.db.selectFrom('tasks').selectAll().where('kind', '=', 'ReembedPages').executeTakeFirst(),
        (row) => row?.status === 'COMPLETED',
      );
      expect(task!.identifier).toMatch(/^ReembedPages:[0-9a-f-]{36}$/);
      expect(task!.progress).toBe(100);
      expect(task!.title).toBe(`Embed the pages of ${HASHING_V1_MODEL} again with ${HASHING_V2_MODEL}`);
      expect(task!.message).toBe(`Embedded 3 documents again with ${HASHING_V2_MODEL}`);
      const status = await call(api.app, 'GET', `/api/v1/tasks/status/${task!.identifier}`, { key: KEYS.read });
      expect(status.json().data).toMatchObject({ status: 'COMPLETED', progress: 100 });
    } finally {
      await worker.close();
    }
    const rows = await store.db.selectFrom('pages').select(['id', 'embedding_model', 'embedding']).execute();
    expect(rows.every((r) => r.embedding_model === HASHING_V2_MODEL)).toBe(true);
    await expectScoredByOwnModel();
    // The ids stayed, and the semantic ranking is v2's.
    const expected = pages
      .map((p) => ({ id: p.id, cosine: dot(lexemeEmbed(QUERY), lexemeEmbed(p.content)) }))
      .filter((e) => e.cosine > 0)
      .sort((a, b) => b.cosine - a.cosine || a.id - b.id);
    expect((await search(1)).map((r) => r.id)).toEqual(expected.map((e) => e.id));
  });

  it('queues nothing when no page of the former model is left', async () => {
    const worker = await startTestApp(engine, { store, role: 'worker' });
    await worker.close();
    expect(await store.db.selectFrom('tasks').select('identifier').where('kind', '=', 'ReembedPages').execute()).toHaveLength(1);
  });
});
