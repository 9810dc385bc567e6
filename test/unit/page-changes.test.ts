// The page index's catch-up read (store/pages.ts, migration 0011) on both engines: every
// change once, a write that commits after an older transaction began still seen, and no
// read at all while the store's snapshot stays the one the index last read at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { deleteDocuments, insertDocument, insertPages } from '../../src/store/documents.js';
import { pageChangesSince, type PageChanges, type ReadPosition } from '../../src/store/pages.js';
import type { Database } from '../../src/store/schema.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';

const START: ReadPosition = { snapshot: '', xmin: '0' };

describe.each(ENGINES)('page changes on %s', (engine) => {
  let store: TestStore;
  let workspaceId: number;

  async function addPage(db: Kysely<Database>, name: string): Promise<{ documentId: number; pageId: number }> {
    const doc = await insertDocument(db, { workspaceId, externalId: null, filePath: name, fileUrl: null, metadata: {}, source: 'test', taskIdentifier: null });
    const [pageId] = await insertPages(db, workspaceId, doc.id, [{ pageNumber: 1, content: `page ${name}`, embedding: null, embeddingModel: null, paragraphs: [] }]);
    return { documentId: doc.id, pageId };
  }

  beforeAll(async () => {
    store = await openTestStore(engine);
    workspaceId = (await store.db.insertInto('workspaces').values({ name: 'changes' }).returning('id').executeTakeFirstOrThrow()).id;
  });

  afterAll(() => store.close());

  it('reads each change once and nothing at the snapshot it last read', async () => {
    const a = await addPage(store.db, 'a');
    const first = await pageChangesSince(store.db, workspaceId, START);
    expect(first.changes).toEqual([{ kind: 'insert', pageId: a.pageId }]);
    expect(first.documentsChanged).toBe(true);

    const unchanged = await pageChangesSince(store.db, workspaceId, first);
    expect(unchanged).toEqual({ ...first, changes: [], documentsChanged: false });

    await deleteDocuments(store.db, workspaceId, [a.documentId]);
    const afterDelete = await pageChangesSince(store.db, workspaceId, unchanged);
    expect(afterDelete.snapshot).not.toBe(first.snapshot);
    expect(afterDelete.changes).toEqual([{ kind: 'delete', pageId: a.pageId }]);
    expect(afterDelete.documentsChanged).toBe(false);
  });

  it.runIf(engine === 'postgres')('sees a write that commits late, and reads no window again while nothing commits', async () => {
    let commit!: () => void;
    let written!: (page: { pageId: number }) => void;
    const late = new Promise<{ pageId: number }>((resolve) => (written = resolve));
    // A transaction that writes and stays open holds every reader's xmin back at its own id.
    const open = store.db.transaction().execute(async (trx) => {
      const page = await addPage(trx, 'late');
      written(page);
      await new Promise<void>((resolve) => (commit = resolve));
    });
    const latePage = await late;
    let seen: PageChanges;
    try {
      const before = await pageChangesSince(store.db, workspaceId, START);
      const early = await addPage(store.db, 'early');
      seen = await pageChangesSince(store.db, workspaceId, before);
      expect(seen.changes).toEqual([{ kind: 'insert', pageId: early.pageId }]);
      // The window from the held-back xmin still holds that insert; the snapshot has not moved.
      expect(await pageChangesSince(store.db, workspaceId, seen)).toEqual({ ...seen, changes: [], documentsChanged: false });
    } finally {
      commit();
      await open;
    }
    const after = await pageChangesSince(store.db, workspaceId, seen);
    expect(after.changes).toContainEqual({ kind: 'insert', pageId: latePage.pageId });
  });
});
