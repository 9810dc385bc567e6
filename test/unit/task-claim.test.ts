// Claiming tasks on both engines: a pending task is claimed once, and an idle poll writes
// nothing, so on the embedded engine it does not send the page index's readers to catch up.
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

  it('finds nothing in an idle queue without writing, then claims a pending task once', async () => {
    const before = writes();
    expect(await claimTask(store.db, 'w1', ['ingest'], 60_000)).toBeUndefined();
    expect(writes()).toBe(before);

    await insertTask(store.db, { identifier: 'claim-me', workspaceId, kind: 'ingest', status: 'PENDING', progress: 0, title: 't', message: 'm' });
    await insertTask(store.db, { identifier: 'other-kind', workspaceId, kind: 'extract', status: 'PENDING', progress: 0, title: 't', message: 'm' });
    const queued = writes();
    const claimed = await claimTask(store.db, 'w1', ['ingest'], 60_000);
    expect(claimed).toMatchObject({ identifier: 'claim-me', attempts: 1 });
    if (engine === 'pglite') expect(writes()).toBeGreaterThan(queued!);
    const after = writes();
    expect(await claimTask(store.db, 'w2', ['ingest'], 60_000)).toBeUndefined();
    expect(writes()).toBe(after);
  });
});
