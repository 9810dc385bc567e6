// The page index reads its pages (a load's batches, a catch-up's pages) in PostgreSQL's binary
// format: on the embedded engine's thread (page-batch.ts), through COPY on the server engine
// (page-copy.ts). The pages must be exactly what the store holds, byte for byte, and a read must
// never see what a transaction open beside it has not committed.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import { normalizeVector } from '../../src/search/vectors.js';
import { insertDocument, insertPages, type NewPage } from '../../src/store/documents.js';
import { SUPERSEDED_EMBEDDING_MODEL } from '../../src/store/embedding-models.js';
import { readPageCopy } from '../../src/store/page-batch.js';
import { CopyThread } from '../../src/store/page-copy-client.js';
import { indexedPages, type IndexedPage } from '../../src/store/pages.js';
import { codeSpace, encodeRow } from '../../src/store/vector-codes.js';
import { ENGINES, openTestStore, POSTGRES_URL, type TestStore } from '../helpers/stores.js';

const CONTENTS = [
  'Plain words about a wing and its lift.',
  'Naïve café, façade, 東京 and Ελληνικά — non-ASCII text of every width 🚀.',
  `Quotes ' and " and a backslash \\ in the text, with O'Brien's and "it's".`,
  'A page that was never embedded.',
  'The fifth page, after the one without an embedding.',
];

