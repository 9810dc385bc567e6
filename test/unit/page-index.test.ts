// The page index against a brute-force reference on a real store, on both engines: exact
// hybrid ranking, filters by document, pages without embeddings, and the same answers after
// thousands of pages are deleted (swap-removed rows, compacted slots) and others added; a
// preload, and a close during a load.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import { ScanPool } from '../../src/search/kernel/index.js';
import { KeywordIndex, RANK } from '../../src/search/keyword-index.js';
import { PageIndex, type PageQuery, type RankedPage } from '../../src/search/page-index.js';
import { keywordScore, semanticScore } from '../../src/search/scores.js';
import { parseTsvector } from '../../src/search/tsvector.js';
import { WorkspacePages } from '../../src/search/workspace-pages.js';
import { normalizeVector } from '../../src/search/vectors.js';
import { EmbeddingIngester } from '../../src/documents/ingest-embedding.js';
import { deleteDocuments, insertDocument, insertPages } from '../../src/store/documents.js';
import type { PageSelection } from '../../src/store/pages.js';
import { until } from '../helpers/poll.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';

/** Memory per embedded page: its code, its bits and the code's error bound (its vector is in the index's file). */
const ROW_BYTES = 1552 + 208 + 4;

const WORDS = ['wing', 'flow', 'shock', 'boundary', 'layer', 'heat', 'transfer', 'pressure', 'drag', 'lift', 'nozzle', 'plate'];

/** Page n's text: a few of the words, repeated by n, so pages differ in tf and length. */
function textOf(n: number): string {
  const words: string[] = [];
  for (let i = 0; i < 3 + (n % 7); i++) words.push(WORDS[(n * (i + 3)) % WORDS.length]);
  return `${words.join(' ')} page ${n}.`;
}

