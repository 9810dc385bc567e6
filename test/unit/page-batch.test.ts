// The embedded engine reads the page index's pages (a load's batches, a catch-up's pages) on
// its own thread, in the protocol's binary format (page-batch.ts): the pages must be exactly
// those the SQL text path reads, and a read must never run inside a transaction another
// caller has open on the one session.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import { normalizeVector } from '../../src/search/vectors.js';
import { insertDocument, insertPages, type NewPage } from '../../src/store/documents.js';
import { indexedPages } from '../../src/store/pages.js';
import { openTestStore, type TestStore } from '../helpers/stores.js';

const CONTENTS = [
  'Plain words about a wing and its lift.',
  'Naïve café, façade, 東京 and Ελληνικά — non-ASCII text of every width 🚀.',
  `Quotes ' and " and a backslash \\ in the text, with O'Brien's and "it's".`,
  'A page that was never embedded.',
  'The fifth page, after the one without an embedding.',
];

describe("the page index's pages read on the embedded engine's thread", () => {
  let store: TestStore;
  let workspaceId: number;
  let otherWorkspace: number;
  const pageIds: number[] = [];

  async function addPage(workspace: number, content: string, embedded: boolean): Promise<number> {
    const doc = await insertDocument(store.db, {
      workspaceId: workspace, externalId: null, filePath: 'p', fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null,
    });
    const embedding = embedded ? normalizeVector(hashEmbed(content)) : null;
    const page: NewPage = { pageNumber: 1, content, embedding, embeddingModel: embedding ? 'test' : null, paragraphs: [] };
    const [id] = await insertPages(store.db, workspace, doc.id, [page]);
    return id;
  }

  beforeAll(async () => {
    store = await openTestStore('pglite');
    workspaceId = (await store.db.insertInto('workspaces').values({ name: 'batch' }).returning('id').executeTakeFirstOrThrow()).id;
    otherWorkspace = (await store.db.insertInto('workspaces').values({ name: 'other' }).returning('id').executeTakeFirstOrThrow()).id;
    for (const [i, content] of CONTENTS.entries()) {
      pageIds.push(await addPage(workspaceId, content, i !== 3));
      await addPage(otherWorkspace, `${content} (another workspace)`, true);
    }
  });

  afterAll(async () => {
    await store?.close();
  });

  it('gives the pages the SQL text path gives, embeddings to the bit, tsvectors in binary', async () => {
    const read = await store.readPages!({ workspaceId, after: 0, limit: 500 });
    const binary = await sql<{ tsv: Buffer }>`SELECT tsvectorsend(tsv) AS tsv FROM pages WHERE id = ANY(${pageIds}) ORDER BY id`.execute(store.db);
    const text = await indexedPages(store.db, pageIds);
    expect(read.map((p) => ({ ...p, tsv: Buffer.from(p.tsv as Uint8Array) }))).toEqual(text.map((p, i) => ({ ...p, tsv: binary.rows[i].tsv })));
    expect(read.map((p) => p.content)).toEqual(CONTENTS);
    expect(read[3].embedding).toBeNull();
    expect(read[1].embedding).toHaveLength(1536);
    expect(Buffer.from(read[2].tsv as Uint8Array).toString('latin1')).toContain('brien\0');
  });

  it('reads pages by id, in id order, as the SQL text path reads them', async () => {
    const ids = [pageIds[4], pageIds[0], 999_999, pageIds[3]];
    const read = await store.readPages!({ ids });
    expect(read.map((p) => p.id)).toEqual([pageIds[0], pageIds[3], pageIds[4]]);
    expect(read.map(({ tsv: _, ...p }) => p)).toEqual((await indexedPages(store.db, ids)).map(({ tsv: _, ...p }) => p));
    expect(await store.readPages!({ ids: [] })).toEqual([]);
  });

  it('reads from after a page, at most as many as asked', async () => {
    expect((await store.readPages!({ workspaceId, after: pageIds[1], limit: 2 })).map((p) => p.id)).toEqual(pageIds.slice(2, 4));
    expect(await store.readPages!({ workspaceId, after: pageIds[4], limit: 500 })).toEqual([]);
  });

  it('waits for a transaction open on the session, and never sees what it rolls back', async () => {
    let read: Promise<{ id: number }[]> | null = null;
    await expect(
      store.db.transaction().execute(async (trx) => {
        const doc = await insertDocument(trx, {
          workspaceId, externalId: null, filePath: 'p', fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null,
        });
        await insertPages(trx, workspaceId, doc.id, [{ pageNumber: 1, content: 'rolled back', embedding: null, embeddingModel: null, paragraphs: [] }]);
        read = store.readPages!({ workspaceId, after: 0, limit: 500 });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await read!).map((p) => p.id)).toEqual(pageIds);
  });

  it('reports a failure of its statement as a store error', async () => {
    await expect(store.readPages!({ workspaceId, after: 0, limit: -1 })).rejects.toMatchObject({ code: expect.any(String) });
    expect(await store.readPages!({ workspaceId, after: 0, limit: 1 })).toHaveLength(1);
  });
});
