// The one-statement write of embedded documents stores exactly what the transaction of
// separate statements stores, and stands aside (writing nothing) when a webhook endpoint of
// one of the workspaces needs the changes' events recorded in the same transaction.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEmbeddedDocuments, insertEmbeddedDocumentsUnwatched, type EmbeddedDocument } from '../../src/store/document-writes.js';
import { insertWebhook } from '../../src/store/webhooks.js';
import { ensureWorkspace } from '../../src/store/workspaces.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';

function item(workspaceId: number, n: number, embedding: Float32Array | null): EmbeddedDocument {
  const uuid = randomUUID();
  const task = `IngestEmbedding:${uuid}`;
  return {
    document: {
      workspaceId,
      externalId: n % 2 === 0 ? `ext-${n}` : null,
      filePath: `embedding/${uuid}`,
      fileUrl: null,
      metadata: { n, tag: n % 3 === 0 ? 'three' : 'other', nested: { quote: 'a "quoted" \\ value' } },
      source: 'embedding',
      taskIdentifier: task,
    },
    page: {
      pageNumber: 1,
      content: `Page ${n}. It has "quotes", a backslash \\ and {braces}, commas, and é.`,
      embedding,
      embeddingModel: embedding ? 'precomputed' : null,
      // Paragraphs of several, one and no sentences, with characters an array literal must escape.
      paragraphs: [
        { content: `First of ${n}.`, sentences: [`Sentence one of ${n}.`, 'Sentence "two", {with} a \\ backslash.', 'NULL'] },
        { content: 'Second.', sentences: ['Only one.'] },
        { content: '', sentences: [] },
      ].slice(0, 1 + (n % 3)),
    },
    task: { identifier: task, workspaceId, kind: 'IngestEmbedding', status: 'COMPLETED', progress: 100, title: `Ingest ${n}`, message: 'Completed' },
  };
}

const vector = (dims: number, seed: number) => Float32Array.from({ length: dims }, (_, i) => Math.sin(seed * 31 + i) / (i + 1));

describe.each(ENGINES)('embedded documents written in one statement (%s)', (engine) => {
  let store: TestStore;
  let quiet: number;
  let watched: number;

  beforeAll(async () => {
    store = await openTestStore(engine);
    quiet = await ensureWorkspace(store.db, 'quiet');
    watched = await ensureWorkspace(store.db, 'watched');
    await insertWebhook(store.db, { workspaceId: watched, url: 'http://127.0.0.1:9/hook', events: ['task.completed'], description: null, secret: 's' });
  });
  afterAll(async () => {
    await store.close();
  });

  /** Everything stored for the documents, with ids replaced by their order. */
  async function stored(ids: number[]) {
    const docs = await store.db.selectFrom('documents').selectAll().where('id', 'in', ids).orderBy('id').execute();
    const pages = await store.db.selectFrom('pages').select(['id', 'document_id', 'workspace_id', 'page_number', 'content', 'embedding', 'embedding_model', sql<string>`tsv::text`.as('tsv')]).where('document_id', 'in', ids).orderBy('id').execute();
    const paragraphs = await store.db.selectFrom('paragraphs').select(['page_id', 'paragraph_index', 'content', 'sentences', 'sentence_ids']).where('page_id', 'in', pages.map((p) => p.id)).orderBy('page_id').orderBy('paragraph_index').execute();
    const tasks = await store.db.selectFrom('tasks').select(['identifier', 'workspace_id', 'kind', 'status', 'progress', 'title', 'message', 'payload', 'document_id']).where('document_id', 'in', ids).orderBy('document_id').execute();
    const docIndex = (id: number) => ids.indexOf(id);
    const pageIndex = new Map(pages.map((p, i) => [p.id, i]));
    return {
      documents: docs.map((d) => ({ ...d, id: docIndex(d.id), file_path: '', task_identifier: '', created_at: null, updated_at: null, txid: null })),
      pages: pages.map((p) => ({ ...p, id: null, document_id: docIndex(p.document_id), embedding: p.embedding ? Array.from(new Float32Array(new Uint8Array(p.embedding).buffer)) : null })),
      paragraphs: paragraphs.map((p) => ({ ...p, page_id: pageIndex.get(p.page_id), sentence_ids: p.sentence_ids.length })),
      tasks: tasks.map((t) => ({ ...t, identifier: '', document_id: docIndex(t.document_id!) })),
      sentenceIds: paragraphs.flatMap((p) => p.sentence_ids.map(Number)),
    };
  }

  it('stores what the separate statements store, with ids in order', async () => {
    // Embeddings of different sizes and none, so each is cut from the shared parameter at its own offset.
    const make = () => [item(quiet, 0, vector(8, 1)), item(quiet, 1, null), item(quiet, 2, vector(1536, 2)), item(quiet, 3, vector(3, 3)), item(quiet, 4, vector(8, 4))];
    const viaTransaction = make();
    const viaStatement = make();
    const expectedIds = await insertEmbeddedDocuments(store.db, viaTransaction);
    const writes = store.localWrites?.count;
    const ids = await insertEmbeddedDocumentsUnwatched(store.db, viaStatement);
    expect(ids).not.toBeNull();
    // The embedded engine's write count moves, so the page index's next search catches up.
    if (engine === 'pglite') expect(store.localWrites!.count).toBeGreaterThan(writes!);
    expect(ids).toHaveLength(5);
    expect([...ids!].sort((a, b) => a - b)).toEqual(ids);
    expect(Math.min(...ids!)).toBeGreaterThan(Math.max(...expectedIds));

    const expected = await stored(expectedIds);
    const actual = await stored(ids!);
    expect(actual.documents).toEqual(expected.documents);
    expect(actual.pages).toEqual(expected.pages);
    expect(actual.paragraphs).toEqual(expected.paragraphs);
    expect(actual.tasks).toEqual(expected.tasks);
    // Each document's tasks and file paths are its own.
    const rows = await store.db.selectFrom('documents').select(['id', 'task_identifier', 'file_path']).where('id', 'in', ids!).execute();
    for (const [i, id] of ids!.entries()) {
      expect(rows.find((r) => r.id === id)).toMatchObject({ task_identifier: viaStatement[i].document.taskIdentifier, file_path: viaStatement[i].document.filePath });
    }
    // Sentence ids are new, distinct and follow the reading order.
    expect(actual.sentenceIds).toEqual([...actual.sentenceIds].sort((a, b) => a - b));
    expect(Math.min(...actual.sentenceIds)).toBeGreaterThan(Math.max(...expected.sentenceIds));
    expect(new Set(actual.sentenceIds).size).toBe(actual.sentenceIds.length);
  });

  it('writes nothing and answers null when a workspace of the batch has an active endpoint', async () => {
    const count = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM documents`.execute(store.db)).rows[0].n);
    const before = await count();
    expect(await insertEmbeddedDocumentsUnwatched(store.db, [item(quiet, 5, vector(4, 5)), item(watched, 6, vector(4, 6))])).toBeNull();
    expect(await count()).toBe(before);
    const pages = await sql<{ n: string }>`SELECT count(*) AS n FROM pages WHERE workspace_id = ${watched}`.execute(store.db);
    expect(Number(pages.rows[0].n)).toBe(0);

    // A disabled endpoint wants no events: the batch is written.
    await store.db.updateTable('webhooks').set({ disabled_at: new Date(), disabled_reason: 'test' }).where('workspace_id', '=', watched).execute();
    const ids = await insertEmbeddedDocumentsUnwatched(store.db, [item(watched, 7, vector(4, 7))]);
    expect(ids).toHaveLength(1);
    expect(await count()).toBe(before + 1);
  });

  it('fails whole: a batch with a row the store refuses writes none of it', async () => {
    const count = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM pages`.execute(store.db)).rows[0].n);
    const before = await count();
    const bad = item(quiet, 8, vector(4, 8));
    bad.page.content = 'a NUL \u0000 character';
    await expect(insertEmbeddedDocumentsUnwatched(store.db, [item(quiet, 9, vector(4, 9)), bad])).rejects.toThrow();
    expect(await count()).toBe(before);
  });
});

