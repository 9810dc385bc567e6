// Two service instances on one PostgreSQL schema, each with its own in-process vector
// index: a write acknowledged by one instance is visible to the other's next search, deletes
// included, and concurrent ingests through both leave every page found exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/engine.js';
import { ENGINES, POSTGRES_URL, openTestStore, type TestStore } from '../helpers/stores.js';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';

const SEARCH = '/api/v1/documents/search/pages';
const INGEST = '/api/v1/documents/ingest/embedding';

interface SearchResult {
  id: number;
  document_id: number;
  semantic_score: number;
  keyword_score: number;
  relevance: number;
}

/** Every page below shares this direction (cosine about 0.7 with it), so one search finds them all. */
const BASE = vector(424242);
const near = (seed: number) => vector(seed).map((v, i) => v + BASE[i]);

describe.skipIf(!ENGINES.includes('postgres'))('two instances on one PostgreSQL schema', () => {
  let store1: TestStore;
  let store2: TestStore;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    store1 = await openTestStore('postgres');
    const second = await openStore({ databaseUrl: POSTGRES_URL, dataDir: null, schema: store1.schema! });
    store2 = { ...second, schema: store1.schema };
    a = await startTestApp('postgres', { store: store1 });
    b = await startTestApp('postgres', { store: store2 });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await store2?.close();
    await store1?.close();
  });

  async function ingest(app: TestApp, seed: number, content = `Consistency page ${seed}.`, external_id?: string) {
    const res = await call(app.app, 'POST', INGEST, { body: { embedding: near(seed), content, external_id } });
    expect(res.statusCode, res.body).toBe(201);
    const documentId = res.json().data.document_id as number;
    const page = await app.store.db.selectFrom('pages').select('id').where('document_id', '=', documentId).executeTakeFirstOrThrow();
    return { documentId, pageId: Number(page.id), seed };
  }

  async function search(app: TestApp, body: Record<string, unknown>): Promise<SearchResult[]> {
    const res = await call(app.app, 'POST', SEARCH, { key: KEYS.read, body });
    expect(res.statusCode, res.body).toBe(200);
    const results = res.json().data.results as SearchResult[];
    expect(new Set(results.map((r) => r.id)).size, 'no page twice in one answer').toBe(results.length);
    return results;
  }

  /** The page whose embedding is `near(seed)`, as the instance's top result for that embedding. */
  async function topFor(app: TestApp, seed: number): Promise<SearchResult | undefined> {
    return (await search(app, { embedding: near(seed), top_k: 1 }))[0];
  }

  async function allPageIds(app: TestApp): Promise<number[]> {
    return (await search(app, { embedding: BASE, top_k: 1000 })).map((r) => r.id);
  }

  async function livePageIds(): Promise<number[]> {
    return (await store1.db.selectFrom('pages').select('id').orderBy('id').execute()).map((r) => Number(r.id));
  }

  it('runs two stores and two indexes on the same schema', async () => {
    expect(store2.schema).toBe(store1.schema);
    expect(store2.db).not.toBe(store1.db);
    const seeded = [await ingest(a, 1), await ingest(b, 2)];
    // Warm both indexes: each loads the workspace from the store on its first search.
    for (const app of [a, b]) {
      expect((await allPageIds(app)).sort((x, y) => x - y)).toEqual(seeded.map((p) => p.pageId));
    }
  });

  it('finds a page ingested through one instance in the other right after the 201', async () => {
    for (let i = 0; i < 30; i++) {
      const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a];
      const page = await ingest(writer, 100 + i, `Handover page ${i} about lanterns${i}.`);
      const top = await topFor(reader, 100 + i);
      expect(top?.id, `ingest ${i} through ${i % 2 === 0 ? 'A' : 'B'}`).toBe(page.pageId);
      expect(top!.semantic_score).toBeCloseTo(1, 5);
      const keyword = await search(reader, { query: `lanterns${i}`, alpha: 0 });
      expect(keyword.map((r) => r.id)).toEqual([page.pageId]);
    }
    const live = await livePageIds();
    for (const app of [a, b]) expect((await allPageIds(app)).sort((x, y) => x - y)).toEqual(live);
  });

  it('drops a document deleted through one instance from the other instance next search', async () => {
    for (let i = 0; i < 10; i++) {
      const [writer, reader] = i % 2 === 0 ? [a, b] : [b, a];
      const page = await ingest(reader, 300 + i);
      // The reader has the page in its index before the delete.
      expect((await topFor(reader, 300 + i))?.id).toBe(page.pageId);
      expect((await topFor(writer, 300 + i))?.id).toBe(page.pageId);
      const res = await call(writer.app, 'DELETE', `/api/v1/documents/internal/${page.documentId}`);
      expect(res.statusCode, res.body).toBe(200);
      for (const app of [reader, writer]) {
        expect((await topFor(app, 300 + i))?.id, `delete ${i}`).not.toBe(page.pageId);
        expect(await allPageIds(app)).not.toContain(page.pageId);
      }
    }

    const versions = [await ingest(b, 400, 'Versioned.', 'shared-ext'), await ingest(b, 401, 'Versioned.', 'shared-ext')];
    for (const v of versions) expect((await topFor(b, v.seed))?.id).toBe(v.pageId);
    const res = await call(a.app, 'DELETE', '/api/v1/documents/external/shared-ext?latest_only=false');
    expect(res.json().data.deleted_count).toBe(2);
    for (const v of versions) {
      expect((await topFor(b, v.seed))?.id).not.toBe(v.pageId);
      expect(await allPageIds(b)).not.toContain(v.pageId);
    }
    const live = await livePageIds();
    for (const app of [a, b]) expect((await allPageIds(app)).sort((x, y) => x - y)).toEqual(live);
  });

  it('answers a repeated filter with what the other instance changed: metadata, new documents, deletions', async () => {
    const filtered = async (app: TestApp) =>
      (await search(app, { embedding: BASE, top_k: 1000, metadata_filter: { shift: 'night' } })).map((r) => r.document_id).sort((x, y) => x - y);
    const first = await ingest(a, 950, 'Night shift page.', 'night-ext');
    for (const app of [a, b]) expect(await filtered(app)).toEqual([]);
    for (let i = 0; i < 3; i++) {
      const [writer, reader] = i % 2 === 0 ? [b, a] : [a, b];
      // The reader has just answered this filter; the writer changes what it admits.
      expect(await filtered(reader)).toEqual([]);
      const on = await call(writer.app, 'PATCH', '/api/v1/documents/external/night-ext/metadata', { body: { metadata: { shift: 'night' } } });
      expect(on.statusCode, on.body).toBe(200);
      expect(await filtered(reader), `patch ${i}`).toEqual([first.documentId]);
      const res = await call(writer.app, 'POST', INGEST, { body: { embedding: near(960 + i), content: `Night log ${i}.`, metadata: { shift: 'night' } } });
      expect(res.statusCode, res.body).toBe(201);
      const added = res.json().data.document_id as number;
      expect(await filtered(reader), `ingest ${i}`).toEqual([first.documentId, added].sort((x, y) => x - y));
      expect((await call(writer.app, 'DELETE', `/api/v1/documents/internal/${added}`)).statusCode).toBe(200);
      const off = await call(writer.app, 'PATCH', '/api/v1/documents/external/night-ext/metadata', { body: { metadata: { shift: 'day' } } });
      expect(off.statusCode, off.body).toBe(200);
      expect(await filtered(reader), `undo ${i}`).toEqual([]);
    }
  });

  it('stays consistent under concurrent ingests through both instances while searching', async () => {
    const before = new Set(await livePageIds());
    const ingested = new Set<number>();
    const seen = new Set<number>();
    let writing = true;

    // Searches running through both instances the whole time: no duplicate in an answer (see
    // search()), and no page missing whose 201 came before the search started.
    const searcher = async (app: TestApp) => {
      let rounds = 0;
      while (writing || rounds < 2) {
        const acknowledged = [...ingested];
        const ids = new Set(await allPageIds(app));
        for (const id of ids) seen.add(id);
        for (const id of before) expect(ids.has(id), `page ${id} from before`).toBe(true);
        for (const id of acknowledged) expect(ids.has(id), `page ${id} acknowledged before the search`).toBe(true);
        rounds++;
      }
      return rounds;
    };
    const writer = async (app: TestApp, other: TestApp, seeds: number[]) => {
      const pages = [];
      for (const seed of seeds) {
        const page = await ingest(app, seed);
        ingested.add(page.pageId);
        // Checked at once through the other instance, while the rest keep writing.
        expect((await topFor(other, seed))?.id, `seed ${seed}`).toBe(page.pageId);
        pages.push(page);
      }
      return pages;
    };

    const searchers = Promise.all([searcher(a), searcher(b), searcher(a), searcher(b)]);
    const written = await Promise.all([
      writer(a, b, Array.from({ length: 15 }, (_, i) => 500 + i)),
      writer(b, a, Array.from({ length: 15 }, (_, i) => 600 + i)),
      writer(a, a, Array.from({ length: 10 }, (_, i) => 700 + i)),
      writer(b, b, Array.from({ length: 10 }, (_, i) => 800 + i)),
    ]);
    writing = false;
    const rounds = await searchers;
    for (const r of rounds) expect(r).toBeGreaterThanOrEqual(2);
    // Nothing was ever found that is not a real page.
    for (const id of seen) expect(before.has(id) || ingested.has(id), `page ${id}`).toBe(true);

    const pages = written.flat();
    expect(pages).toHaveLength(50);
    const live = await livePageIds();
    for (const app of [a, b]) {
      const ids = await allPageIds(app);
      expect(ids.sort((x, y) => x - y)).toEqual(live);
      for (const page of pages) {
        expect(ids.filter((id) => id === page.pageId)).toHaveLength(1);
        expect((await topFor(app, page.seed))?.id).toBe(page.pageId);
      }
    }

    // Concurrent deletes through both instances, searches in between: the deleted pages are
    // gone from both, the others still found once each.
    const doomed = pages.filter((_, i) => i % 3 === 0);
    await Promise.all(
      doomed.map(async (page, i) => {
        const [deleter, other] = i % 2 === 0 ? [a, b] : [b, a];
        const res = await call(deleter.app, 'DELETE', `/api/v1/documents/internal/${page.documentId}`);
        expect(res.statusCode, res.body).toBe(200);
        expect(await allPageIds(other)).not.toContain(page.pageId);
      }),
    );
    const remaining = await livePageIds();
    expect(remaining).toHaveLength(live.length - doomed.length);
    for (const app of [a, b]) {
      expect((await allPageIds(app)).sort((x, y) => x - y)).toEqual(remaining);
      for (const page of doomed) expect((await topFor(app, page.seed))?.id).not.toBe(page.pageId);
    }
  });

  it('sees a delete made straight in the store, outside both services, on the next search', async () => {
    const page = await ingest(a, 900);
    for (const app of [a, b]) expect(await allPageIds(app)).toContain(page.pageId);
    await store1.db.deleteFrom('documents').where('id', '=', page.documentId).execute();
    for (const app of [a, b]) expect(await allPageIds(app)).not.toContain(page.pageId);
  });
});
