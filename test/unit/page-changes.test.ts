// The page index's catch-up read (store/pages.ts, migrations 0011 and 0018) on both engines:
// every change once, even while another session's open transaction holds the server's xmin
// back, a write that commits after an older transaction began still seen, and no read at all
// while the store's snapshot stays the one the index last read at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
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

  /**
   * What a read at `position` returns, then a second read at the position the first returned,
   * in one repeatable-read transaction: its snapshot stays the same, which other sessions of the
   * server would otherwise move at any time by starting transactions of their own.
   */
  async function readTwiceAtOneSnapshot(position: ReadPosition): Promise<[PageChanges, PageChanges]> {
    return store.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const first = await pageChangesSince(trx, workspaceId, position);
        return [first, await pageChangesSince(trx, workspaceId, first)];
      });
  }

  it('reads each change once and nothing at the snapshot it last read', async () => {
    const a = await addPage(store.db, 'a');
    const first = await pageChangesSince(store.db, workspaceId, START);
    expect(first.changes).toEqual([{ kind: 'insert', pageId: a.pageId }]);
    expect(first.documentsChanged).toBe(true);

    const [again, unchanged] = await readTwiceAtOneSnapshot(first);
    expect(again.changes).toEqual([]);
    expect(unchanged).toEqual({ ...again, changes: [], documentsChanged: false });

    await deleteDocuments(store.db, workspaceId, [a.documentId]);
    const afterDelete = await pageChangesSince(store.db, workspaceId, unchanged);
    expect(afterDelete.snapshot).not.toBe(first.snapshot);
    expect(afterDelete.changes).toEqual([{ kind: 'delete', pageId: a.pageId }]);
    expect(afterDelete.documentsChanged).toBe(false);
  });

  it.runIf(engine === 'postgres')('sees a write that commits late, and reads no change again while an open transaction holds xmin back', async () => {
    let commit!: () => void;
    let written!: (page: { pageId: number; xid: bigint }) => void;
    const late = new Promise<{ pageId: number; xid: bigint }>((resolve) => (written = resolve));
    // A transaction that writes and stays open holds every reader's xmin back at its own id.
    const open = store.db.transaction().execute(async (trx) => {
      const page = await addPage(trx, 'late');
      const { xid } = (await sql<{ xid: string }>`SELECT pg_current_xact_id()::text AS xid`.execute(trx)).rows[0];
      written({ ...page, xid: BigInt(xid) });
      await new Promise<void>((resolve) => (commit = resolve));
    });
    const latePage = await late;
    // Another session commits transactions all along, as other test files do on this server:
    // each moves the server's snapshot.
    let ticking = true;
    const ticker = (async () => {
      while (ticking) await sql`SELECT pg_current_xact_id()`.execute(store.db);
    })();
    let seen: PageChanges;
    try {
      const before = await pageChangesSince(store.db, workspaceId, START);
      const early = await addPage(store.db, 'early');
      seen = await pageChangesSince(store.db, workspaceId, before);
      expect(seen.changes).toEqual([{ kind: 'insert', pageId: early.pageId }]);
      expect(BigInt(seen.xmin)).toBeLessThanOrEqual(latePage.xid);
      // The window from the held-back xmin still holds that insert, read already, and the late
      // page is not committed: nothing is new, and at an unchanged snapshot nothing is read.
      const [again, unchanged] = await readTwiceAtOneSnapshot(seen);
      expect(again).toMatchObject({ changes: [], documentsChanged: false });
      expect(unchanged).toEqual({ ...again, changes: [], documentsChanged: false });
    } finally {
      ticking = false;
      await ticker;
      commit();
      await open;
    }
    const after = await pageChangesSince(store.db, workspaceId, seen);
    expect(after.changes).toContainEqual({ kind: 'insert', pageId: latePage.pageId });
  });
});