describe.each(ENGINES)("the page index's pages read in binary on %s", (engine) => {
  let store: TestStore;
  let workspaceId: number;
  let otherWorkspace: number;
  const pageIds: number[] = [];

  async function addPage(workspace: number, content: string, embedded: boolean, model = 'test'): Promise<number> {
    const doc = await insertDocument(store.db, {
      workspaceId: workspace, externalId: null, filePath: 'p', fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null,
    });
    const embedding = embedded ? normalizeVector(hashEmbed(content)) : null;
    const page: NewPage = { pageNumber: 1, content, embedding, embeddingModel: embedding ? model : null, paragraphs: [] };
    const [id] = await insertPages(store.db, workspace, doc.id, [page]);
    return id;
  }

  beforeAll(async () => {
    store = await openTestStore(engine);
    workspaceId = (await store.db.insertInto('workspaces').values({ name: 'batch' }).returning('id').executeTakeFirstOrThrow()).id;
    otherWorkspace = (await store.db.insertInto('workspaces').values({ name: 'other' }).returning('id').executeTakeFirstOrThrow()).id;
    for (const [i, content] of CONTENTS.entries()) {
      // Page 2's embedding is of the superseded offline model, which the reader flags.
      pageIds.push(await addPage(workspaceId, content, i !== 3, i === 2 ? SUPERSEDED_EMBEDDING_MODEL : 'test'));
      await addPage(otherWorkspace, `${content} (another workspace)`, true);
    }
  });

  afterAll(async () => {
    await store?.close();
  });

  /** The pages of `ids` as SQL reads them, bytes as Buffers, in id order. */
  async function storedPages(ids: number[]) {
    const rows = await sql<{ id: number; document_id: number; page_number: number; content: Buffer; embedding: Buffer | null; tsv: Buffer; model: string | null }>`
      SELECT id, document_id, page_number, convert_to(content, 'UTF8') AS content, embedding, tsvectorsend(tsv) AS tsv, embedding_model AS model
      FROM pages WHERE id = ANY(${ids}) ORDER BY id
    `.execute(store.db);
    return rows.rows.map((r) => ({
      id: Number(r.id), documentId: Number(r.document_id), pageNumber: r.page_number, content: r.content, embedding: r.embedding, tsv: r.tsv,
      superseded: r.model === SUPERSEDED_EMBEDDING_MODEL,
    }));
  }

  /** A page read in binary with its byte views as Buffers, to compare with `storedPages`. */
  const asStored = ({ code: _code, ...p }: IndexedPage) => ({
    ...p,
    content: Buffer.from(p.content),
    embedding: p.embedding && Buffer.from(p.embedding.buffer, p.embedding.byteOffset, p.embedding.byteLength),
    tsv: Buffer.from(p.tsv),
  });

  it('gives the pages the store holds: contents, embeddings and tsvectors byte for byte', async () => {
    const read = await store.readPages({ workspaceId, after: 0, limit: 500 });
    expect(read.map(asStored)).toEqual(await storedPages(pageIds));
    expect(read.map((p) => Buffer.from(p.content).toString('utf8'))).toEqual(CONTENTS);
    expect(read[3].embedding).toBeNull();
    expect(read[1].embedding).toEqual(normalizeVector(hashEmbed(CONTENTS[1])));
    expect(Buffer.from(read[2].tsv).toString('latin1')).toContain('brien\0');
    expect(read.map((p) => p.superseded)).toEqual([false, false, true, false, false]);
  });

  it('codes each embedding where it is read, as the index would itself', async () => {
    const read = await store.readPages({ workspaceId, after: 0, limit: 500 });
    expect(read[3].code).toBeNull();
    for (const page of read.filter((p) => p.embedding)) {
      const { bytes, error, norm } = encodeRow(codeSpace(page.embedding!.length), page.embedding!);
      expect({ bytes: Buffer.from(page.code!.bytes), error: page.code!.error, norm: page.code!.norm }).toEqual({ bytes: Buffer.from(bytes), error, norm });
    }
  });

  it('reads pages by id, in id order, 1,000 to a statement', async () => {
    const ids = [pageIds[4], pageIds[0], 999_999, pageIds[3]];
    const read = await store.readPages({ ids });
    expect(read.map((p) => p.id)).toEqual([pageIds[0], pageIds[3], pageIds[4]]);
    expect(read.map(asStored)).toEqual(await storedPages(ids));
    expect(await store.readPages({ ids: [] })).toEqual([]);
    const many = [...Array.from({ length: 2500 }, (_, i) => 1_000_000 + i), ...pageIds];
    expect((await indexedPages(store.readPages, many)).map((p) => p.id)).toEqual(pageIds);
  });

  it('reads from after a page, at most as many as asked', async () => {
    expect((await store.readPages({ workspaceId, after: pageIds[1], limit: 2 })).map((p) => p.id)).toEqual(pageIds.slice(2, 4));
    expect(await store.readPages({ workspaceId, after: pageIds[4], limit: 500 })).toEqual([]);
  });

  it('never sees what a transaction open beside it rolls back (on the embedded engine, waits for it)', async () => {
    let read: Promise<{ id: number }[]> | null = null;
    await expect(
      store.db.transaction().execute(async (trx) => {
        const doc = await insertDocument(trx, {
          workspaceId, externalId: null, filePath: 'p', fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null,
        });
        await insertPages(trx, workspaceId, doc.id, [{ pageNumber: 1, content: 'rolled back', embedding: null, embeddingModel: null, paragraphs: [] }]);
        read = store.readPages({ workspaceId, after: 0, limit: 500 });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await read!).map((p) => p.id)).toEqual(pageIds);
  });

  it('reports a failure of its statement as a store error', async () => {
    await expect(store.readPages({ workspaceId, after: 0, limit: -1 })).rejects.toMatchObject({ code: expect.any(String) });
    expect(await store.readPages({ workspaceId, after: 0, limit: 1 })).toHaveLength(1);
  });
});

describe('readPageCopy', () => {
  const header = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
  const trailer = Buffer.from([0xff, 0xff]);

  it('reads an output without rows', () => {
    expect(readPageCopy(Buffer.concat([header, trailer])).ids).toHaveLength(0);
  });

  it('refuses what is not COPY binary output, a truncated output, and rows of other columns', () => {
    expect(() => readPageCopy(Buffer.from('1\t2\tcontent\n'))).toThrow(/not the output of COPY/);
    expect(() => readPageCopy(header)).toThrow(RangeError);
    const twoFields = Buffer.from([0, 2, 0, 0, 0, 1, 7, 0xff, 0xff, 0xff, 0xff]);
    expect(() => readPageCopy(Buffer.concat([header, twoFields, trailer]))).toThrow(/a row of 2 fields/);
  });
});

describe.runIf(ENGINES.includes('postgres'))("the server engine's page-read thread", () => {
  it('ends with the store, after the reads asked before: a read after close fails as on a lost connection', async () => {
    const store = await openTestStore('postgres');
    const workspaceId = (await store.db.insertInto('workspaces').values({ name: 'closing' }).returning('id').executeTakeFirstOrThrow()).id;
    expect(await store.readPages({ workspaceId, after: 0, limit: 10 })).toEqual([]);
    // The second waits for the thread's one connection while the close arrives.
    const asked = [store.readPages({ ids: [1, 2, 3] }), store.readPages({ workspaceId, after: 0, limit: 10 })];
    await store.close();
    expect(await Promise.all(asked)).toEqual([[], []]);
    await expect(store.readPages({ workspaceId, after: 0, limit: 10 })).rejects.toMatchObject({ kind: 'connection_failed' });
  });

  it('reads on a new connection after the server ends the one it had', async () => {
    const store = await openTestStore('postgres');
    const name = `folio_copy_${store.schema}`;
    const thread = new CopyThread({ connectionString: `${POSTGRES_URL}?application_name=${name}`, settings: `SET search_path TO ${store.schema}` });
    try {
      const workspaceId = (await store.db.insertInto('workspaces').values({ name: 'ended' }).returning('id').executeTakeFirstOrThrow()).id;
      expect(await thread.readPages({ workspaceId, after: 0, limit: 10 })).toEqual([]);
      const ended = await sql<{ n: number }>`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = ${name}`.execute(store.db);
      expect(ended.rows[0].n).toBe(1);
      // The next read may still meet the ended connection (and fail); none waits for ever, and then reads go on.
      await thread.readPages({ workspaceId, after: 0, limit: 10 }).catch((error: unknown) => expect(error).toBeInstanceOf(Error));
      expect(await thread.readPages({ workspaceId, after: 0, limit: 10 })).toEqual([]);
    } finally {
      await thread.close();
      await store.close();
    }
  });

  it('reports a server it cannot reach at every read, with no read left waiting', async () => {
    const thread = new CopyThread({ connectionString: 'postgres://postgres@127.0.0.1:1/test', settings: 'SELECT 1' });
    try {
      await expect(thread.readPages({ ids: [1] })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      await expect(thread.readPages({ ids: [2] })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      await thread.close();
    }
  });
});
