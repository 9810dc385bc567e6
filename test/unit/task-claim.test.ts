// Claiming tasks on both engines: a pending task is claimed once, and neither an idle poll nor
// a claim counts as a change the page index reads, so on the embedded engine the queue does not
// send its readers to catch up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimTask, insertTask } from '../../src/store/tasks.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';

describe.each(ENGINES)('claiming tasks on %s', (engine) => {
  let store: TestStore;
  let workspaceId: number;

  beforeAll(async () => {
    store = await openTestStore(engine);
    workspaceId = (await store.db.insertInto('workspaces').values({ name: 'claims' }).returning('id').executeTakeFirstOrThrow()).id;
  });
  afterAll(async () => {
    await store?.close();
  });

  const writes = () => store.localWrites?.count;

  it('finds nothing in an idle queue, then claims a pending task once, without moving the count the page index reads', async () => {
    const before = writes();
    expect(await claimTask(store.db, 'w1', ['ingest'], 60_000)).toBeUndefined();
    expect(writes()).toBe(before);

    await insertTask(store.db, { identifier: 'claim-me', workspaceId, kind: 'ingest', status: 'PENDING', progress: 0, title: 't', message: 'm' });
    await insertTask(store.db, { identifier: 'other-kind', workspaceId, kind: 'extract', status: 'PENDING', progress: 0, title: 't', message: 'm' });
    const claimed = await claimTask(store.db, 'w1', ['ingest'], 60_000);
    expect(claimed).toMatchObject({ identifier: 'claim-me', attempts: 1 });
    expect(await claimTask(store.db, 'w2', ['ingest'], 60_000)).toBeUndefined();
    expect(writes()).toBe(before);
    // A write the index reads moves it.
    await store.db.insertInto('documents').values({ workspace_id: workspaceId, file_path: 'p', metadata: '{}', source: 'test' }).execute();
    if (engine === 'pglite') expect(writes()).toBe(before! + 1);
  });
});
