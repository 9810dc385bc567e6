// Migrations that move stored data keep it: a store written at the previous version is
// migrated and read through the store's queries, on both engines, and migrated back down.
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openStore, type Engine, type Store } from '../../src/store/engine.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { pageTsvectorBytes } from '../../src/text/english-tsvector.js';
import { insertEmbeddedDocumentsUnwatched } from '../../src/store/document-writes.js';
import { insertDocument, insertPages, paragraphsOfPage } from '../../src/store/documents.js';
import { sentencesOfPages } from '../../src/store/passages.js';
import type { Database } from '../../src/store/schema.js';
import { workspacesWithSupersededPages } from '../../src/store/reembedding.js';
import { ensureWorkspace } from '../../src/store/workspaces.js';
import { ENGINES, POSTGRES_URL, clusterSnapshot, createSchema, dropSchema, newSchemaName } from '../helpers/stores.js';

async function migrateTo(db: Kysely<Database>, name: string): Promise<void> {
  const schema = (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0].schema;
  const { error } = await new Migrator({ db, provider: migrationProvider, migrationTableSchema: schema }).migrateTo(name);
  if (error) throw error;
}

/**
 * Dumps of one embedded database migrated up step by step, for the tests below, which ask for
 * them in the order of the migrations: each PGlite test starts at the migration before the one
 * it tests instead of migrating a new cluster up to it (seconds of CPU per test).
 */
class MigratedDumps {
  #pglite: PGlite | null = null;
  #db: Kysely<Database> | null = null;
  #at = '';
  #queue: Promise<unknown> = Promise.resolve();

  /** A dump of the database migrated up to `name`. */
  at(name: string): Promise<Blob> {
    const dump = this.#queue.then(async () => {
      // Only forward: a migration before the last dump starts a new database.
      if (this.#db && name < this.#at) await this.close();
      if (!this.#pglite) {
        this.#pglite = await PGlite.create({ loadDataDir: await clusterSnapshot() });
        this.#db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ ...createPgConfig(this.#pglite), max: 1 }) }) });
      }
      await migrateTo(this.#db!, name);
      this.#at = name;
      return this.#pglite.dumpDataDir('none');
    });
    this.#queue = dump.catch(() => undefined);
    return dump;
  }

  async close(): Promise<void> {
    await this.#db?.destroy();
    await this.#pglite?.close();
    this.#pglite = this.#db = null;
    this.#at = '';
  }
}

const dumps = new MigratedDumps();
afterAll(() => dumps.close());

/**
 * Opens stores closed after each test: on the server engine a fresh schema with no migration
 * run; on the embedded one a database already migrated up to `at` (the test's first migration
 * or the one before: a migrateTo there changes nothing), or with none run.
 */
function unmigratedStores(engine: Engine, at?: string): { open: () => Promise<Store> } {
  let store: Store | undefined;
  let schema: string | undefined;
  afterEach(async () => {
    await store?.close();
    if (schema) await dropSchema(schema);
    store = schema = undefined;
  });
  return {
    open: async () => {
      if (engine === 'postgres') {
        schema = newSchemaName();
        await createSchema(schema);
      }
      store = await openStore(
        engine === 'pglite'
          ? { databaseUrl: null, dataDir: null, snapshot: at ? await dumps.at(at) : await clusterSnapshot() }
          : { databaseUrl: POSTGRES_URL, dataDir: null, schema },
      );
      return store;
    },
  };
}

