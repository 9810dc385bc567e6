// On the embedded engine the page index is handed the pages of a write of documents from
// embeddings as it commits, made from the requests that carried them (embedded-batch.ts
// writtenPages) instead of read back from the store: they must be what a read of the store gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingIngester } from '../../src/documents/ingest-embedding.js';
import type { IndexedPage } from '../../src/store/pages.js';
import { ensureWorkspace } from '../../src/store/workspaces.js';
import { corpusFile } from '../helpers/corpus.js';
import { seededRandom } from '../helpers/random.js';
import { openTestStore, type TestStore } from '../helpers/stores.js';

/** A tsvector in binary form as its lexemes, sorted, each with its positions. */
function lexemesOf(tsv: Uint8Array): [string, number[]][] {
  const view = Buffer.from(tsv.buffer, tsv.byteOffset, tsv.byteLength);
  const lexemes: [string, number[]][] = [];
  let at = 4;
  for (let t = view.readInt32BE(0); t > 0; t--) {
    const end = view.indexOf(0, at);
    const count = view.readUInt16BE(end + 1);
    const positions = Array.from({ length: count }, (_, k) => view.readUInt16BE(end + 3 + 2 * k));
    lexemes.push([view.toString('utf8', at, end), positions]);
    at = end + 3 + 2 * count;
  }
  return lexemes.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** What the page index reads of a page, comparable with toEqual. */
function comparable(page: IndexedPage) {
  return {
    id: page.id,
    documentId: page.documentId,
    pageNumber: page.pageNumber,
    content: Buffer.from(page.content).toString('utf8'),
    embedding: page.embedding ? Array.from(page.embedding) : null,
    lexemes: lexemesOf(page.tsv),
    superseded: page.superseded ?? false,
  };
}

describe('the pages handed to the page index as a write commits (embedded engine)', () => {
  let store: TestStore;
  const handed: { workspaces: readonly number[]; pages: ReadonlyMap<number, IndexedPage[]> | null }[] = [];

  beforeAll(async () => {
    store = await openTestStore('pglite');
    store.watchWrittenPages!({ wants: () => true, written: (_writes, workspaces, pages) => void handed.push({ workspaces, pages }) });
  });
  afterAll(() => store?.close());

  it('are the pages a read of the store gives, and a workspace with a tsvector the database made is left to its catch-up', async () => {
    const prose = corpusFile('txt/alice-in-wonderland.txt').toString('utf8');
    const next = seededRandom(40);
    const embedding = () => Array.from({ length: 24 }, () => next() - 0.5);
    const covered = await ensureWorkspace(store.db, 'covered');
    const uncovered = await ensureWorkspace(store.db, 'uncovered');
    const ingester = EmbeddingIngester.forStore(store);
    const inputs = Array.from({ length: 300 }, (_, i) => ({ embedding: embedding(), content: prose.slice(i * 700, i * 700 + 1500) }));
    const outcomes = await Promise.all([
      ingester.ingestAll(covered, inputs),
      // One text the JavaScript tsvector does not cover (an address): the database computes its tsvector.
      ingester.ingestAll(uncovered, [
        { embedding: embedding(), content: 'Plain words here.' },
        { embedding: embedding(), content: 'Write to alice@example.com about the naïve rabbit.' },
      ]),
    ]);
    expect(outcomes.flat().every((o) => o.ok)).toBe(true);

    expect(handed.length).toBeGreaterThan(0);
    expect(handed.some(({ workspaces }) => workspaces.includes(uncovered))).toBe(true);
    expect(handed.some(({ pages }) => pages?.has(uncovered))).toBe(false);
    const given = handed.flatMap(({ pages }) => pages?.get(covered) ?? []);
    expect(given).toHaveLength(inputs.length);
    const documentIds = outcomes[0].map((o) => (o.ok ? o.receipt.document_id : -1));
    expect(given.map((p) => p.documentId).sort((a, b) => a - b)).toEqual([...documentIds].sort((a, b) => a - b));

    const stored = await store.readPages({ documentIds });
    const byId = new Map(given.map((p) => [p.id, p]));
    expect(stored).toHaveLength(inputs.length);
    for (const page of stored) expect(comparable(byId.get(page.id)!)).toEqual(comparable(page));
  });
});
