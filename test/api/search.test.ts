// Hybrid page search over HTTP, on both engines: the scoring rules checked numerically
// against reference scores computed here (cosines in float64, full-text ranks from SQL),
// ordering and cut-offs, absolute scores, freshness after ingest and delete, workspace
// isolation, filters under every alpha, validation, authentication and the response shape;
// the index loaded at start-up (or at the first search with FOLIO_INDEX_PRELOAD=off).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lexemeEmbed } from '../../src/providers/embeddings/lexeme-hashing.js';
import { RANK } from '../../src/search/keyword-index.js';
import { missingWordCount } from '../../src/text/word-weight.js';
import { until } from '../helpers/poll.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';

const SEARCH = '/api/v1/documents/search/pages';
const INGEST = '/api/v1/documents/ingest/embedding';
const RESULT_KEYS = ['content', 'document_id', 'id', 'keyword_score', 'page_number', 'relevance', 'semantic_score'];

interface SearchResult {
  content: string;
  document_id: number;
  id: number;
  page_number: number;
  relevance: number;
  semantic_score: number;
  keyword_score: number;
}

interface SearchData {
  results: SearchResult[];
  optimized_query: string;
  optimized_metadata: Record<string, unknown>;
}

interface SearchBody {
  query?: string | null;
  embedding?: number[] | null;
  alpha?: number;
  top_k?: number;
  min_relevance?: number;
  exact?: boolean;
  metadata_filter?: Record<string, unknown>;
  created_at_filter?: Record<string, unknown>;
  updated_at_filter?: Record<string, unknown>;
}

interface Ingested {
  documentId: number;
  pageId: number;
}

interface Expected {
  id: number;
  documentId: number;
  relevance: number;
  semantic: number;
  keyword: number;
}

/** Reference cosine: float64 dot product of the two vectors, each normalised. */
function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

const embed = (text: string): number[] => Array.from(lexemeEmbed(text));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The whole second after `iso`, as the filter syntax writes it (UTC, no zone). */
const nextSecond = (iso: string) => new Date(Math.floor(Date.parse(iso) / 1000) * 1000 + 1000).toISOString().slice(0, 19);

