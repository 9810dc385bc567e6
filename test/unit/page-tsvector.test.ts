// pageTsvector gives exactly what to_tsvector('english', text) gives, on both engines, for
// every text it covers: prose from the corpus, and generated text that packs words, numbers,
// hyphens, dots and other separators against each other the ways the parser tells apart. Text
// it does not cover (addresses, paths, signed and scientific numbers, non-ASCII letters) is
// refused rather than guessed. One statement per engine compares all of them.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { enginePageLexemes, pageLexemesFor, PROBE_TEXT, storePageLexemes } from '../../src/search/page-tsvector.js';
import { cachedEnglishLexeme, pageTsvector, pageTsvectorBytes } from '../../src/text/english-tsvector.js';
import { insertEmbeddedDocumentsUnwatched } from '../../src/store/document-writes.js';
import { insertDocument, insertPages, type NewPage } from '../../src/store/documents.js';
import type { EmbeddedDocument } from '../../src/store/embedded-batch.js';
import { ensureWorkspace } from '../../src/store/workspaces.js';
import { corpusFile } from '../helpers/corpus.js';
import { seededRandom } from '../helpers/random.js';
import { ENGINES, openTestStore, withBareEngine, type Ask } from '../helpers/stores.js';

const PROSE = ['txt/alice-in-wonderland.txt', 'txt/pride-and-prejudice.txt', 'txt/terrier-document.txt'];
const OTHER = ['ground_truth/pdf/tracemonkey.pdf-parse-output.txt', 'markdown/pandoc-MANUAL.md', 'markdown/the-art-of-command-line.en.md'];

/** The file in pieces of about a page. */
function pagesOf(rel: string): string[] {
  const text = corpusFile(rel).toString('utf8');
  const pages: string[] = [];
  for (let i = 0; i < text.length; i += 2000) pages.push(text.slice(i, i + 2000));
  return pages;
}

// Pieces the parser reads differently by what touches them, and separators to put between.
const PIECES = [
  'the', 'The', 'cat', 'cats', 'running', 'added', 'I', 'a', 's', 'yes', 'sky', 'YES', 'naïve', 'é',
  '45', '007', '3', '45.3', '0.5', '1.2.3', '1,000', '5.', '.5', '-5', '5-10',
  '3rd', 'abc123', '1e5', '1E5', '2e', 'e2', '0x1f', '12e3', 'x',
  'x-ray', 'state-of-the-art', 'Well-Known', 'running-shoes', 'covid-19', 'a-1', 'x-', '-x', '--x', 'a-b--c', 'x-y-5',
  'e.g.', 'example.com', 'a/b', 'me@example.com', '<b>', '&amp;', 'a+b', '~x', '_',
];
const SEPARATORS = [
  ' ', ' ', '  ', '\n', '\t', '\r\n', '\f', ',', ';', ':', '!', '?', '(', ')', '[', ']', '"', "'", '%', '$', '#', '*', '=',
  '.', '. ', '..', '...', '.)', '."', '._', '-', '--', ' - ', '-\n', '_', '’', '“', '”', '•', '–', '—', '…',
];

function generatedTexts(count: number): string[] {
  const next = seededRandom(12);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)];
  return Array.from({ length: count }, () => {
    let text = '';
    for (let k = 1 + Math.floor(next() * 12); k > 0; k--) text += pick(PIECES) + (next() < 0.85 ? pick(SEPARATORS) : '');
    return text;
  });
}

async function expectAgreement(ask: Ask): Promise<void> {
  const added = (await ask<{ a: string }>(`SELECT tsvector_to_array(to_tsvector('english', 'added'))::text AS a`, [])).rows[0].a;
  const lexemeOf = cachedEnglishLexeme({ keepsLoneVowelDouble: added === '{add}' });
  const prose = PROSE.flatMap(pagesOf);
  const texts = [...prose, ...OTHER.flatMap(pagesOf), ...generatedTexts(20_000)];
  const mine = texts.map((text) => pageTsvector(text, lexemeOf));

  // Prose is what the computation is for: all of it is covered.
  expect(mine.slice(0, prose.length).filter((tsv) => tsv === null)).toEqual([]);
  const covered = texts.flatMap((text, i) => (mine[i] === null ? [] : [{ text, tsv: mine[i] }]));
  // Thousands of generated texts are covered, and many are not.
  expect(covered.length - prose.length).toBeGreaterThan(2000);
  expect(covered.length).toBeLessThan(texts.length / 2);

  // Both sides in the engine's own output form (the input sorts lexemes and positions).
  const { rows } = await ask<{ text: string; engine: string; mine: string }>(
    `SELECT t AS text, to_tsvector('english', t)::text AS engine, m::tsvector::text AS mine FROM unnest($1::text[], $2::text[]) AS x(t, m)`,
    [covered.map((c) => c.text), covered.map((c) => c.tsv)],
  );
  expect(rows).toHaveLength(covered.length);
  const differing = rows.filter((r) => r.engine !== r.mine);
  const shown = differing.slice(0, 10).map((r) => `${JSON.stringify(r.text)}\n  engine: ${r.engine}\n  mine:   ${r.mine}`);
  expect(differing.length, `${differing.length} of ${rows.length} texts differ:\n${shown.join('\n')}`).toBe(0);
}