describe.each(ENGINES)('migration 0009 (sentences in paragraphs) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0008_webhooks');

  it('keeps every sentence with its id and order, numbers new ones after them, and goes back down', async () => {
    const db = (await unmigrated.open()).db;
    await migrateTo(db, '0008_webhooks');

    const workspaceId = await ensureWorkspace(db, 'migration');
    const doc = await insertDocument(db, {
      workspaceId,
      externalId: null,
      filePath: 'a.txt',
      fileUrl: null,
      metadata: {},
      source: 'file',
      taskIdentifier: null,
    });
    const [pageId] = await insertPages(db, workspaceId, doc.id, [
      { pageNumber: 1, content: 'One. Two.\n\nThree.\n\n', embedding: null, embeddingModel: null, paragraphs: [] },
    ]);
    // Written as the 0008 schema stored them: a row per sentence, ids not in paragraph order.
    await sql`
      WITH g AS (
        INSERT INTO paragraphs (page_id, paragraph_index, content)
        VALUES (${pageId}, 0, 'One. Two.'), (${pageId}, 1, 'Three.'), (${pageId}, 2, '')
        RETURNING id, paragraph_index
      )
      INSERT INTO sentences (id, paragraph_id, sentence_index, content)
      SELECT v.id, g.id, v.idx, v.content FROM g JOIN (VALUES (900, 0, 1, 'Two.'), (901, 0, 0, 'One.'), (950, 1, 0, 'Three.')) AS v(id, para, idx, content)
        ON g.paragraph_index = v.para
    `.execute(db);
    await sql`SELECT setval('sentences_id_seq', 950)`.execute(db);

    await migrateTo(db, '0009_sentences_in_paragraphs');
    const paragraphs = await paragraphsOfPage(db, pageId);
    expect(paragraphs.map((p) => p.sentences.map((s) => [s.id, s.sentence_index, s.content, s.paragraph_id]))).toEqual([
      [
        [901, 0, 'One.', paragraphs[0].id],
        [900, 1, 'Two.', paragraphs[0].id],
      ],
      [[950, 0, 'Three.', paragraphs[1].id]],
      [],
    ]);
    expect((await sentencesOfPages(db, [pageId])).get(pageId)!.map((s) => [s.id, s.paragraphIndex, s.sentenceIndex, s.content])).toEqual([
      [901, 0, 0, 'One.'],
      [900, 0, 1, 'Two.'],
      [950, 1, 0, 'Three.'],
    ]);

    // A paragraph longer than one block of ids (64) and two more: every id new and distinct.
    const long = Array.from({ length: 70 }, (_, i) => `S${i}.`);
    const [newPage] = await insertPages(db, workspaceId, doc.id, [
      {
        pageNumber: 2,
        content: 'Four. Five.',
        embedding: null,
        embeddingModel: null,
        // Texts that are not their sentences joined by single spaces: this schema stores every
        // paragraph's text, which the writer leaves out for those since 0016.
        paragraphs: [
          { content: 'Four.\nFive.', sentences: ['Four.', 'Five.'] },
          { content: long.join('\n'), sentences: long },
          { content: '', sentences: [] },
        ],
      },
    ]);
    const [added, longer, empty] = await paragraphsOfPage(db, newPage);
    expect(added.sentences.map((s) => s.content)).toEqual(['Four.', 'Five.']);
    expect(added.sentences[0].id).toBeGreaterThan(950);
    expect(added.sentences[1].id).toBeGreaterThan(added.sentences[0].id);
    expect(longer.sentences.map((s) => s.content)).toEqual(long);
    expect(empty.sentences).toEqual([]);
    const newIds = [...added.sentences, ...longer.sentences].map((s) => s.id);
    expect(new Set(newIds).size).toBe(72);
    expect(Math.min(...newIds)).toBeGreaterThan(950);

    await migrateTo(db, '0008_webhooks');
    const rows = await sql<{ id: number; sentence_index: number; content: string }>`
      SELECT s.id, s.sentence_index, s.content FROM sentences s JOIN paragraphs g ON g.id = s.paragraph_id ORDER BY g.page_id, g.paragraph_index, s.sentence_index
    `.execute(db);
    expect(rows.rows.map((r) => [Number(r.id), r.sentence_index, r.content])).toEqual([
      [901, 0, 'One.'],
      [900, 1, 'Two.'],
      [950, 0, 'Three.'],
      [added.sentences[0].id, 0, 'Four.'],
      [added.sentences[1].id, 1, 'Five.'],
      ...longer.sentences.map((s, i) => [s.id, i, s.content]),
    ]);
    const next = await sql<{ id: string }>`SELECT nextval('sentences_id_seq') AS id`.execute(db);
    expect(Number(next.rows[0].id)).toBeGreaterThan(Math.max(...newIds));
  });
});