describe.each(ENGINES)('page search on %s', (engine) => {
  let t: TestApp;
  /** Embedding each document was ingested with, by document id (every ingest goes through ingest()). */
  const embeddings = new Map<number, number[]>();

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(async () => {
    await t.close();
  });

  async function ingest(
    content: string,
    options: { embedding?: number[]; metadata?: Record<string, unknown>; external_id?: string; key?: string } = {},
  ): Promise<Ingested> {
    const embedding = options.embedding ?? embed(content);
    const res = await call(t.app, 'POST', INGEST, {
      key: options.key ?? KEYS.write,
      body: { embedding, content, metadata: options.metadata, external_id: options.external_id },
    });
    expect(res.statusCode, res.body).toBe(201);
    const documentId = res.json().data.document_id as number;
    embeddings.set(documentId, embedding);
    const page = await t.store.db.selectFrom('pages').select('id').where('document_id', '=', documentId).executeTakeFirstOrThrow();
    return { documentId, pageId: Number(page.id) };
  }

  async function searchAs(key: string, body: unknown): Promise<SearchData> {
    const res = await call(t.app, 'POST', SEARCH, { key, body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as SearchData;
  }
  const search = (body: SearchBody) => searchAs(KEYS.read, body);

  async function workspaceId(name: string): Promise<number> {
    const row = await t.store.db.selectFrom('workspaces').select('id').where('name', '=', name).executeTakeFirstOrThrow();
    return row.id;
  }

  /** Live pages of a workspace, with their document's metadata and timestamps. */
  async function livePages(workspace = 'alpha') {
    const ws = await workspaceId(workspace);
    const rows = await t.store.db
      .selectFrom('pages as p')
      .innerJoin('documents as d', 'd.id', 'p.document_id')
      .select(['p.id', 'p.document_id', 'd.metadata', 'd.created_at', 'd.updated_at'])
      .where('p.workspace_id', '=', ws)
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      documentId: Number(r.document_id),
      metadata: r.metadata as Record<string, unknown>,
      createdAt: new Date(r.created_at as unknown as string | Date).getTime(),
      updatedAt: new Date(r.updated_at as unknown as string | Date).getTime(),
    }));
  }
  type LivePage = Awaited<ReturnType<typeof livePages>>[number];

  /**
   * The full-text rank r of every page of the workspace that matches any word of `query`,
   * computed with the service's rank expression ts_rank(tsv, query, 16) * 50 over an OR query.
   */
  /**
   * The keyword rank r of every page matching a query lexeme, computed here from each page's
   * whole tsvector and the prior's frequencies, with the formula of docs/internals/search.md.
   */
  async function keywordReference(query: string, workspace = 'alpha'): Promise<Map<number, number>> {
    const db = t.store.db;
    const terms = (
      await sql<{ lexeme: string; qtf: number; frequency: string | null }>`
        SELECT u.lexeme, array_length(u.positions, 1) AS qtf, w.frequency::text
        FROM unnest(to_tsvector('english', ${query})) u LEFT JOIN word_prior w ON w.lexeme = u.lexeme
      `.execute(db)
    ).rows;
    if (terms.length === 0) return new Map();
    const { K1, B, L, PRIOR_MASS, SCALE, POWER } = RANK;
    const weight = new Map(terms.map((w) => [w.lexeme, w.qtf * Math.log(1 + PRIOR_MASS / (w.frequency === null ? missingWordCount(w.lexeme) : Number(w.frequency)))]));
    const ws = await workspaceId(workspace);
    const matches = (
      await sql<{ id: number; lexeme: string; tf: number; len: number }>`
        SELECT p.id, u.lexeme, array_length(u.positions, 1) AS tf, length(p.tsv) AS len
        FROM pages p, unnest(p.tsv) u
        WHERE p.workspace_id = ${ws} AND u.lexeme = ANY(${terms.map((w) => w.lexeme)}::text[])
      `.execute(db)
    ).rows;
    // Each page's share of the query's weight (all of its lexemes, found or not), then r.
    const total = [...weight.values()].reduce((a, b) => a + b, 0);
    const shares = new Map<number, number>();
    for (const m of matches) {
      const share = ((weight.get(m.lexeme)! / total) * m.tf * (K1 + 1)) / (m.tf + K1 * (1 - B + (B * m.len) / L));
      shares.set(Number(m.id), (shares.get(Number(m.id)) ?? 0) + share);
    }
    return new Map([...shares].map(([id, share]) => [id, (SCALE * share) ** POWER]));
  }

  /**
   * Reference scores of every candidate page (under the filter `allowed`): the pages with
   * an embedding, and at alpha 0 only those matching a query word.
   */
  async function referenceScores(body: SearchBody, allowed: (page: LivePage) => boolean = () => true): Promise<Map<number, Expected>> {
    const alpha = body.alpha ?? 1;
    const query = body.query ?? null;
    const queryVector = body.embedding ?? (query !== null ? embed(query) : null);
    const ranks = query !== null ? await keywordReference(query) : new Map<number, number>();
    const out = new Map<number, Expected>();
    for (const page of await livePages()) {
      if (!allowed(page)) continue;
      const stored = embeddings.get(page.documentId);
      expect(stored, `embedding of document ${page.documentId} is known`).toBeDefined();
      const rank = ranks.get(page.id);
      if (alpha === 0 && rank === undefined) continue;
      const semantic = queryVector ? Math.max(0, cosine(queryVector, stored!)) : 0;
      const keyword = rank !== undefined && rank > 0 ? rank / (rank + 1) : 0;
      out.set(page.id, { id: page.id, documentId: page.documentId, relevance: alpha * semantic + (1 - alpha) * keyword, semantic, keyword });
    }
    return out;
  }

  /**
   * Checks every scoring rule on every result of `data` against the reference, the order,
   * and that the results are the reference's top k: no page scoring clearly above the
   * last result (or above min_relevance when fewer than k came back) is missing.
   */
  async function checkSearch(body: SearchBody, data: SearchData, allowed?: (page: LivePage) => boolean): Promise<void> {
    const alpha = body.alpha ?? 1;
    const k = body.top_k ?? 10;
    const min = body.min_relevance ?? 0;
    const reference = await referenceScores(body, allowed);
    const { results } = data;
    expect(results.length).toBeLessThanOrEqual(k);
    expect(new Set(results.map((r) => r.id)).size, 'no page twice').toBe(results.length);
    for (const r of results) {
      expect(Object.keys(r).sort()).toEqual(RESULT_KEYS);
      for (const score of [r.relevance, r.semantic_score, r.keyword_score]) {
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
      }
      expect(Math.abs(r.relevance - (alpha * r.semantic_score + (1 - alpha) * r.keyword_score))).toBeLessThan(1e-9);
      expect(r.relevance).toBeGreaterThan(min);
      const ref = reference.get(r.id);
      expect(ref, `page ${r.id} is a candidate (its workspace, the filter, a keyword match at alpha 0)`).toBeDefined();
      expect(r.document_id).toBe(ref!.documentId);
      expect(Math.abs(r.semantic_score - ref!.semantic), `semantic_score of page ${r.id}`).toBeLessThan(1e-5);
      if (ref!.keyword === 0) expect(r.keyword_score, `keyword_score of page ${r.id}, which matches no query term`).toBe(0);
      else expect(Math.abs(r.keyword_score - ref!.keyword), `keyword_score of page ${r.id}`).toBeLessThan(1e-7);
    }
    for (let i = 1; i < results.length; i++) {
      const [a, b] = [results[i - 1], results[i]];
      expect(a.relevance > b.relevance || (a.relevance === b.relevance && a.id < b.id), `order of pages ${a.id} and ${b.id}`).toBe(true);
    }
    const cutoff = results.length === k ? results[k - 1].relevance : min;
    const returned = new Set(results.map((r) => r.id));
    const missing = [...reference.values()].filter((e) => e.relevance > cutoff + 1e-5 && !returned.has(e.id));
    expect(missing, 'pages that rank above the results but were not returned').toEqual([]);
  }

  describe('scoring', () => {
    const QUERY = 'lighthouse keeper lamp';
    let keeper: Ingested;
    let coast: Ingested;
    let museum: Ingested;
    let bakery: Ingested;
    let repeated: Ingested;
    let opposite: Ingested;
    let random: Ingested;

    beforeAll(async () => {
      keeper = await ingest('The lighthouse keeper climbed the spiral stairs every evening to light the lamp.');
      coast = await ingest('A lighthouse stands on the rocky northern coast, its beam visible for miles.');
      museum = await ingest('The keeper of the museum polished brass instruments and old ship lamps.');
      bakery = await ingest('Fresh bread from the village bakery smells wonderful in the morning.');
      repeated = await ingest('Lighthouse, lighthouse, lighthouse: keeper and lamp.');
      // Matches every query word, but its embedding points exactly away from the query's.
      opposite = await ingest('Storm warnings reached the lighthouse keeper before the lamp failed.', {
        embedding: embed(QUERY).map((v) => -v),
      });
      random = await ingest('Quantum computers exploit superposition and entanglement.', { embedding: vector(11) });
      await ingest('Mountain goats climb steep cliffs with surprising ease.');
    });

    it.each([0, 0.25, 0.5, 0.75, 1])('follows every scoring rule for a query at alpha %s', async (alpha) => {
      for (const top_k of [1000, 10, 3]) {
        const body = { query: QUERY, alpha, top_k };
        await checkSearch(body, await search(body));
      }
    });

    it('scores semantic_score as max(0, cosine) and keyword_score as r/(r+1), 0 without a matching term', async () => {
      const data = await search({ query: QUERY, alpha: 0.5, top_k: 1000 });
      await checkSearch({ query: QUERY, alpha: 0.5, top_k: 1000 }, data);
      const byId = new Map(data.results.map((r) => [r.id, r]));
      // cosine -1: semantic 0, relevance from the keywords alone.
      expect(byId.get(opposite.pageId)).toMatchObject({ semantic_score: 0 });
      expect(byId.get(opposite.pageId)!.keyword_score).toBeGreaterThan(0);
      expect(byId.get(opposite.pageId)!.relevance).toBe(0.5 * byId.get(opposite.pageId)!.keyword_score);
      // No query word: keyword 0, relevance from the embedding alone.
      expect(byId.get(bakery.pageId)?.keyword_score ?? 0).toBe(0);
      for (const page of [keeper, coast, museum, repeated]) {
        expect(byId.get(page.pageId)!.keyword_score, `page ${page.pageId}`).toBeGreaterThan(0);
        expect(byId.get(page.pageId)!.semantic_score, `page ${page.pageId}`).toBeGreaterThan(0);
      }
      // Term frequency raises the rank: three "lighthouse" beat one.
      expect(byId.get(repeated.pageId)!.keyword_score).toBeGreaterThan(byId.get(coast.pageId)!.keyword_score);
      // A page with a negative cosine is not returned for a pure semantic search.
      const semantic = await search({ query: QUERY, alpha: 1, top_k: 1000 });
      expect(semantic.results.map((r) => r.id)).not.toContain(opposite.pageId);
    });

    it('scores a search by embedding at alpha 1 (keyword_score 0 without a query)', async () => {
      for (const embedding of [embed('The lighthouse keeper climbed the spiral stairs every evening to light the lamp.'), vector(11), vector(12)]) {
        for (const top_k of [1000, 10, 1]) {
          const body = { embedding, alpha: 1, top_k };
          const data = await search(body);
          await checkSearch(body, data);
          for (const r of data.results) expect(r.keyword_score).toBe(0);
        }
      }
      const own = await search({ embedding: vector(11), top_k: 1 });
      expect(own.results).toHaveLength(1);
      expect(own.results[0].id).toBe(random.pageId);
      expect(own.results[0].semantic_score).toBeCloseTo(1, 5);
      // An embedding scaled by any positive factor is the same direction: same scores.
      const scaled = await search({ embedding: vector(11).map((v) => v * 1000), top_k: 1 });
      expect(scaled.results[0].id).toBe(random.pageId);
      expect(scaled.results[0].semantic_score).toBeCloseTo(1, 5);
    });

    it('returns only keyword matches at alpha 0, every one of them', async () => {
      const data = await search({ query: QUERY, alpha: 0, top_k: 1000 });
      await checkSearch({ query: QUERY, alpha: 0, top_k: 1000 }, data);
      const matching = [...(await keywordReference(QUERY)).keys()].sort((a, b) => a - b);
      expect(data.results.map((r) => r.id).sort((a, b) => a - b)).toEqual(matching);
      expect(matching).toEqual(expect.arrayContaining([keeper.pageId, coast.pageId, museum.pageId, repeated.pageId, opposite.pageId]));
      for (const r of data.results) expect(r.keyword_score).toBeGreaterThan(0);
      expect(data.results.map((r) => r.id)).not.toContain(bakery.pageId);
      expect(data.results.map((r) => r.id)).not.toContain(random.pageId);
      // Semantic scores are reported at alpha 0 too, though they do not count.
      expect(data.results.find((r) => r.id === keeper.pageId)!.semantic_score).toBeGreaterThan(0);
    });

    it('ignores words that match no page and answers an empty list when nothing matches', async () => {
      const body = { query: 'lighthouse zzyzxqwv', alpha: 0, top_k: 1000 };
      const data = await search(body);
      await checkSearch(body, data);
      expect(data.results.length).toBeGreaterThan(0);
      expect((await search({ query: 'zzyzxqwv', alpha: 0 })).results).toEqual([]);
    });

    it('respects top_k: the first k of the full ranking', async () => {
      const all = await search({ query: QUERY, alpha: 0.5, top_k: 1000 });
      expect(all.results.length).toBeGreaterThan(5);
      for (const top_k of [1, 2, 5]) {
        const some = await search({ query: QUERY, alpha: 0.5, top_k });
        expect(some.results).toEqual(all.results.slice(0, top_k));
      }
      const byDefault = await search({ query: QUERY, alpha: 0.5 });
      expect(byDefault.results).toEqual(all.results.slice(0, 10));
    });

    it('returns only results strictly above min_relevance', async () => {
      const all = await search({ query: QUERY, alpha: 0.5, top_k: 1000 });
      const threshold = all.results[2].relevance;
      expect(all.results[1].relevance).toBeGreaterThan(threshold);
      const above = await search({ query: QUERY, alpha: 0.5, top_k: 1000, min_relevance: threshold });
      expect(above.results).toEqual(all.results.filter((r) => r.relevance > threshold));
      expect(above.results.map((r) => r.id)).not.toContain(all.results[2].id);
      await checkSearch({ query: QUERY, alpha: 0.5, top_k: 1000, min_relevance: threshold }, above);
      // The top relevance as the threshold leaves nothing with that relevance.
      const top = await search({ query: QUERY, alpha: 0.5, top_k: 1000, min_relevance: all.results[0].relevance });
      expect(top.results.every((r) => r.relevance > all.results[0].relevance)).toBe(true);
      expect(top.results).toEqual([]);
      expect((await search({ query: QUERY, alpha: 0.5, min_relevance: 1 })).results).toEqual([]);
    });

    it('answers an exact search (every vector scanned) as the default one, bit for bit', async () => {
      const bodies: SearchBody[] = [
        { query: QUERY },
        { query: QUERY, alpha: 0.5, top_k: 1000 },
        { query: QUERY, alpha: 0.3, min_relevance: 0.01 },
        { embedding: embed('harbor pilots and their tugs'), top_k: 3 },
      ];
      for (const body of bodies) {
        const coded = await search(body);
        expect(coded.results.length).toBeGreaterThan(0);
        expect(await search({ ...body, exact: true })).toEqual(coded);
      }
    });

    it('breaks exact ties by the lower page id, also when top_k cuts through them', async () => {
      const content = 'Tidewater marmalade simmered with bergamot peel.';
      const twins = [await ingest(content), await ingest(content), await ingest(content)];
      const ids = twins.map((p) => p.pageId);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      const bodies: SearchBody[] = [
        { query: 'tidewater marmalade bergamot', alpha: 0 },
        { query: 'tidewater marmalade bergamot', alpha: 0.5 },
        { query: 'tidewater marmalade bergamot', alpha: 1 },
        { embedding: embed(content) },
      ];
      for (const body of bodies) {
        const three = await search({ ...body, top_k: 3 });
        expect(three.results.map((r) => r.id), JSON.stringify(body).slice(0, 60)).toEqual(ids);
        expect(new Set(three.results.map((r) => r.relevance)).size).toBe(1);
        const two = await search({ ...body, top_k: 2 });
        expect(two.results.map((r) => r.id)).toEqual(ids.slice(0, 2));
        const one = await search({ ...body, top_k: 1 });
        expect(one.results.map((r) => r.id)).toEqual(ids.slice(0, 1));
        await checkSearch({ ...body, top_k: 1000 }, await search({ ...body, top_k: 1000 }));
      }
    });
  });

  describe('absolute scores', () => {
    it('keeps the scores of a fixed set of pages when unrelated documents come and go', async () => {
      const fixed = [
        await ingest('Zephyr winds cooled the orchard on summer nights.'),
        await ingest('The orchard keeper planted pears along the southern wall.'),
        await ingest('A zephyr is a gentle, mild breeze from the west.'),
      ];
      const doomed = await ingest('Zephyr orchard notes, draft to be deleted.');
      const ids = fixed.map((p) => p.pageId);
      const bodies: SearchBody[] = [
        { query: 'zephyr orchard', alpha: 0, top_k: 1000 },
        { query: 'zephyr orchard', alpha: 0.5, top_k: 1000 },
        { query: 'zephyr orchard', alpha: 1, top_k: 1000 },
        { embedding: embed('zephyr orchard'), top_k: 1000 },
      ];
      const scoresOf = async (body: SearchBody) => {
        const data = await search(body);
        await checkSearch(body, data);
        const byId = new Map(data.results.map((r) => [r.id, r]));
        return ids.map((id) => {
          const r = byId.get(id);
          expect(r, `page ${id} is found for ${JSON.stringify(body).slice(0, 40)}`).toBeDefined();
          return [r!.relevance, r!.semantic_score, r!.keyword_score];
        });
      };
      const before = await Promise.all(bodies.map(scoresOf));

      // Others: some sharing the query words many times (a collection-relative score would move).
      const added: Ingested[] = [];
      for (let i = 0; i < 12; i++) {
        const content =
          i % 3 === 0 ? `Zephyr zephyr orchard orchard zephyr number ${i}.` : `Unrelated note ${i} about invoices, tax forms and paperwork.`;
        added.push(await ingest(content, { embedding: i % 2 === 0 ? embed(content) : vector(500 + i) }));
      }
      expect(await Promise.all(bodies.map(scoresOf))).toEqual(before);

      for (const page of [...added.slice(0, 8), doomed]) {
        const res = await call(t.app, 'DELETE', `/api/v1/documents/internal/${page.documentId}`);
        expect(res.statusCode).toBe(200);
      }
      expect(await Promise.all(bodies.map(scoresOf))).toEqual(before);
    });
  });

  describe('keyword rank', () => {
    const keywordOf = async (query: string, pageId: number) => {
      const data = await search({ query, alpha: 0, top_k: 1000 });
      await checkSearch({ query, alpha: 0, top_k: 1000 }, data);
      return data.results.find((r) => r.id === pageId)?.keyword_score ?? 0;
    };

    it('never lowers r when a query term occurs more often in a page of the same length', async () => {
      // Each page has the same distinct words; only the count of "quokka" grows.
      const pages = [];
      for (let n = 1; n <= 5; n++) pages.push(await ingest(`Island ferry timetable ${'quokka '.repeat(n)}sighting report.`));
      const scores = [];
      for (const page of pages) scores.push(await keywordOf('quokka', page.pageId));
      for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeGreaterThan(scores[i - 1]);
    });

    it('weighs a rare word above a common one by the fixed prior, not by the stored pages', async () => {
      const common = await ingest('Brightwater house ledger entry.');
      const rare = await ingest('Brightwater photosynthesis ledger entry.');
      expect(await keywordOf('house photosynthesis', rare.pageId)).toBeGreaterThan(await keywordOf('house photosynthesis', common.pageId));
      // A word the prior lacks weighs as a rare word (its count estimated from its form), far above a common one.
      const unknown = await ingest('Brightwater zorbulation ledger entry.');
      expect(await keywordOf('zorbulation house', unknown.pageId)).toBeGreaterThan(await keywordOf('zorbulation house', common.pageId));
      expect(await keywordOf('zorbulation photosynthesis', unknown.pageId)).toBeCloseTo(await keywordOf('zorbulation photosynthesis', rare.pageId), 2);
    });

  });

  describe('freshness and isolation', () => {
    it('finds a page in the search right after its 201', async () => {
      for (let i = 0; i < 12; i++) {
        const word = `freshword${'abcdefghijkl'[i]}`;
        const page = await ingest(`A fresh page about ${word} and saxophones.`, { embedding: vector(1000 + i) });
        const semantic = await search({ embedding: vector(1000 + i), top_k: 1 });
        expect(semantic.results.map((r) => r.id), `ingest ${i}`).toEqual([page.pageId]);
        expect(semantic.results[0].semantic_score).toBeCloseTo(1, 5);
        const keyword = await search({ query: word, alpha: 0 });
        expect(keyword.results.map((r) => r.id), `ingest ${i}`).toEqual([page.pageId]);
        const hybrid = await search({ query: word, alpha: 0.5, top_k: 1000 });
        expect(hybrid.results.map((r) => r.id)).toContain(page.pageId);
      }
    });

    it('drops the pages of a document deleted by internal id from the next search', async () => {
      const kept = await ingest('Kept page about oboes and bassoons.', { embedding: vector(1101) });
      for (let i = 0; i < 5; i++) {
        const page = await ingest(`Doomed page about oboes, number ${i}.`, { embedding: vector(1100) });
        expect((await search({ embedding: vector(1100), top_k: 1000 })).results.map((r) => r.id)).toContain(page.pageId);
        const res = await call(t.app, 'DELETE', `/api/v1/documents/internal/${page.documentId}`);
        expect(res.statusCode).toBe(200);
        for (const body of [{ embedding: vector(1100), top_k: 1000 }, { query: 'oboes', alpha: 0, top_k: 1000 }, { query: 'oboes', alpha: 0.5, top_k: 1000 }]) {
          const data = await search(body);
          expect(data.results.map((r) => r.id), JSON.stringify(body).slice(0, 40)).not.toContain(page.pageId);
          expect(data.results.map((r) => r.document_id)).not.toContain(page.documentId);
        }
        expect((await search({ query: 'oboes', alpha: 0 })).results.map((r) => r.id)).toEqual([kept.pageId]);
      }
    });

    it('drops every version deleted by external id with latest_only=false, and only the latest with true', async () => {
      const v1 = await ingest('Xylophone recital programme, first draft.', { embedding: vector(1201), external_id: 'fresh-ext' });
      const v2 = await ingest('Xylophone recital programme, second draft.', { embedding: vector(1202), external_id: 'fresh-ext' });
      const v3 = await ingest('Xylophone recital programme, final.', { embedding: vector(1203), external_id: 'fresh-ext' });
      const found = async () => (await search({ query: 'xylophone', alpha: 0, top_k: 1000 })).results.map((r) => r.id);
      expect((await found()).sort((a, b) => a - b)).toEqual([v1.pageId, v2.pageId, v3.pageId]);

      const latest = await call(t.app, 'DELETE', '/api/v1/documents/external/fresh-ext?latest_only=true');
      expect(latest.json().data.deleted_ids).toEqual([v3.documentId]);
      expect((await found()).sort((a, b) => a - b)).toEqual([v1.pageId, v2.pageId]);
      expect((await search({ embedding: vector(1203), top_k: 1000 })).results.map((r) => r.id)).not.toContain(v3.pageId);
      expect((await search({ embedding: vector(1202), top_k: 1 })).results.map((r) => r.id)).toEqual([v2.pageId]);

      const all = await call(t.app, 'DELETE', '/api/v1/documents/external/fresh-ext?latest_only=false');
      expect(all.json().data.deleted_count).toBe(2);
      expect(await found()).toEqual([]);
      for (const [page, seed] of [[v1, 1201], [v2, 1202]] as const) {
        expect((await search({ embedding: vector(seed), top_k: 1000 })).results.map((r) => r.id)).not.toContain(page.pageId);
        expect((await search({ query: 'xylophone recital', alpha: 0.5, top_k: 1000 })).results.map((r) => r.id)).not.toContain(page.pageId);
      }
    });

    it('keeps workspaces apart', async () => {
      const mine = await ingest('Isolated marimba workshop notes.', { embedding: vector(1301) });
      const theirs = await ingest('Isolated marimba workshop notes.', { embedding: vector(1301), key: KEYS.other });
      const betaDocs = new Set((await livePages('beta')).map((p) => p.documentId));
      expect(betaDocs).toEqual(new Set([theirs.documentId]));

      const bodies: [SearchBody, boolean][] = [
        [{ embedding: vector(1301), top_k: 1000 }, true],
        [{ query: 'marimba workshop', alpha: 0, top_k: 1000 }, true],
        [{ query: 'marimba workshop lighthouse keeper', alpha: 0.5, top_k: 1000 }, true],
        [{ query: 'lighthouse keeper lamp', alpha: 1, top_k: 1000 }, false],
      ];
      for (const [body, findsTheirs] of bodies) {
        const other = await searchAs(KEYS.other, body);
        const label = JSON.stringify(body).slice(0, 50);
        if (findsTheirs) expect(other.results.map((r) => r.id), label).toEqual([theirs.pageId]);
        for (const r of other.results) expect(betaDocs.has(r.document_id), label).toBe(true);
        const own = await search(body);
        expect(own.results.length, label).toBeGreaterThan(0);
        for (const r of own.results) expect(betaDocs.has(r.document_id), label).toBe(false);
        await checkSearch(body, own);
      }
      expect((await search({ embedding: vector(1301), top_k: 1 })).results.map((r) => r.id)).toEqual([mine.pageId]);
      expect((await searchAs(KEYS.other, { query: 'lighthouse', alpha: 0, top_k: 1000 })).results).toEqual([]);
      // Deleting in one workspace does not touch the other's index.
      expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${theirs.documentId}`, { key: KEYS.other })).statusCode).toBe(200);
      expect((await search({ embedding: vector(1301), top_k: 1 })).results.map((r) => r.id)).toEqual([mine.pageId]);
      expect((await searchAs(KEYS.other, { embedding: vector(1301) })).results).toEqual([]);
    });
  });

  describe('filters', () => {
    const QUERY = 'harbor pilot';
    let early: Ingested[];
    let late: Ingested[];
    let createdBoundary: string;
    let updatedBoundary: string;

    beforeAll(async () => {
      const doc = (i: number, team: string, tags: string[]) =>
        ingest(`Harbor pilot log ${i}: guided the vessel past the breakwater.`, {
          metadata: { suite: 'filters', team, n: i, tags, crew: { city: i % 2 === 0 ? 'Oslo' : 'Bergen' } },
          external_id: `harbor-${i}`,
        });
      early = [await doc(0, 'red', ['x']), await doc(1, 'blue', ['x', 'y']), await doc(2, 'red', ['y'])];
      const lastEarly = await call(t.app, 'GET', `/api/v1/documents/internal/${early[2].documentId}`);
      createdBoundary = nextSecond(lastEarly.json().data.created_at);
      await sleep(1100);
      late = [await doc(3, 'blue', ['x']), await doc(4, 'red', ['x', 'y']), await doc(5, 'blue', [])];
      const lastLate = await call(t.app, 'GET', `/api/v1/documents/internal/${late[2].documentId}`);
      updatedBoundary = nextSecond(lastLate.json().data.updated_at);
      await sleep(1100);
      for (const ext of ['harbor-1', 'harbor-4']) {
        const res = await call(t.app, 'PATCH', `/api/v1/documents/external/${ext}/metadata`, { body: { metadata: { reviewed: true } } });
        expect(res.statusCode).toBe(200);
      }
    });

    const boundary = (iso: string) => Date.parse(`${iso}Z`);
    const cases: [string, () => Pick<SearchBody, 'metadata_filter' | 'created_at_filter' | 'updated_at_filter'>, (p: LivePage) => boolean][] = [
      ['metadata equality', () => ({ metadata_filter: { team: 'red' } }), (p) => p.metadata.team === 'red'],
      [
        'metadata operators',
        () => ({ metadata_filter: { suite: 'filters', n: { $gte: 2 }, tags: { $contains: ['x'] } } }),
        (p) => p.metadata.suite === 'filters' && (p.metadata.n as number) >= 2 && (p.metadata.tags as string[]).includes('x'),
      ],
      [
        'a nested path and $or',
        () => ({ metadata_filter: { $or: [{ 'crew.city': 'Oslo' }, { team: 'blue', n: { $lt: 2 } }] } }),
        (p) => (p.metadata.crew as { city?: string } | undefined)?.city === 'Oslo' || (p.metadata.team === 'blue' && (p.metadata.n as number) < 2),
      ],
      ['created_at $gte', () => ({ created_at_filter: { $gte: createdBoundary } }), (p) => p.createdAt >= boundary(createdBoundary)],
      [
        'created_at $lt with metadata',
        () => ({ metadata_filter: { suite: 'filters' }, created_at_filter: { $lt: createdBoundary } }),
        (p) => p.metadata.suite === 'filters' && p.createdAt < boundary(createdBoundary),
      ],
      ['updated_at $gte', () => ({ updated_at_filter: { $gte: updatedBoundary } }), (p) => p.updatedAt >= boundary(updatedBoundary)],
      [
        'all three together',
        () => ({ metadata_filter: { team: 'blue' }, created_at_filter: { $lt: createdBoundary }, updated_at_filter: { $gte: updatedBoundary } }),
        (p) => p.metadata.team === 'blue' && p.createdAt < boundary(createdBoundary) && p.updatedAt >= boundary(updatedBoundary),
      ],
    ];

    it.each(cases)('restricts results to matching documents with %s, at every alpha', async (_name, filters, matches) => {
      const harbor = new Set([...early, ...late].map((p) => p.pageId));
      const expectedHarbor = (await livePages()).filter((p) => harbor.has(p.id) && matches(p)).map((p) => p.id);
      expect(expectedHarbor.length).toBeGreaterThan(0);
      expect(expectedHarbor.length).toBeLessThan(harbor.size);
      const bodies: SearchBody[] = [
        { query: QUERY, alpha: 0, top_k: 1000 },
        { query: QUERY, alpha: 0.5, top_k: 1000 },
        { query: QUERY, alpha: 1, top_k: 1000 },
        { embedding: embed(`Harbor pilot log 0: guided the vessel past the breakwater.`), alpha: 1, top_k: 1000 },
      ];
      for (const base of bodies) {
        const body = { ...base, ...filters() };
        const data = await search(body);
        const ids = data.results.map((r) => r.id);
        const label = JSON.stringify({ ...body, embedding: undefined });
        await checkSearch(body, data, matches);
        // Every matching harbor page is found (they all share the query words), no other one.
        expect(ids.filter((id) => harbor.has(id)).sort((a, b) => a - b), label).toEqual(expectedHarbor.sort((a, b) => a - b));
        const live = new Map((await livePages()).map((p) => [p.id, p]));
        for (const id of ids) expect(matches(live.get(id)!), `${label}: page ${id}`).toBe(true);
        // Without the filter, pages that do not match are found too.
        const unfiltered = (await search(base)).results.map((r) => r.id);
        expect(unfiltered.some((id) => harbor.has(id) && !expectedHarbor.includes(id)), label).toBe(true);
      }
    });

    it('answers a repeated filter afresh after a metadata change, a new document and a deletion', async () => {
      const body = { query: QUERY, alpha: 1, top_k: 1000, metadata_filter: { watch: 'on' } };
      const ids = async () => (await search(body)).results.map((r) => r.document_id).sort((a, b) => a - b);
      expect(await ids()).toEqual([]);
      const patch = await call(t.app, 'PATCH', `/api/v1/documents/external/harbor-0/metadata`, { body: { metadata: { watch: 'on' } } });
      expect(patch.statusCode).toBe(200);
      expect(await ids()).toEqual([early[0].documentId]);
      const added = await ingest('Harbor pilot log 6: a watch kept over the harbor mouth.', { metadata: { watch: 'on' } });
      expect(await ids()).toEqual([early[0].documentId, added.documentId].sort((a, b) => a - b));
      expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${added.documentId}`)).statusCode).toBe(200);
      const unpatch = await call(t.app, 'PATCH', `/api/v1/documents/external/harbor-0/metadata`, { body: { metadata: { watch: 'off' } } });
      expect(unpatch.statusCode).toBe(200);
      expect(await ids()).toEqual([]);
    });

    it('answers nothing when no document matches the filter', async () => {
      for (const body of [
        { query: QUERY, alpha: 0, metadata_filter: { team: 'green' } },
        { query: QUERY, alpha: 0.5, created_at_filter: { $gt: '2999-01-01T00:00:00' } },
        { query: QUERY, alpha: 1, updated_at_filter: { $lt: '2000-01-01T00:00:00' } },
        { embedding: embed(QUERY), metadata_filter: { suite: 'filters', n: { $gt: 100 } } },
      ]) {
        expect((await search(body)).results).toEqual([]);
      }
    });

    const badFilters: [string, Record<string, unknown>, string][] = [
      ['an unknown operator', { metadata_filter: { team: { $near: 1 } } }, 'metadata_filter.team.$near'],
      ['$in without an array', { metadata_filter: { n: { $in: 3 } } }, 'metadata_filter.n.$in'],
      ['an invalid regex', { metadata_filter: { team: { $regex: '([' } } }, 'metadata_filter.team.$regex'],
      ['a date operator not allowed', { created_at_filter: { $regex: '2020' } }, 'created_at_filter.$regex'],
      ['a date that is not ISO', { updated_at_filter: { $gt: 'yesterday' } }, 'updated_at_filter.$gt'],
    ];
    it.each(badFilters)('answers 400 INVALID_FILTER for %s, at every alpha', async (_name, filter, path) => {
      for (const base of [{ query: QUERY, alpha: 0 }, { query: QUERY, alpha: 0.5 }, { query: QUERY, alpha: 1 }, { embedding: embed(QUERY) }]) {
        const res = await call(t.app, 'POST', SEARCH, { key: KEYS.read, body: { ...base, ...filter } });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toMatchObject({ success: false, data: null, error: { error_code: 'INVALID_FILTER' } });
        expect(res.json().error.message).toContain(path);
      }
    });
  });

  describe('validation', () => {
    const E = () => vector(7);
    const invalid: [string, unknown, string[], string][] = [
      ['neither query nor embedding', {}, ['body', 'query'], 'missing'],
      ['neither, with nulls', { query: null, embedding: null }, ['body', 'query'], 'missing'],
      ['alpha < 1 without a query', { embedding: E(), alpha: 0.5 }, ['body', 'query'], 'missing'],
      ['alpha 0 without anything', { alpha: 0 }, ['body', 'query'], 'missing'],
      ['an embedding with alpha < 1', { query: 'harbor', embedding: E(), alpha: 0.5 }, ['body', 'embedding'], 'value_error'],
      ['an embedding with alpha 0', { query: 'harbor', embedding: E(), alpha: 0 }, ['body', 'embedding'], 'value_error'],
      ['an embedding of 1535 dimensions', { embedding: vector(7, 1535) }, ['body', 'embedding'], 'too_short'],
      ['an embedding of 1537 dimensions', { embedding: vector(7, 1537) }, ['body', 'embedding'], 'too_long'],
      ['an all-zero embedding', { embedding: new Array(1536).fill(0) }, ['body', 'embedding'], 'value_error'],
      ['top_k 0', { query: 'harbor', top_k: 0 }, ['body', 'top_k'], 'greater_than_equal'],
      ['top_k 1001', { query: 'harbor', top_k: 1001 }, ['body', 'top_k'], 'less_than_equal'],
      ['top_k 1.5', { query: 'harbor', top_k: 1.5 }, ['body', 'top_k'], 'int_type'],
      ['alpha -0.1', { query: 'harbor', alpha: -0.1 }, ['body', 'alpha'], 'greater_than_equal'],
      ['alpha 1.1', { query: 'harbor', alpha: 1.1 }, ['body', 'alpha'], 'less_than_equal'],
      ['min_relevance 1.5', { query: 'harbor', min_relevance: 1.5 }, ['body', 'min_relevance'], 'less_than_equal'],
      ['min_relevance -0.5', { query: 'harbor', min_relevance: -0.5 }, ['body', 'min_relevance'], 'greater_than_equal'],
      ['optimize_query with an embedding and no query', { embedding: E(), optimize_query: true }, ['body', 'optimize_query'], 'value_error'],
      ['optimize_metadata with an embedding and no query', { embedding: E(), optimize_metadata: true }, ['body', 'optimize_metadata'], 'value_error'],
      ['a numeric query', { query: 5 }, ['body', 'query'], 'string_type'],
      ['an embedding that is a string', { embedding: 'abc' }, ['body', 'embedding'], 'list_type'],
      ['a string in the embedding', { embedding: E().map((v, i) => (i === 5 ? String(v) : v)) }, ['body', 'embedding', '5'], 'float_type'],
      ['alpha as a string', { query: 'harbor', alpha: '0.5' }, ['body', 'alpha'], 'float_type'],
      ['top_k as a string', { query: 'harbor', top_k: '5' }, ['body', 'top_k'], 'int_type'],
      ['min_relevance as a boolean', { query: 'harbor', min_relevance: true }, ['body', 'min_relevance'], 'float_type'],
      ['optimize_query as a string', { query: 'harbor', optimize_query: 'yes' }, ['body', 'optimize_query'], 'bool_type'],
      ['exact as a string', { query: 'harbor', exact: 'yes' }, ['body', 'exact'], 'bool_type'],
      ['metadata_filter as an array', { query: 'harbor', metadata_filter: [1] }, ['body', 'metadata_filter'], 'dict_type'],
      ['created_at_filter as a string', { query: 'harbor', created_at_filter: '2020-01-01' }, ['body', 'created_at_filter'], 'dict_type'],
    ];
    it.each(invalid)('answers 422 for %s', async (_name, body, loc, type) => {
      const res = await call(t.app, 'POST', SEARCH, { key: KEYS.read, body });
      expect(res.statusCode, res.body).toBe(422);
      const json = res.json();
      expect(Object.keys(json)).toEqual(['detail']);
      expect(json.detail.length).toBeGreaterThan(0);
      for (const item of json.detail) {
        expect(Object.keys(item).sort()).toEqual(['loc', 'msg', 'type']);
        expect(typeof item.msg).toBe('string');
        expect(item.loc[0]).toBe('body');
      }
      expect(json.detail).toContainEqual(expect.objectContaining({ loc, type }));
    });

    it('answers 422 json_invalid for malformed JSON and missing for an empty body', async () => {
      const bad = await call(t.app, 'POST', SEARCH, { key: KEYS.read, rawBody: '{"query": "harbor",' });
      expect(bad.statusCode).toBe(422);
      expect(bad.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
      const empty = await call(t.app, 'POST', SEARCH, { key: KEYS.read, rawBody: '', headers: { 'content-type': 'application/json' } });
      expect(empty.statusCode).toBe(422);
      expect(empty.json().detail[0]).toMatchObject({ loc: ['body'] });
    });

    it('accepts the bounds: top_k 1 and 1000, alpha 0 and 1, min_relevance 0 and 1', async () => {
      for (const body of [
        { query: 'harbor', top_k: 1 },
        { query: 'harbor', top_k: 1000 },
        { query: 'harbor', alpha: 0 },
        { query: 'harbor', alpha: 1 },
        { query: 'harbor', min_relevance: 0 },
        { query: 'harbor', min_relevance: 1 },
        { query: null, embedding: E() },
        { query: 'harbor', embedding: E(), alpha: 1 },
      ]) {
        const res = await call(t.app, 'POST', SEARCH, { key: KEYS.read, body });
        expect(res.statusCode, `${JSON.stringify(body).slice(0, 60)}: ${res.body.slice(0, 200)}`).toBe(200);
      }
    });
  });

  describe('authentication and response shape', () => {
    it('lets a read key search and answers 401 without a key or with an unknown one', async () => {
      for (const key of [KEYS.read, KEYS.write, KEYS.admin]) {
        expect((await call(t.app, 'POST', SEARCH, { key, body: { query: 'harbor' } })).statusCode).toBe(200);
      }
      for (const key of [null, 'not-a-key']) {
        const res = await call(t.app, 'POST', SEARCH, { key, body: { query: 'harbor' } });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toMatchObject({ data: null, success: false, error: { error_code: 'UNAUTHORIZED' } });
      }
    });

    it('answers in the envelope, echoing query and metadata_filter without the optimise flags', async () => {
      const filter = { suite: 'filters', n: { $gte: 0 } };
      const res = await call(t.app, 'POST', SEARCH, { key: KEYS.read, body: { query: 'harbor pilot', alpha: 0.5, metadata_filter: filter } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['data', 'error', 'meta', 'success']);
      expect(body.success).toBe(true);
      expect(body.error).toBeNull();
      expect(body.meta.version).toBe('1.0.0');
      expect(new Date(body.meta.timestamp).toISOString()).toBe(body.meta.timestamp);
      expect(Object.keys(body.data).sort()).toEqual(['optimized_metadata', 'optimized_query', 'results']);
      expect(body.data.optimized_query).toBe('harbor pilot');
      expect(body.data.optimized_metadata).toEqual(filter);
      expect(body.data.results.length).toBeGreaterThan(0);
      for (const r of body.data.results as SearchResult[]) {
        expect(Object.keys(r).sort()).toEqual(RESULT_KEYS);
        expect(Number.isInteger(r.id) && Number.isInteger(r.document_id) && r.page_number === 1).toBe(true);
        expect(typeof r.content).toBe('string');
        const page = await call(t.app, 'GET', `/api/v1/documents/content/pages/${r.id}`);
        expect(page.json()).toMatchObject({ id: r.id, document_id: r.document_id, page_number: r.page_number, content: r.content });
      }

      const embeddingOnly = (await call(t.app, 'POST', SEARCH, { key: KEYS.read, body: { embedding: embed('harbor pilot') } })).json().data;
      expect(embeddingOnly.optimized_query).toBe('');
      expect(embeddingOnly.optimized_metadata).toEqual({});
      expect(embeddingOnly.results.length).toBeGreaterThan(0);

      const nothing = (await call(t.app, 'POST', SEARCH, { key: KEYS.read, body: { query: 'zzyzxqwv', alpha: 0 } })).json().data;
      expect(nothing).toEqual({ results: [], optimized_query: 'zzyzxqwv', optimized_metadata: {} });
    });

    it('returns the full page content, not a snippet', async () => {
      const content = `Lengthy almanac entry — Ångström, 潮汐表 🌊. ${'Tide tables and moon phases for the season. '.repeat(60)}`.trim();
      const page = await ingest(content, { embedding: vector(1401) });
      const data = await search({ embedding: vector(1401), top_k: 1 });
      expect(data.results[0]).toMatchObject({ id: page.pageId, document_id: page.documentId, page_number: 1, content });
    });
  });

  // Last: the thousand pages would slow every reference check after them.
  describe('absolute scores at scale', () => {
    it('keeps a page\'s scores identical after 1,000 unrelated pages arrive', async () => {
      const page = await ingest('Lighthouse keepers logged the storm surge at the northern breakwater.');
      const body: SearchBody = { query: 'lighthouse storm breakwater', alpha: 0.5, top_k: 1000 };
      const scoresOf = async () => (await search(body)).results.find((r) => r.id === page.pageId);
      const before = await scoresOf();
      expect(before?.keyword_score).toBeGreaterThan(0);
      for (let i = 0; i < 1000; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, j) =>
            ingest(`Ledger ${i + j}: lighthouse storm breakwater ${j % 2 ? 'invoice' : 'harbour'} note number ${i + j}.`, { embedding: vector(2000 + i + j) }),
          ),
        );
      }
      expect(await scoresOf()).toEqual(before);
    }, 120_000);
  });
});

