// When the delivery loop looks again: "nothing pending" is null (it then waits its poll
// interval) and is never mistaken for a delivery due now (which made every server poll its
// database twenty times a second while no webhook existed), on both engines.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents, insertWebhook, nextDeliveryDueInMs } from '../../src/store/webhooks.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';

describe.each(ENGINES)('next webhook delivery due on %s', (engine) => {
  let store: TestStore;

  beforeAll(async () => {
    store = await openTestStore(engine);
  });

  afterAll(() => store.close());

  it('is null with nothing pending, the wait until the earliest pending one otherwise', async () => {
    expect(await nextDeliveryDueInMs(store.db)).toBeNull();

    const workspaceId = (await store.db.insertInto('workspaces').values({ name: 'hooks' }).returning('id').executeTakeFirstOrThrow()).id;
    const hook = await insertWebhook(store.db, { workspaceId, url: 'https://example.com/hook', events: ['task.completed'], description: null, secret: 's' });
    expect(await nextDeliveryDueInMs(store.db)).toBeNull();

    expect(await insertEvents(store.db, [{ id: 'e1', workspaceId, type: 'task.completed', data: {} }])).toBe(1);
    expect(await nextDeliveryDueInMs(store.db)).toBe(0);

    await sql`UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp() + interval '10 seconds'`.execute(store.db);
    const due = await nextDeliveryDueInMs(store.db);
    expect(due).toBeGreaterThan(9_000);
    expect(due).toBeLessThanOrEqual(10_000);

    await sql`UPDATE webhooks SET disabled_at = now() WHERE id = ${hook.id}`.execute(store.db);
    expect(await nextDeliveryDueInMs(store.db)).toBeNull();
  });
});