describe.each(ENGINES)('page index on %s', (engine) => {
  let store: TestStore;
  let pool: ScanPool;
  let index: PageIndex;
  let workspaceId: number;
  const documents: number[] = [];

  async function addDocuments(from: number, to: number): Promise<void> {
    await store.db.transaction().execute(async (trx) => {
      for (let n = from; n < to; n++) {
        const doc = await insertDocument(trx, {
          workspaceId, externalId: null, filePath: `p/${n}`, fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null,
        });
        documents.push(doc.id);
        const content = textOf(n);
        // Every 10th page has no embedding: keyword search must still find it.
        const embedding = n % 10 === 0 ? null : normalizeVector(hashEmbed(content));
        await insertPages(trx, workspaceId, doc.id, [{ pageNumber: 1, content, embedding, embeddingModel: embedding ? 'test' : null, paragraphs: [] }]);
      }
    });
  }

  /** Every live page, with what the reference needs. */
  async function livePages() {
    const rows = (
      await sql<{ id: number; document_id: number; page_number: number; content: string; tsv: string; has_embedding: boolean }>`
        SELECT id, document_id, page_number, content, tsv::text AS tsv, embedding IS NOT NULL AS has_embedding
        FROM pages WHERE workspace_id = ${workspaceId}
      `.execute(store.db)
    ).rows;
    return rows.map((r) => ({ ...r, id: Number(r.id), document_id: Number(r.document_id) }));
  }

  /** Every candidate with its reference scores, best first (cosines in float64). */
  async function reference(q: PageQuery): Promise<RankedPage[]> {
    const { K1, B, L, SCALE, POWER } = RANK;
    const all: RankedPage[] = [];
    const documents = q.filter ? await q.filter.read() : null;
    const query = await q.vector;
    for (const page of await livePages()) {
      if (documents && !documents.has(page.document_id)) continue;
      const terms = parseTsvector(page.tsv);
      const queryTerms = await q.terms;
      const total = queryTerms.reduce((sum, t) => sum + t.weight, 0);
      let share = 0;
      for (const t of queryTerms) {
        const hit = terms.find((x) => x.lexeme === t.lexeme);
        if (hit) share += ((t.weight / total) * hit.tf * (K1 + 1)) / (hit.tf + K1 * (1 - B + (B * terms.length) / L));
      }
      const r = share > 0 ? (SCALE * share) ** POWER : 0;
      let cosine = 0;
      if (page.has_embedding && query) {
        const v = normalizeVector(hashEmbed(page.content))!;
        cosine = v.reduce((s, x, i) => s + x * query[i], 0);
      }
      const semantic = page.has_embedding ? semanticScore(cosine) : 0;
      const keyword = keywordScore(r);
      const candidate = (page.has_embedding && q.alpha > 0 && query !== null) || (r > 0 && q.alpha < 1);
      if (!candidate) continue;
      all.push({
        pageId: page.id,
        documentId: page.document_id,
        pageNumber: page.page_number,
        content: page.content,
        relevance: q.alpha * semantic + (1 - q.alpha) * keyword,
        semantic,
        keyword,
      });
    }
    return all.filter((p) => p.relevance > q.minRelevance).sort((a, b) => b.relevance - a.relevance || a.pageId - b.pageId);
  }

  async function queryOf(text: string, alpha: number, documents: ReadonlySet<number> | null = null): Promise<PageQuery> {
    return { vector: Promise.resolve(normalizeVector(hashEmbed(text))), terms: index.queryTerms(text), alpha, filter: documents && { key: [...documents].join(','), read: async () => documents }, k: 25, minRelevance: 0 };
  }

  /**
   * The index's top k are the reference's: the same relevance at every rank, and each result's
   * scores those of its page. Pages whose cosines differ only in float32 rounding may swap.
   */
  async function expectReference(q: PageQuery, on: PageIndex = index): Promise<void> {
    const got = await on.search(workspaceId, q);
    const want = await reference(q);
    const byId = new Map(want.map((r) => [r.pageId, r]));
    expect(got).toHaveLength(Math.min(q.k, want.length));
    got.forEach((r, i) => {
      expect(r.relevance).toBeCloseTo(want[i].relevance, 6);
      const page = byId.get(r.pageId)!;
      expect(page).toBeDefined();
      expect(r.relevance).toBeCloseTo(page.relevance, 6);
      expect(r.keyword).toBeCloseTo(page.keyword, 12);
      expect(r.semantic).toBeCloseTo(page.semantic, 6);
      // The page itself, its content read back from the index's content file.
      expect({ documentId: r.documentId, pageNumber: r.pageNumber, content: r.content }).toEqual({
        documentId: page.documentId,
        pageNumber: page.pageNumber,
        content: page.content,
      });
    });
  }

  // Inflections, stop words, words no page has, numbers (each page's own), and hyphenated
  // words whose parts occur only apart (the compound lexeme never does).
  const WORD_PROBES = [...WORDS, 'Flows', 'boundaries', 'layered', 'the', 'and', 'of', 'zebra', 'heat-transfer', 'wing-lift', 'page', '1', '4', '2399', '2300', '...'];

  /** The index knows exactly the words PostgreSQL's full-text match finds on some live page. */
  async function expectKnownWords(): Promise<void> {
    const rows = (
      await sql<{ w: string; known: boolean }>`
        SELECT w, (numnode(plainto_tsquery('english', w)) = 0 OR EXISTS (
          SELECT 1 FROM pages p WHERE p.workspace_id = ${workspaceId} AND p.tsv @@ plainto_tsquery('english', w)
        )) AS known
        FROM unnest(${WORD_PROBES}::text[]) AS w
      `.execute(store.db)
    ).rows;
    const expected = rows.filter((r) => r.known).map((r) => r.w);
    expect(expected.length).toBeGreaterThan(5);
    expect(expected.length).toBeLessThan(WORD_PROBES.length);
    expect([...(await index.knownWords(workspaceId, WORD_PROBES))].sort()).toEqual(expected.sort());
  }

  beforeAll(async () => {
    store = await openTestStore(engine);
    workspaceId = (await store.db.insertInto('workspaces').values({ name: 'index' }).returning('id').executeTakeFirstOrThrow()).id;
    pool = new ScanPool({ threads: 2 });
    index = new PageIndex(store, pool);
    await addDocuments(0, 2200);
  }, 120_000);

  afterAll(async () => {
    await index?.close();
    await pool?.close();
    await store?.close();
  });

  const queries: [string, number][] = [
    ['shock wave', 0],
    ['boundary layer heat', 0.5],
    ['drag lift', 1],
    ['nozzle plate flow', 0.3],
  ];

  it('ranks exactly as the reference, filtered or not', async () => {
    for (const [text, alpha] of queries) {
      await expectReference(await queryOf(text, alpha));
      await expectReference(await queryOf(text, alpha, new Set(documents.filter((_, i) => i % 3 === 1))));
    }
  }, 60_000);

  it('ranks through the codes exactly as a scan of every float vector, bit for bit', async () => {
    // Many pages share their words, hence their vectors: ties and near-ties at every cut.
    const filter = new Set(documents.filter((_, i) => i % 5 === 2));
    let results = 0;
    for (const text of ['shock wave', 'boundary layer heat transfer', 'drag', 'page 17', 'zebra']) {
      for (const alpha of [1, 0.8, 0.5, 0.1]) {
        for (const [k, minRelevance] of [[1, 0], [10, 0], [25, 0.3], [1000, 0]]) {
          for (const documents of [null, filter]) {
            const q = { ...(await queryOf(text, alpha, documents)), k, minRelevance };
            const coded = await index.search(workspaceId, q);
            expect(coded).toEqual(await index.search(workspaceId, { ...q, exact: true }));
            results += coded.length;
          }
        }
      }
    }
    expect(results).toBeGreaterThan(20_000);
  }, 120_000);

  it('gives searches running at once, exact or not, the results each gives alone', async () => {
    // Each reads its rows' vectors and its results' contents on libuv's threads, the others scoring meanwhile.
    const requests: PageQuery[] = [];
    for (const [text, alpha] of queries) {
      for (const exact of [false, true]) requests.push({ ...(await queryOf(text, alpha)), k: 100, exact });
    }
    const alone: RankedPage[][] = [];
    for (const q of requests) alone.push(await index.search(workspaceId, q));
    expect(alone.every((results) => results.length === 100)).toBe(true);
    expect(await Promise.all(requests.map((q) => index.search(workspaceId, q)))).toEqual(alone);
  }, 60_000);

  it('ranks through the codes exactly as the float scan where thousands of cosines lie within the codes\' bounds', async () => {
    // Vectors a common direction plus noise: every cosine with a query near that direction
    // falls in a band narrower than the codes' bounds, so the codes' order is not the floats'.
    const dense = (await store.db.insertInto('workspaces').values({ name: 'dense' }).returning('id').executeTakeFirstOrThrow()).id;
    const random = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5;
    const next = random(7);
    const axis = Float32Array.from({ length: 1536 }, next);
    const near = (spread: number) => normalizeVector(Array.from(axis, (x) => x + spread * next()))!;
    await store.db.transaction().execute(async (trx) => {
      for (let n = 0; n < 3000; n++) {
        const doc = await insertDocument(trx, { workspaceId: dense, externalId: null, filePath: `d/${n}`, fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null });
        const embedding = near(n % 3 === 0 ? 0.3 : 0.8);
        await insertPages(trx, dense, doc.id, [{ pageNumber: 1, content: `dense ${n}`, embedding, embeddingModel: 'test', paragraphs: [] }]);
      }
    });
    // An index of its own, so that the other tests' index holds only their workspace.
    const own = new PageIndex(store, pool);
    try {
      for (const spread of [0.3, 0.8, 2]) {
        for (const k of [1, 10, 100]) {
          const q: PageQuery = { vector: Promise.resolve(near(spread)), terms: Promise.resolve([]), alpha: 1, filter: null, k, minRelevance: 0 };
          const coded = await own.search(dense, q);
          expect(coded).toHaveLength(k);
          expect(coded).toEqual(await own.search(dense, { ...q, exact: true }));
        }
      }
    } finally {
      await own.close();
    }
  }, 120_000);

  it('knows the words a full-text match finds on some page', async () => {
    await expectKnownWords();
    // '2399' is on no page yet; it is known once its page is.
    expect(await index.knownWords(workspaceId, ['2399'])).toEqual(new Set());
  });

  it('ranks a hybrid as the reference whether its lexemes arrive before or after the scan', async () => {
    for (const [text, alpha] of queries) {
      const early = await queryOf(text, alpha);
      const terms = await early.terms;
      // Lexemes that arrive long after the scan: the hybrid ranks from its copy of the cosines.
      const late = new Promise<typeof terms>((resolve) => setTimeout(() => resolve(terms), 50));
      await expectReference({ ...early, terms: late });
      await expectReference({ ...early, terms: Promise.resolve(terms) });
    }
  }, 60_000);

  it('answers as the reference after most pages are deleted and others added', async () => {
    const doomed = documents.filter((_, i) => i % 4 !== 0);
    for (let i = 0; i < doomed.length; i += 500) await deleteDocuments(store.db, workspaceId, doomed.slice(i, i + 500));
    documents.splice(0, documents.length, ...documents.filter((_, i) => i % 4 === 0));
    await addDocuments(2200, 2400);
    for (const [text, alpha] of queries) {
      await expectReference(await queryOf(text, alpha));
      await expectReference(await queryOf(text, alpha, new Set(documents.filter((_, i) => i % 2 === 0))));
    }
    // Words of deleted pages only ('1') are no longer known; those of new pages ('2399') are.
    await expectKnownWords();
    expect(await index.knownWords(workspaceId, ['1', '4', '2399'])).toEqual(new Set(['4', '2399']));
    const live = await livePages();
    const memory = index.memory();
    expect(memory.pages).toBe(live.length);
    expect(memory.vectorBytes / ROW_BYTES).toBe(live.filter((p) => p.has_embedding).length);
  }, 120_000);

  it('loads a workspace before its first search when preloaded, and a close stops a load under way', async () => {
    const warm = new PageIndex(store, pool);
    try {
      await warm.preload([workspaceId]);
      expect(warm.memory()).toMatchObject({ workspaces: 1, loading: 0, pages: (await livePages()).length });
      for (const [text, alpha] of queries) await expectReference(await queryOf(text, alpha), warm);
    } finally {
      await warm.close();
    }
    const closing = new PageIndex(store, pool);
    const preloading = closing.preload([workspaceId]);
    // Once the query lexicon is read, the load starts; it has more than one batch to read.
    await until(() => Promise.resolve(closing.memory().loading), (loading) => loading === 1);
    await closing.close();
    await preloading;
    expect(closing.memory()).toMatchObject({ workspaces: 0, loading: 0 });
    // A closed index loads nothing more: a preload returns at once, a search's load fails.
    await closing.preload([workspaceId]);
    expect(closing.memory()).toMatchObject({ workspaces: 0, loading: 0 });
    await expect(closing.search(workspaceId, await queryOf('shock wave', 0.5))).rejects.toThrow(/closed during a load/);
  }, 120_000);

  it('lets writes through while a workspace loads, and answers as the reference with them', async () => {
    const fresh = new PageIndex(store, pool);
    try {
      expect((await livePages()).length).toBeGreaterThan(500); // more than one batch of the load
      const first = fresh.search(workspaceId, await queryOf('shock wave', 0.5));
      // The load has sent its first statement; these wait for a statement of it, not for all of it.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const doomed = documents.filter((_, i) => i % 5 === 0);
      await deleteDocuments(store.db, workspaceId, doomed);
      const loadedMeanwhile = fresh.memory().workspaces;
      documents.splice(0, documents.length, ...documents.filter((_, i) => i % 5 !== 0));
      await addDocuments(2400, 2450);
      // PGlite is one session, which a load in one transaction held until its end.
      if (engine === 'pglite') expect(loadedMeanwhile).toBe(0);
      await first;
      for (const [text, alpha] of queries) await expectReference(await queryOf(text, alpha), fresh);
      const live = await livePages();
      expect(fresh.memory().pages).toBe(live.length);
    } finally {
      await fresh.close();
    }
  }, 120_000);

  it('adds pages without waiting for a search in flight, which ranks the pages its scan began with', async () => {
    const text = 'boundary layer heat';
    // Caught up first: a deletion still to apply would wait for the search in flight.
    await index.search(workspaceId, await queryOf(text, 0.5));
    const slow = await queryOf(text, 0.5);
    const terms = await slow.terms;
    const before = await reference(slow);
    // A hybrid whose lexemes arrive long after its scan: it holds the index until they do.
    let release!: () => void;
    const late = new Promise<typeof terms>((resolve) => (release = () => resolve(terms)));
    const inFlight = index.search(workspaceId, { ...slow, terms: late });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Pages 2451-2459, each with an embedding and the query's words.
    await addDocuments(2451, 2460);
    let settled = false;
    void inFlight.finally(() => (settled = true));
    // This search catches up with the new pages and answers while the first still waits.
    await expectReference(await queryOf(text, 0.5));
    expect(settled).toBe(false);
    release();
    const got = await inFlight;
    expect(got.map((r) => r.pageId)).toEqual(before.slice(0, slow.k).map((r) => r.pageId));
    got.forEach((r, i) => expect(r.relevance).toBeCloseTo(before[i].relevance, 6));
  }, 60_000);

  it('adds the pages of a large catch-up a slice at a time, other work running between the slices', async () => {
    await index.search(workspaceId, await queryOf('boundary layer', 0.5));
    await addDocuments(5000, 5600);
    // A turn counter that runs only when the thread is free between tasks.
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const slices: { pages: number; turns: number }[] = [];
    const original = WorkspacePages.prototype.addAll;
    const addAll = vi.spyOn(WorkspacePages.prototype, 'addAll').mockImplementation(function (this: WorkspacePages, pages) {
      slices.push({ pages: pages.length, turns });
      original.call(this, pages);
    });
    try {
      await expectReference(await queryOf('boundary layer', 0.5));
    } finally {
      addAll.mockRestore();
      counting = false;
    }
    expect(slices.reduce((n, s) => n + s.pages, 0)).toBe(600);
    expect(Math.max(...slices.map((s) => s.pages))).toBeLessThanOrEqual(100);
    for (let i = 1; i < slices.length; i++) expect(slices[i].turns).toBeGreaterThan(slices[i - 1].turns);
  }, 60_000);

  it('ranks as the reference while pages are added and removed between its scan and its catch-up', async () => {
    const text = 'nozzle plate flow';
    await addDocuments(2460, 2470);
    await index.search(workspaceId, await queryOf(text, 0.5)); // saw changes: the next search scans early
    const score = vi.spyOn(pool, 'score');
    try {
      const held = index.memory().vectorBytes / ROW_BYTES;
      await addDocuments(2470, 2480);
      await expectReference(await queryOf(text, 0.5));
      // Only the rows added after the early scan were scored again.
      expect(score.mock.calls.some(([, , rows]) => rows?.[0] === held && rows.length === 9)).toBe(true);
      score.mockClear();
      // A removal moves rows: the early scan is dropped and the caught-up index scanned whole.
      await deleteDocuments(store.db, workspaceId, documents.splice(-3));
      await addDocuments(2480, 2482);
      await expectReference(await queryOf(text, 0.5));
      await expectReference(await queryOf(text, 1));
      expect(score.mock.calls.filter(([matrix, , rows]) => matrix.layout.kind === 'int8' && rows && rows.length < 20 && rows[0] >= held)).toEqual([]);
    } finally {
      score.mockRestore();
    }
  }, 60_000);

  it.runIf(engine === 'postgres')('adds pages without waiting for a search in flight while a transaction elsewhere holds the change feed back', async () => {
    const text = 'wing flow';
    let endTransaction!: () => void;
    const open = new Promise<void>((resolve) => (endTransaction = resolve));
    let started!: () => void;
    const holding = new Promise<void>((resolve) => (started = resolve));
    // Another session's transaction with an id: every catch-up reads the feed again from before it.
    const holder = store.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_current_xact_id()`.execute(trx);
      started();
      await open;
    });
    try {
      await holding;
      await deleteDocuments(store.db, workspaceId, documents.splice(-2));
      await expectReference(await queryOf(text, 0.5)); // applies the deletions
      const slow = await queryOf(text, 0.5);
      const terms = await slow.terms;
      let release!: () => void;
      const late = new Promise<typeof terms>((resolve) => (release = () => resolve(terms)));
      const inFlight = index.search(workspaceId, { ...slow, terms: late });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await addDocuments(2600, 2605);
      // Its catch-up sees the deletions again, of pages it no longer holds: nothing to wait for.
      const next = index.search(workspaceId, await queryOf(text, 0.5));
      const waited = await Promise.race([next.then(() => false), new Promise((resolve) => setTimeout(() => resolve(true), 10_000))]);
      release();
      await inFlight;
      expect(waited).toBe(false);
      await expectReference(await queryOf(text, 0.5));
    } finally {
      endTransaction();
      await holder;
    }
  }, 60_000);

  it.runIf(engine === 'pglite')('holds the pages of documents ingested from embeddings as their write commits, and stays exact under deletions', async () => {
    const reads: PageSelection[] = [];
    const watched = new PageIndex({ ...store, readPages: (selection) => (reads.push(selection), store.readPages(selection)) }, pool);
    const ingester = EmbeddingIngester.forStore(store);
    const ingest = (n: number) => ingester.ingest(workspaceId, { content: textOf(n), embedding: Array.from(hashEmbed(textOf(n))) });
    try {
      await expectReference(await queryOf('drag lift', 0.5), watched); // loaded and caught up
      const pagesBefore = watched.memory().pages;
      reads.length = 0;
      const receipts = await Promise.all([2500, 2501, 2502].map(ingest));
      documents.push(...receipts.map((r) => r.document_id));
      // Held before the ingests were answered, without reading them back.
      expect(watched.memory().pages).toBe(pagesBefore + 3);
      for (const [text, alpha] of queries) await expectReference(await queryOf(text, alpha), watched);
      expect(reads).toEqual([]);
      // Ingests, deletions of documents just ingested and searches, all at once.
      const searches: Promise<unknown>[] = [];
      const deleted: Promise<unknown>[] = [];
      for (let n = 2503; n < 2563; n++) {
        const written = ingest(n);
        if (n % 3 === 0) deleted.push(written.then((r) => deleteDocuments(store.db, workspaceId, [r.document_id])));
        else documents.push((await written).document_id);
        if (n % 4 === 0) searches.push(queryOf('wing flow', 0.5).then((q) => watched.search(workspaceId, q)));
      }
      await Promise.all([...searches, ...deleted]);
      for (const [text, alpha] of queries) await expectReference(await queryOf(text, alpha), watched);
      expect(watched.memory().pages).toBe((await livePages()).length);
    } finally {
      await watched.close();
    }
  }, 60_000);

  it('ranks by keyword rank before the query is embedded, and scores the results from their vectors as ranked', async () => {
    // A workspace of its own: its best page is deleted, and its rows moved, while the query is embedded.
    const own = (await store.db.insertInto('workspaces').values({ name: 'keyword first' }).returning('id').executeTakeFirstOrThrow()).id;
    const ids: number[] = [];
    await store.db.transaction().execute(async (trx) => {
      for (let n = 0; n < 300; n++) {
        const doc = await insertDocument(trx, { workspaceId: own, externalId: null, filePath: `k/${n}`, fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null });
        ids.push(doc.id);
        const content = textOf(n);
        await insertPages(trx, own, doc.id, [{ pageNumber: 1, content, embedding: normalizeVector(hashEmbed(content)), embeddingModel: 'test', paragraphs: [] }]);
      }
    });
    const text = 'shock wave';
    const ready = await queryOf(text, 0);
    const before = await index.search(own, ready);
    expect(before.length).toBeGreaterThan(5);
    let embed!: (vector: Float32Array | null) => void;
    const best = vi.spyOn(KeywordIndex.prototype, 'best');
    try {
      const pending = index.search(own, { ...ready, vector: new Promise((resolve) => (embed = resolve)) });
      await until(async () => best.mock.calls.length, (calls) => calls > 0);
      await deleteDocuments(store.db, own, [before[0].documentId, ids[0]]);
      // Another search catches up: the removals move rows, the last ones into the holes.
      expect((await index.search(own, ready)).map((r) => r.pageId)).not.toContain(before[0].pageId);
      embed(await ready.vector);
      expect(await pending).toEqual(before);
    } finally {
      best.mockRestore();
    }
  }, 60_000);
});