describe.each(ENGINES)('pageTsvector on %s', (engine) => {
  it('agrees with the engine on every text it covers', () => withBareEngine(engine, expectAgreement));

  it('gives, in binary form, pages written by both write paths the tsvector the engine computes', async () => {
    const store = await openTestStore(engine);
    try {
      const lexemeOf = (await storePageLexemes(store.db))!;
      const texts = [...PROSE.flatMap(pagesOf), ...generatedTexts(3_000)].filter((text) => pageTsvector(text, lexemeOf) !== null);
      expect(texts.length).toBeGreaterThan(500);
      const workspaceId = await ensureWorkspace(store.db, 'tsvectors');
      const page = (content: string): NewPage => ({
        pageNumber: 1,
        content,
        embedding: null,
        embeddingModel: null,
        paragraphs: [],
        tsv: pageTsvectorBytes(content, lexemeOf),
      });
      const items: EmbeddedDocument[] = texts.map((content, n) => ({
        document: { workspaceId, externalId: null, filePath: `e/${n}`, fileUrl: null, metadata: {}, source: 'embedding', taskIdentifier: `t-${n}` },
        page: page(content),
        task: { identifier: `t-${n}`, workspaceId, kind: 'IngestEmbedding', status: 'COMPLETED', progress: 100, title: 't', message: 'm' },
      }));
      // The service's statement for embedded documents (on the embedded engine its thread's own
      // protocol messages), and the pages' insert of the file pipeline.
      for (let from = 0; from < items.length; from += 128) {
        const batch = items.slice(from, from + 128);
        expect(await (store.writeEmbedded ?? ((b: EmbeddedDocument[]) => insertEmbeddedDocumentsUnwatched(store.db, b)))(batch)).toHaveLength(batch.length);
      }
      const doc = await insertDocument(store.db, { workspaceId, externalId: null, filePath: 'f', fileUrl: null, metadata: {}, source: 'upload', taskIdentifier: null });
      await insertPages(store.db, workspaceId, doc.id, texts.slice(0, 200).map((content, i) => ({ ...page(content), pageNumber: i + 1 })));

      const { rows } = await sql<{ pages: number; differing: number }>`
        SELECT count(*)::int AS pages, count(*) FILTER (WHERE tsv::text <> to_tsvector('english', content)::text)::int AS differing
        FROM pages WHERE workspace_id = ${workspaceId}
      `.execute(store.db);
      expect(rows[0]).toEqual({ pages: texts.length + 200, differing: 0 });
    } finally {
      await store.close();
    }
  });
});

describe('pageTsvector', () => {
  const lexemeOf = cachedEnglishLexeme({ keepsLoneVowelDouble: true });

  it('counts stop words as positions and gives hyphenated words and their parts a position each', () => {
    expect(pageTsvector('The cat sat on the well-known mat, 45.3% of it.', lexemeOf)).toBe(
      "'cat':2 'sat':3 'well-known':6 'well':7 'known':8 'mat':9 '45.3':10",
    );
  });

  it('leaves to the engine text beyond what it covers', () => {
    for (const text of ['see e.g. this', 'and/or', 'mail me@example.com', 'café', 'covid-19', 'from -5 to 1e5', '<b>bold</b>', 'a+b']) {
      expect(pageTsvector(text, lexemeOf), text).toBeNull();
    }
    // PostgreSQL keeps 256 positions of a lexeme and positions up to 16,383.
    expect(pageTsvector('cat '.repeat(255), lexemeOf)).not.toBeNull();
    expect(pageTsvector('cat '.repeat(256), lexemeOf)).toBeNull();
    expect(pageTsvector(Array.from({ length: 16_384 }, (_, i) => `w${i}`).join(' '), lexemeOf)).toBeNull();
  });
});

describe.each(ENGINES)('enginePageLexemes on %s', (engine) => {
  it('is given once the engine reads the probe text as pageTsvector does, and gives each engine its stemmer', async () => {
    const store = await openTestStore(engine);
    try {
      const lexemeOf = await enginePageLexemes(store.db);
      expect(lexemeOf).not.toBeNull();
      // The probe text is covered, so the check compares something.
      expect(pageTsvector(PROBE_TEXT, lexemeOf!)).toContain("'state-of-the-art':");
      // PostgreSQL 18 (PGlite) and earlier versions stem "added" differently: each engine gets its own.
      const { rows } = await sql<{ lexeme: string }>`SELECT (tsvector_to_array(to_tsvector('english', 'added')))[1] AS lexeme`.execute(store.db);
      expect(lexemeOf!('added')).toBe(rows[0].lexeme);
    } finally {
      await store.close();
    }
  });

  it('is checked once per store for every writer of pages, and again after a check that could not run', async () => {
    const store = await openTestStore(engine);
    const first = storePageLexemes(store.db);
    expect(storePageLexemes(store.db)).toBe(first);
    expect(await first).not.toBeNull();
    await store.close();
    const closed = await openTestStore(engine);
    await closed.close();
    const failed = storePageLexemes(closed.db);
    expect(await failed).toBeNull();
    expect(storePageLexemes(closed.db)).not.toBe(failed);
    expect(await storePageLexemes(closed.db)).toBeNull();
  });

  it('is what the service computes pages’ tsvectors with on the embedded engine, and nothing on the server (its backends do)', async () => {
    const store = await openTestStore(engine);
    try {
      const lexemeOf = await pageLexemesFor(store.db, store.engine);
      if (engine === 'postgres') expect(lexemeOf).toBeNull();
      else expect(lexemeOf).toBe(await storePageLexemes(store.db));
    } finally {
      await store.close();
    }
  });
});