// The index keeps page contents in a file under the data directory; where it cannot make one,
// results read their contents from the store, with the same answers.
describe.each(ENGINES)('page search without a content file on %s', (engine) => {
  let t: TestApp;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-no-contents-'));
    fs.writeFileSync(path.join(dataDir, 'index'), 'a file where the index directory would be');
    t = await startTestApp(engine, { env: { FOLIO_DATA_DIR: dataDir } });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers each result with its content, document and page number, and drops a deleted document', async () => {
    const contents = ['Harbour pilots guide the tanker — Ångström 潮汐表.', 'Harbour cranes unload the tanker at dawn.'];
    const ids: number[] = [];
    for (const [i, content] of contents.entries()) {
      const res = await call(t.app, 'POST', INGEST, { body: { embedding: vector(3000 + i), content } });
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().data.document_id as number);
    }
    const searchTanker = async () =>
      (await call(t.app, 'POST', SEARCH, { key: KEYS.read, body: { query: 'harbour tanker', alpha: 0 } })).json().data.results as SearchResult[];
    const found = await searchTanker();
    expect(found.map((r) => [r.document_id, r.page_number, r.content]).sort()).toEqual(
      contents.map((content, i) => [ids[i], 1, content]).sort(),
    );
    expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${ids[0]}`)).statusCode).toBe(200);
    expect((await searchTanker()).map((r) => r.document_id)).toEqual([ids[1]]);
  });
});

describe.each(ENGINES)('the page index at start-up on %s', (engine) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore(engine);
    const first = await startTestApp(engine, { store });
    try {
      const documents: [string, string][] = [
        [KEYS.write, 'Tidal charts for the northern harbour.'],
        [KEYS.write, 'Pilot boats meet tankers at the harbour mouth.'],
        [KEYS.other, 'Harbour dues for the beta workspace.'],
      ];
      for (const [i, [key, content]] of documents.entries()) {
        const res = await call(first.app, 'POST', INGEST, { key, body: { embedding: vector(4000 + i), content } });
        expect(res.statusCode, res.body).toBe(201);
      }
    } finally {
      await first.close();
    }
  });
  afterAll(async () => {
    await store.close();
  });

  const indexOf = async (t: TestApp) => (await call(t.app, 'GET', '/ready', { key: null })).json().vector_index as Record<string, number>;
  const harbour = async (t: TestApp, key: string) =>
    (await call(t.app, 'POST', SEARCH, { key, body: { query: 'harbour', alpha: 0 } })).json().data.results as SearchResult[];

  it('loads every workspace with pages before any search, and the next write is searchable', async () => {
    const t = await startTestApp(engine, { store });
    try {
      const index = await until(() => indexOf(t), (v) => v.loading === 0 && v.workspaces === 2);
      expect(index.pages).toBe(3);
      expect((await harbour(t, KEYS.read)).map((r) => r.content).sort()).toEqual([
        'Pilot boats meet tankers at the harbour mouth.',
        'Tidal charts for the northern harbour.',
      ]);
      const res = await call(t.app, 'POST', INGEST, { body: { embedding: vector(4010), content: 'A harbour master retires.' } });
      expect(res.statusCode, res.body).toBe(201);
      expect((await harbour(t, KEYS.read)).map((r) => r.content)).toContain('A harbour master retires.');
      expect((await harbour(t, KEYS.other)).map((r) => r.content)).toEqual(['Harbour dues for the beta workspace.']);
    } finally {
      await t.close();
    }
  });

  it('starts from the snapshot a clean stop wrote under the data directory, with what was written while it was down', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-restart-'));
    const snapshots = path.join(dataDir, 'index', 'snapshots');
    const kept = () => (fs.existsSync(snapshots) ? fs.readdirSync(snapshots).flatMap((key) => fs.readdirSync(path.join(snapshots, key))) : []);
    try {
      const first = await startTestApp(engine, { store, env: { FOLIO_DATA_DIR: dataDir } });
      await until(() => indexOf(first), (v) => v.loading === 0 && v.workspaces === 2);
      await first.close();
      expect(kept()).toHaveLength(2);
      // Written while this data directory's process was down, by one with a data directory of its own.
      const other = await startTestApp(engine, { store, env: { FOLIO_INDEX_PRELOAD: 'off' } });
      const res = await call(other.app, 'POST', INGEST, { body: { embedding: vector(4020), content: 'The harbour froze over while the server was down.' } });
      expect(res.statusCode, res.body).toBe(201);
      await other.close();
      const t = await startTestApp(engine, { store, env: { FOLIO_DATA_DIR: dataDir } });
      try {
        await until(() => indexOf(t), (v) => v.loading === 0 && v.workspaces === 2);
        // Claimed by the load while the index holds their files (a crash from here on starts from them again).
        expect(kept().every((name) => name.includes('.claimed-'))).toBe(true);
        expect(kept()).toHaveLength(2);
        expect((await harbour(t, KEYS.read)).map((r) => r.content)).toContain('The harbour froze over while the server was down.');
        expect((await harbour(t, KEYS.other)).map((r) => r.content)).toEqual(['Harbour dues for the beta workspace.']);
      } finally {
        await t.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('follows a workspace this process ingests into: loaded at the first write and kept current before any search', async () => {
    const fresh = await openTestStore(engine);
    const t = await startTestApp(engine, { store: fresh });
    try {
      expect(await indexOf(t)).toMatchObject({ workspaces: 0, pages: 0 });
      const batch = (from: number, count: number) => ({
        documents: Array.from({ length: count }, (_, i) => ({ embedding: vector(5000 + from + i), content: `Harbour log entry ${from + i}.` })),
      });
      // Batches one after another and at once: some land while the first write's load is under way.
      const first = await call(t.app, 'POST', `${INGEST}/batch`, { body: batch(0, 20) });
      expect(first.statusCode, first.body).toBe(200);
      const together = await Promise.all([batch(20, 15), batch(35, 15)].map((body) => call(t.app, 'POST', `${INGEST}/batch`, { body })));
      for (const res of together) expect(res.json().data.created, res.body).toBe(15);
      const single = await call(t.app, 'POST', INGEST, { body: { embedding: vector(5050), content: 'Harbour log entry 50.' } });
      expect(single.statusCode, single.body).toBe(201);
      expect(await until(() => indexOf(t), (v) => v.loading === 0 && v.pages === 51)).toMatchObject({ workspaces: 1, pages: 51 });
      expect(await harbour(t, KEYS.read)).toHaveLength(10);
    } finally {
      await t.close();
      await fresh.close();
    }
  });

  it('with FOLIO_INDEX_PRELOAD=off does not follow the workspaces it ingests into', async () => {
    const t = await startTestApp(engine, { store, env: { FOLIO_INDEX_PRELOAD: 'off' } });
    try {
      const res = await call(t.app, 'POST', INGEST, { body: { embedding: vector(4030), content: 'A harbour crane was repaired.' } });
      expect(res.statusCode, res.body).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await indexOf(t)).toMatchObject({ workspaces: 0, loading: 0 });
    } finally {
      await t.close();
    }
  });

  it('with FOLIO_INDEX_PRELOAD=off loads a workspace at its first search only', async () => {
    const t = await startTestApp(engine, { store, env: { FOLIO_INDEX_PRELOAD: 'off' } });
    try {
      expect(await indexOf(t)).toMatchObject({ workspaces: 0, loading: 0 });
      expect(await harbour(t, KEYS.other)).toHaveLength(1);
      expect(await indexOf(t)).toMatchObject({ workspaces: 1, loading: 0, pages: 1 });
    } finally {
      await t.close();
    }
  });
});
