// Per-key rate limiting over HTTP: 429 with Retry-After and RateLimit-* headers, counted in
// memory by one replica or in Redis shared by two.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimiter } from '../../src/http/rate-limit.js';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';
import { IN_CI, REDIS_URL, redisUp, requireRedis } from '../helpers/redis.js';
import { openTestStore, type TestStore } from '../helpers/stores.js';

describe('rate limiting with memory counters', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { FOLIO_RATE_LIMIT: '3' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 429 with Retry-After past the limit, per key, and stores nothing then', async () => {
    const body = { embedding: vector(4), content: 'rate limited' };
    for (let i = 0; i < 3; i++) {
      const ok = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body });
      expect(ok.statusCode).toBe(201);
      expect(ok.headers['ratelimit-limit']).toBe('3');
      expect(ok.headers['ratelimit-remaining']).toBe(String(2 - i));
      expect(Number(ok.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    }
    const denied = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body });
    expect(denied.statusCode).toBe(429);
    expect(denied.json()).toMatchObject({ success: false, data: null, error: { error_code: 'RATE_LIMIT_EXCEEDED' } });
    expect(Number(denied.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(denied.headers['ratelimit-remaining']).toBe('0');
    const count = await t.store.db.selectFrom('documents').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(3);

    // Another key has its own budget; unauthenticated probes of /health are not limited.
    expect((await call(t.app, 'POST', '/api/v1/documents/delete/preview', { key: KEYS.other, body: {} })).statusCode).toBe(200);
    expect((await call(t.app, 'GET', '/health', { key: null })).statusCode).toBe(200);
  });
});

describe.skipIf(!redisUp && !IN_CI)('rate limiting shared through Redis', () => {
  let store: TestStore;
  let replicas: TestApp[];

  beforeAll(async () => {
    requireRedis();
    store = await openTestStore('pglite');
    const prefix = `folio:rl:test-${randomBytes(6).toString('hex')}:`;
    replicas = await Promise.all(
      [0, 1].map(() =>
        startTestApp('pglite', {
          store,
          rateLimiter: createRedisRateLimiter(REDIS_URL, 4, {
            prefix,
            onError: (err) => {
              throw err;
            },
          }),
        }),
      ),
    );
  });
  afterAll(async () => {
    for (const r of replicas ?? []) await r.close();
    await store?.close();
  });

  it('counts requests to both replicas against one limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await call(replicas[i % 2].app, 'GET', '/api/v1/tasks/status/IngestEmbedding:x', { key: KEYS.read });
      statuses.push(res.statusCode);
      if (res.statusCode === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(statuses).toEqual([404, 404, 404, 404, 429, 429]);
  });
});
