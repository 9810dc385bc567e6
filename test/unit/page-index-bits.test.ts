// The page index with its first level, the bits, scanned before the codes (the threshold
// lowered so that a few thousand pages use it): on a clustered set like real embeddings and an
// isotropic one, random queries at alpha 1, hybrid, filtered, with min_relevance and top_k up
// to 1000 find what `exact: true` finds (recall within the bits' confidence), and every score
// returned is the exact one, bit for bit.
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ScanPool } from '../../src/search/kernel/index.js';
import { PageIndex, type PageQuery, type RankedPage } from '../../src/search/page-index.js';
import { normalizeVector } from '../../src/search/vectors.js';
import { deleteDocuments, insertDocument, insertPages } from '../../src/store/documents.js';
import { openTestStore, type TestStore } from '../helpers/stores.js';

const DIMS = 1536;
const PAGES = 3000;
const WORDS = ['wing', 'flow', 'shock', 'boundary', 'layer', 'heat', 'transfer', 'pressure', 'drag', 'lift', 'nozzle', 'plate'];

/** A seeded generator of standard normal numbers (Box-Muller on an LCG). */
function normals(seed: number): () => number {
  let state = seed;
  const uniform = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) + 1) / (2 ** 31 + 1);
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

type SetKind = 'clustered' | 'isotropic';

/**
 * Vectors of a set: clustered, a direction all share, one of 32 centres and noise falling off
 * across dimensions (cosines of about 0.45 between clusters, 0.75 within); isotropic, normal
 * coordinates (every cosine near 0, the bits' worst case).
 */
function vectorsOf(kind: SetKind, seed: number): () => Float32Array {
  const next = normals(seed);
  const setup = normals(99);
  const shared = Array.from({ length: DIMS }, setup);
  const centres = Array.from({ length: 32 }, () => Array.from({ length: DIMS }, setup));
  const sharedNorm = Math.hypot(...shared);
  return () => {
    if (kind === 'isotropic') return normalizeVector(Array.from({ length: DIMS }, next))!;
    const centre = centres[Math.floor(Math.abs(next() * 1e6)) % centres.length];
    const centreNorm = Math.hypot(...centre);
    return normalizeVector(
      Array.from({ length: DIMS }, (_, j) => shared[j] / sharedNorm + (0.8 * centre[j]) / centreNorm + (0.25 / Math.sqrt(j + 1)) * next()),
    )!;
  };
}