describe.each(ENGINES)('migration 0010 (no page text index) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0009_sentences_in_paragraphs');

  it('drops the GIN index on the pages’ tsvector, and puts it back going down', async () => {
    const db = (await unmigrated.open()).db;
    const hasIndex = async () =>
      Number((await sql<{ n: number }>`SELECT count(*) AS n FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'pages_tsv_idx'`.execute(db)).rows[0].n) === 1;
    await migrateTo(db, '0009_sentences_in_paragraphs');
    expect(await hasIndex()).toBe(true);
    await migrateTo(db, '0010_no_page_text_index');
    expect(await hasIndex()).toBe(false);
    await migrateTo(db, '0009_sentences_in_paragraphs');
    expect(await hasIndex()).toBe(true);
  });
});

describe.each(ENGINES)('migration 0011 (page changes function) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0010_no_page_text_index');

  it('adds the catch-up function, and drops it going down', async () => {
    const db = (await unmigrated.open()).db;
    const hasFunction = async () =>
      Number(
        (
          await sql<{ n: number }>`
            SELECT count(*) AS n FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = current_schema() AND p.proname = 'page_changes_since'
          `.execute(db)
        ).rows[0].n,
      ) === 1;
    await migrateTo(db, '0011_page_changes_function');
    expect(await hasFunction()).toBe(true);
    await migrateTo(db, '0010_no_page_text_index');
    expect(await hasFunction()).toBe(false);
  });
});

describe.each(ENGINES)('migration 0012 (embedded documents function) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0011_page_changes_function');

  it('adds the batch insert with a generic plan, and drops it going down', async () => {
    const db = (await unmigrated.open()).db;
    const settings = async () =>
      (
        await sql<{ config: string[] | null }>`
          SELECT p.proconfig AS config FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = current_schema() AND p.proname = 'insert_embedded_documents'
        `.execute(db)
      ).rows.map((row) => row.config);
    await migrateTo(db, '0012_embedded_documents_function');
    expect(await settings()).toEqual([['plan_cache_mode=force_generic_plan']]);
    await migrateTo(db, '0011_page_changes_function');
    expect(await settings()).toEqual([]);
  });
});

describe.each(ENGINES)('migration 0013 (page tsvector supplied) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0012_embedded_documents_function');

  it('keeps every tsvector, computes one for a page that comes without, and generates the column again going down', async () => {
    const db = (await unmigrated.open()).db;
    await migrateTo(db, '0012_embedded_documents_function');
    const workspaceId = await ensureWorkspace(db, 'migration');
    const newPage = (content: string, tsv?: Buffer) => ({ pageNumber: 1, content, embedding: null, embeddingModel: null, paragraphs: [], tsv });
    const document = async (content: string, tsv?: Buffer) => {
      const doc = await insertDocument(db, { workspaceId, externalId: null, filePath: `f/${content}`, fileUrl: null, metadata: {}, source: 'upload', taskIdentifier: `t-${content}` });
      return (await insertPages(db, workspaceId, doc.id, [newPage(content, tsv)]))[0];
    };
    const tsvOf = async (pageId: number) => (await sql<{ tsv: string }>`SELECT tsv::text AS tsv FROM pages WHERE id = ${pageId}`.execute(db)).rows[0].tsv;
    const before = await document('Running cats chased the dogs');
    expect(await tsvOf(before)).toBe("'cat':2 'chase':3 'dog':5 'run':1");

    await migrateTo(db, '0013_page_tsvector_supplied');
    expect(await tsvOf(before)).toBe("'cat':2 'chase':3 'dog':5 'run':1");
    // Supplied, it is stored as given; absent, the trigger computes it.
    expect(await tsvOf(await document('ignored words', pageTsvectorBytes('given', (word) => word)!))).toBe("'given':1");
    expect(await tsvOf(await document('Flying geese'))).toBe("'fli':1 'gees':2");
    await sql`UPDATE pages SET content = 'Swimming seals' WHERE id = ${before}`.execute(db);
    expect(await tsvOf(before)).toBe("'seal':2 'swim':1");

    await migrateTo(db, '0012_embedded_documents_function');
    expect(await tsvOf(before)).toBe("'seal':2 'swim':1");
    const generated = await sql<{ generated: string }>`
      SELECT attgenerated AS generated FROM pg_attribute WHERE attrelid = 'pages'::regclass AND attname = 'tsv'
    `.execute(db);
    expect(generated.rows[0].generated).toBe('s');
  });
});