describe("embedded documents written on the embedded engine's thread", () => {
  let store: TestStore;
  let quiet: number;
  let watched: number;

  beforeAll(async () => {
    store = await openTestStore('pglite');
    quiet = await ensureWorkspace(store.db, 'quiet');
    watched = await ensureWorkspace(store.db, 'watched');
    await insertWebhook(store.db, { workspaceId: watched, url: 'http://127.0.0.1:9/hook', events: ['task.completed'], description: null, secret: 's' });
  });
  afterAll(async () => {
    await store.close();
  });

  const documentsOf = async (ids: number[]) =>
    (await store.db.selectFrom('documents').select(['id', 'task_identifier']).where('id', 'in', ids).orderBy('id').execute()).map((d) => d.task_identifier);

  it('stores each batch sent together, answers a failing or watched one alone, and counts the writes', async () => {
    const first = [item(quiet, 10, vector(8, 10)), item(quiet, 11, null)];
    const failing = [item(quiet, 12, vector(8, 12)), item(987654, 13, vector(8, 13))];
    const watchedOne = [item(watched, 14, vector(8, 14))];
    const last = [item(quiet, 15, vector(1536, 15))];
    const writes = store.localWrites!.count;
    // The thread is busy with a statement while the batches arrive, so they wait there together.
    const busy = sql`SELECT count(*) FROM generate_series(1, 2000000)`.execute(store.db);
    await new Promise((resolve) => setImmediate(resolve));
    const [a, b, c, d] = await Promise.allSettled([first, failing, watchedOne, last].map((items) => store.writeEmbedded!(items)));
    await busy;
    expect(a.status === 'fulfilled' && (await documentsOf(a.value!))).toEqual(first.map((i) => i.document.taskIdentifier));
    // A workspace that does not exist: the foreign key refuses the batch, and only it.
    expect(b.status).toBe('rejected');
    expect(await store.db.selectFrom('documents').select('id').where('task_identifier', 'in', failing.map((i) => i.document.taskIdentifier)).execute()).toEqual([]);
    expect(c).toEqual({ status: 'fulfilled', value: null });
    expect(d.status === 'fulfilled' && (await documentsOf(d.value!))).toEqual(last.map((i) => i.document.taskIdentifier));
    expect(store.localWrites!.count).toBeGreaterThanOrEqual(writes + 2);
  });

  it('waits for a transaction the session has open and writes outside it', async () => {
    const items = [item(quiet, 20, vector(8, 20))];
    let written: Promise<number[] | null> | undefined;
    let settled = false;
    await expect(
      store.db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        written = store.writeEmbedded!(items);
        void written.finally(() => (settled = true));
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(settled).toBe(false);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const ids = await written!;
    expect(await documentsOf(ids!)).toEqual([items[0].document.taskIdentifier]);
  });
});