describe('page index with the bits first, on pglite', () => {
  let store: TestStore;
  let pool: ScanPool;
  let index: PageIndex;
  const workspaces = new Map<SetKind, { id: number; documents: number[] }>();

  beforeAll(async () => {
    store = await openTestStore('pglite');
    pool = new ScanPool({ threads: 2 });
    index = new PageIndex(store, pool, os.tmpdir(), null, { bitsMinRows: 1000 });
    for (const kind of ['clustered', 'isotropic'] as const) {
      const id = (await store.db.insertInto('workspaces').values({ name: kind }).returning('id').executeTakeFirstOrThrow()).id;
      const vector = vectorsOf(kind, kind === 'clustered' ? 1 : 2);
      const documents: number[] = [];
      await store.db.transaction().execute(async (trx) => {
        for (let n = 0; n < PAGES; n++) {
          const doc = await insertDocument(trx, { workspaceId: id, externalId: null, filePath: `p/${n}`, fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null });
          documents.push(doc.id);
          const content = `${WORDS[n % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]} page ${n}`;
          await insertPages(trx, id, doc.id, [{ pageNumber: 1, content, embedding: vector(), embeddingModel: 'test', paragraphs: [] }]);
        }
      });
      workspaces.set(kind, { id, documents });
    }
  }, 300_000);

  afterAll(async () => {
    await index?.close();
    await pool?.close();
    await store?.close();
  });

  it.each(['clustered', 'isotropic'] as const)('finds what the exact scan finds on the %s set, every score the exact one', async (kind) => {
    const { id, documents } = workspaces.get(kind)!;
    const half = new Set(documents.filter((_, i) => i % 2 === 0));
    const queries = vectorsOf(kind, 7);
    const scans = vi.spyOn(pool, 'scoreWith');
    let wanted = 0;
    let found = 0;
    let compared = 0;
    try {
      for (let trial = 0; trial < 24; trial++) {
        const vector = queries();
        const text = `${WORDS[trial % WORDS.length]} ${WORDS[(trial * 5) % WORDS.length]}`;
        const alpha = [1, 1, 0.5, 0.8][trial % 4];
        const k = [10, 100, 1, 1000][trial % 4];
        const minRelevance = trial % 6 === 5 ? 0.3 : 0;
        const filter = trial % 3 === 2 ? { key: `half-${kind}`, read: async () => half } : null;
        const q: PageQuery = { vector: Promise.resolve(vector), terms: index.queryTerms(text), alpha, filter, k, minRelevance };
        const got = await index.search(id, q);
        const exact = await index.search(id, { ...q, exact: true });
        // Every page's exact scores, to judge results the exact top k does not hold.
        const all = new Map<number, RankedPage>((await index.search(id, { ...q, k: PAGES, minRelevance: -1, exact: true })).map((r) => [r.pageId, r]));
        const exactIds = new Set(exact.map((r) => r.pageId));
        wanted += exact.length;
        found += got.filter((r) => exactIds.has(r.pageId)).length;
        expect(got.length).toBe(exact.length);
        for (const r of got) {
          const reference = all.get(r.pageId)!;
          expect([r.relevance, r.semantic, r.keyword]).toEqual([reference.relevance, reference.semantic, reference.keyword]);
          expect(r.relevance).toBeGreaterThan(minRelevance);
          compared++;
        }
      }
      // The bits were scanned (and at alpha 1 without a filter, first).
      expect(scans.mock.calls.filter(([matrix]) => matrix.layout.kind === 'bits').length).toBeGreaterThanOrEqual(12);
    } finally {
      scans.mockRestore();
    }
    expect(compared).toBeGreaterThan(1000);
    expect(found / wanted).toBeGreaterThanOrEqual(kind === 'clustered' ? 0.995 : 0.99);
  }, 300_000);

  it('scans a repeated filter spread over the blocks from a copy of its rows, with the same results', async () => {
    const { id, documents } = workspaces.get('clustered')!;
    // Every other page: each block of 32 rows holds 16 of the filter's.
    const every = new Set(documents.filter((_, i) => i % 2 === 1));
    const queries = vectorsOf('clustered', 13);
    const scans = vi.spyOn(pool, 'scoreWith');
    try {
      for (let trial = 0; trial < 6; trial++) {
        const vector = queries();
        const q: PageQuery = { vector: Promise.resolve(vector), terms: index.queryTerms('wing flow'), alpha: trial % 2 === 0 ? 1 : 0.5, filter: { key: 'every-other', read: async () => every }, k: 20, minRelevance: 0 };
        const got = await index.search(id, q);
        const exact = await index.search(id, { ...q, exact: true });
        expect(got.map((r) => [r.pageId, r.relevance, r.semantic, r.keyword])).toEqual(exact.map((r) => [r.pageId, r.relevance, r.semantic, r.keyword]));
        expect(got.every((r) => every.has(r.documentId))).toBe(true);
        // The copy is made in slices after the second search.
        for (let turn = 0; turn < 5; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const bitScans = scans.mock.calls.filter(([matrix]) => matrix.layout.kind === 'bits');
      // The first two searches scan the filter's rows in the workspace's bits, the rest the copy, whole.
      expect(bitScans.map(([matrix, , rows]) => (rows ? `rows ${rows.length}` : `all ${matrix.rows}`))).toEqual([
        'rows 1500',
        'rows 1500',
        ...Array(4).fill('all 1500'),
      ]);
    } finally {
      scans.mockRestore();
    }
  }, 300_000);

  it('gives hybrid searches running at once the results each gives alone', async () => {
    // Each ranks its keyword hits while its scan runs; another's ranking reuses the keyword index's buffers meanwhile.
    const { id } = workspaces.get('clustered')!;
    const queries = vectorsOf('clustered', 17);
    const requests: PageQuery[] = Array.from({ length: 8 }, (_, i) => ({
      vector: Promise.resolve(queries()),
      terms: index.queryTerms(`${WORDS[i % WORDS.length]} ${WORDS[(i * 5 + 3) % WORDS.length]}`),
      alpha: 0.5,
      filter: null,
      k: 10,
      minRelevance: 0,
    }));
    const alone: RankedPage[][] = [];
    for (const q of requests) alone.push(await index.search(id, q));
    expect(await Promise.all(requests.map((q) => index.search(id, q)))).toEqual(alone);
  }, 300_000);

  it('finds what the exact scan finds after pages are swap-removed across blocks of bits', async () => {
    // After the tests above: every third page goes, the last rows moving into the holes.
    const { id, documents } = workspaces.get('isotropic')!;
    await deleteDocuments(store.db, id, documents.filter((_, i) => i % 3 === 1));
    const queries = vectorsOf('isotropic', 11);
    let wanted = 0;
    let found = 0;
    for (let trial = 0; trial < 12; trial++) {
      const q: PageQuery = { vector: Promise.resolve(queries()), terms: Promise.resolve([]), alpha: 1, filter: null, k: 10, minRelevance: 0 };
      const got = await index.search(id, q);
      const exact = new Map((await index.search(id, { ...q, k: PAGES, exact: true })).map((r) => [r.pageId, r]));
      const top = [...exact.values()].slice(0, 10).map((r) => r.pageId);
      wanted += top.length;
      found += got.filter((r) => top.includes(r.pageId)).length;
      for (const r of got) expect(r.semantic).toBe(exact.get(r.pageId)!.semantic);
    }
    expect(found / wanted).toBeGreaterThanOrEqual(0.99);
  }, 300_000);
});