describe.each(ENGINES)('migration 0014 (listing indexes) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0013_page_tsvector_supplied');

  it("indexes the listings' orders, and puts the former indexes back going down", async () => {
    const db = (await unmigrated.open()).db;
    const columns = async () => {
      const { rows } = await sql<{ indexname: string; indexdef: string }>`
        SELECT indexname, indexdef FROM pg_indexes
        WHERE schemaname = current_schema() AND indexname IN ('documents_created_idx', 'documents_updated_idx', 'tasks_workspace_idx')
        ORDER BY indexname`.execute(db);
      return Object.fromEntries(rows.map((r) => [r.indexname, /\((.*)\)$/.exec(r.indexdef)![1]]));
    };
    await migrateTo(db, '0013_page_tsvector_supplied');
    const before = { documents_created_idx: 'workspace_id, created_at', tasks_workspace_idx: 'workspace_id' };
    expect(await columns()).toEqual(before);
    await migrateTo(db, '0014_listing_indexes');
    expect(await columns()).toEqual({
      documents_created_idx: 'workspace_id, created_at, id',
      documents_updated_idx: 'workspace_id, updated_at, id',
      tasks_workspace_idx: 'workspace_id, created_at, identifier',
    });
    await migrateTo(db, '0013_page_tsvector_supplied');
    expect(await columns()).toEqual(before);
  });
});

describe.each(ENGINES)('migration 0015 (superseded pages index) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0014_listing_indexes');

  it('answers which workspaces hold pages of the superseded model from an index, not by reading every page, and drops it going down', async () => {
    const db = (await unmigrated.open()).db;
    await migrateTo(db, '0015_superseded_pages_index');
    const workspace = await ensureWorkspace(db, 'superseded');
    const doc = await insertDocument(db, { workspaceId: workspace, externalId: null, filePath: 'a', fileUrl: null, metadata: {}, source: 'file', taskIdentifier: null });
    const page = (n: number, model: string) => ({ pageNumber: n, content: `page ${n}`, embedding: null, embeddingModel: model, paragraphs: [] });
    await insertPages(db, workspace, doc.id, [page(1, 'folio-hashing-v1'), page(2, 'folio-hashing-v2')]);
    expect(await workspacesWithSupersededPages(db)).toEqual([workspace]);
    // With sequential scans off, the plan shows whether the partial index matches the query at all.
    await sql`SET enable_seqscan = off`.execute(db);
    const plan = await sql<{ 'QUERY PLAN': string }>`
      EXPLAIN SELECT DISTINCT workspace_id FROM pages WHERE embedding_model = ${sql.lit('folio-hashing-v1')}`.execute(db);
    await sql`RESET enable_seqscan`.execute(db);
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('pages_superseded_idx');
    await migrateTo(db, '0014_listing_indexes');
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'pages_superseded_idx'`.execute(db);
    expect(rows[0].n).toBe(0);
  });
});

describe.each(ENGINES)('migration 0016 (paragraph content from sentences) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0015_superseded_pages_index');

  it('stores no paragraph text that its sentences give back, reads every paragraph as written, and fills the text in going down', async () => {
    const db = (await unmigrated.open()).db;
    await migrateTo(db, '0015_superseded_pages_index');
    const workspace = await ensureWorkspace(db, 'paragraphs');
    const doc = await insertDocument(db, { workspaceId: workspace, externalId: null, filePath: 'p', fileUrl: null, metadata: {}, source: 'file', taskIdentifier: null });
    const paragraphs = [
      { content: 'One sentence. Another one.', sentences: ['One sentence.', 'Another one.'] },
      { content: 'Two spaces.  Then more.', sentences: ['Two spaces.', 'Then more.'] },
      { content: 'A line\nbreak.', sentences: ['A line\nbreak.'] },
    ];
    const page = (n: number) => ({ pageNumber: n, content: `page ${n}`, embedding: null, embeddingModel: null, paragraphs });
    // Written as the 0015 schema stored them, every text with its paragraph.
    const [before] = await insertPages(db, workspace, doc.id, [{ ...page(1), paragraphs: [] }]);
    for (const [index, p] of paragraphs.entries()) {
      await sql`
        INSERT INTO paragraphs (page_id, paragraph_index, content, sentences, sentence_ids)
        VALUES (${before}, ${index}, ${p.content}, ${p.sentences}, ARRAY(SELECT nextval('sentence_id_seq') FROM generate_series(1, ${p.sentences.length}::int)))
      `.execute(db);
    }
    const read = async (pageId: number) => (await paragraphsOfPage(db, pageId)).map((p) => ({ content: p.content, sentences: p.sentences.map((s) => s.content) }));
    const stored = async () =>
      (await sql<{ content: string | null }>`SELECT content FROM paragraphs ORDER BY page_id, paragraph_index`.execute(db)).rows.map((r) => r.content);

    await migrateTo(db, '0016_paragraph_content_from_sentences');
    const [after] = await insertPages(db, workspace, doc.id, [page(2)]);
    expect(await stored()).toEqual([...paragraphs.map((p) => p.content), null, 'Two spaces.  Then more.', null]);
    expect(await read(before)).toEqual(paragraphs);
    expect(await read(after)).toEqual(paragraphs);

    await migrateTo(db, '0015_superseded_pages_index');
    expect(await stored()).toEqual([...paragraphs, ...paragraphs].map((p) => p.content));
    expect(await read(after)).toEqual(paragraphs);
  });
});

describe.each(ENGINES)('migrations 0017 (sentences by paragraph) and 0019 (page ids) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0016_paragraph_content_from_sentences');

  it("gives the batch insert each sentence's paragraph instead of slices, then returns each document's page id, and puts both back going down", async () => {
    const db = (await unmigrated.open()).db;
    await migrateTo(db, '0016_paragraph_content_from_sentences');
    const argumentsOf = async () =>
      (
        await sql<{ args: string }>`
          SELECT pg_get_function_arguments(p.oid) AS args FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = current_schema() AND p.proname = 'insert_embedded_documents'
        `.execute(db)
      ).rows.map((row) => /(\w+) integer\[\], tsv/.exec(row.args)?.[1] ?? row.args);
    expect(await argumentsOf()).toEqual(['paragraph_counts']);

    await migrateTo(db, '0017_sentences_by_paragraph');
    expect(await argumentsOf()).toEqual(['sentence_paragraphs']);
    const resultOf = async () =>
      (
        await sql<{ result: string }>`
          SELECT pg_get_function_result(p.oid) AS result FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = current_schema() AND p.proname = 'insert_embedded_documents'
        `.execute(db)
      ).rows.map((row) => row.result);
    expect(await resultOf()).toEqual(['TABLE(id bigint, task_identifier text)']);
    // 0019 returns each document's page id too, which today's statement reads; the same body.
    await migrateTo(db, '0019_embedded_documents_page_ids');
    expect(await resultOf()).toEqual(['TABLE(id bigint, task_identifier text, page_id bigint)']);
    expect(await argumentsOf()).toEqual(['sentence_paragraphs']);
    const workspaceId = await ensureWorkspace(db, 'sentences');
    const paragraphs = [
      { content: 'One. Two. Three.', sentences: ['One.', 'Two.', 'Three.'] },
      { content: '', sentences: [] },
      { content: 'Four.', sentences: ['Four.'] },
    ];
    const items = [1, 2].map((n) => ({
      document: { workspaceId, externalId: null, filePath: `e/${n}`, fileUrl: null, metadata: {}, source: 'embedding', taskIdentifier: `t-${n}` },
      page: { pageNumber: 1, content: `page ${n}`, embedding: null, embeddingModel: null, paragraphs: paragraphs.slice(n - 1) },
      task: { identifier: `t-${n}`, workspaceId, kind: 'IngestEmbedding', status: 'COMPLETED' as const, progress: 100, title: 't', message: 'm' },
    }));
    const ids = await insertEmbeddedDocumentsUnwatched(db, items);
    const pages = await db.selectFrom('pages').select(['id', 'document_id']).where('document_id', 'in', ids!).orderBy('document_id').execute();
    const read = async (pageId: number) => (await paragraphsOfPage(db, pageId)).map((p) => ({ content: p.content, sentences: p.sentences.map((s) => s.content) }));
    expect(await read(pages[0].id)).toEqual(paragraphs);
    expect(await read(pages[1].id)).toEqual(paragraphs.slice(1));
    const sentenceIds = (await paragraphsOfPage(db, pages[0].id)).flatMap((p) => p.sentences.map((s) => s.id));
    expect(sentenceIds).toEqual([...sentenceIds].sort((a, b) => a - b));

    await migrateTo(db, '0017_sentences_by_paragraph');
    expect(await resultOf()).toEqual(['TABLE(id bigint, task_identifier text)']);
    await migrateTo(db, '0016_paragraph_content_from_sentences');
    expect(await argumentsOf()).toEqual(['paragraph_counts']);
  });
});

describe.each(ENGINES)('migration 0018 (page changes once) on %s', (engine) => {
  const unmigrated = unmigratedStores(engine, '0017_sentences_by_paragraph');

  it('leaves out of the catch-up the changes its last snapshot saw, and reads them all again going down', async () => {
    const db = (await unmigrated.open()).db;
    await migrateTo(db, '0017_sentences_by_paragraph');
    const workspaceId = await ensureWorkspace(db, 'changes');
    const doc = await insertDocument(db, { workspaceId, externalId: null, filePath: 'a', fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null });
    const [pageId] = await insertPages(db, workspaceId, doc.id, [{ pageNumber: 1, content: 'a page', embedding: null, embeddingModel: null, paragraphs: [] }]);
    // A snapshot that saw the insert, read from a window that starts before it; then a
    // transaction commits, so that the read's snapshot is not that one.
    const seen = (await sql<{ snapshot: string }>`SELECT pg_current_snapshot()::text AS snapshot`.execute(db)).rows[0].snapshot;
    await sql`SELECT pg_current_xact_id()`.execute(db);
    const changed = async () =>
      (await sql<{ page_id: string | null }>`SELECT page_id FROM page_changes_since(${workspaceId}, '1'::xid8, ${seen})`.execute(db)).rows.map((r) => (r.page_id === null ? null : Number(r.page_id)));
    expect(await changed()).toEqual([pageId]);
    await migrateTo(db, '0018_page_changes_once');
    expect(await changed()).toEqual([null]);
    await migrateTo(db, '0017_sentences_by_paragraph');
    expect(await changed()).toEqual([pageId]);
  });
});
