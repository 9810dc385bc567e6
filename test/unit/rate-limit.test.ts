// Rate limiter: the in-memory store on an injected clock, and the Redis store against the
// Redis server on 127.0.0.1 (required under CI=true, skipped elsewhere when absent).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IN_CI, REDIS_URL, redisUp, requireRedis } from '../helpers/redis.js';
import {
  createMemoryRateLimiter,
  createRedisRateLimiter,
  rateLimitHeaders,
  type RateLimiter,
} from '../../src/http/rate-limit.js';


function clock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('memory rate limiter', () => {
  it('denies past the limit with remaining 0 and a Retry-After', async () => {
    const c = clock();
    const rl = createMemoryRateLimiter(3, c.now);
    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push(await rl.consume('k'));
    expect(allowed.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    expect(rateLimitHeaders(allowed[0])).toEqual({
      'RateLimit-Limit': '3',
      'RateLimit-Remaining': '2',
      'RateLimit-Reset': '20',
    });

    const denied = await rl.consume('k');
    expect(denied).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 20 });
    expect(rateLimitHeaders(denied)).toMatchObject({ 'Retry-After': '20', 'RateLimit-Remaining': '0' });
  });

  it('allows again after Retry-After, and the full limit after a minute', async () => {
    const c = clock();
    const rl = createMemoryRateLimiter(3, c.now);
    for (let i = 0; i < 3; i++) await rl.consume('k');
    c.advance(19_999);
    expect((await rl.consume('k')).allowed).toBe(false);
    c.advance(1);
    expect(await rl.consume('k')).toMatchObject({ allowed: true, remaining: 0 });
    expect((await rl.consume('k')).allowed).toBe(false);

    c.advance(60_000);
    for (let i = 0; i < 3; i++) expect((await rl.consume('k')).allowed).toBe(true);
    expect((await rl.consume('k')).allowed).toBe(false);
  });

  it('admits exactly the limit in a burst when it does not divide a minute', async () => {
    const rl = createMemoryRateLimiter(7, clock().now);
    const results = [];
    for (let i = 0; i < 8; i++) results.push((await rl.consume('k')).allowed);
    expect(results).toEqual([true, true, true, true, true, true, true, false]);
  });

  it('keeps separate keys independent', async () => {
    const rl = createMemoryRateLimiter(1, clock().now);
    expect((await rl.consume('a')).allowed).toBe(true);
    expect((await rl.consume('a')).allowed).toBe(false);
    expect((await rl.consume('b')).allowed).toBe(true);
  });

  it('forgets expired keys and never holds more than maxKeys', async () => {
    const c = clock();
    const rl = createMemoryRateLimiter(10, c.now, { maxKeys: 100 });
    for (let i = 0; i < 50; i++) await rl.consume(`key-${i}`);
    expect(rl.size).toBe(50);
    c.advance(60_000);
    await rl.consume('fresh');
    expect(rl.size).toBe(1);

    for (let i = 0; i < 1000; i++) await rl.consume(`flood-${i}`);
    expect(rl.size).toBe(100);
  });

  it('rejects a limit that is not a positive integer', () => {
    expect(() => createMemoryRateLimiter(0)).toThrow(RangeError);
    expect(() => createMemoryRateLimiter(1.5)).toThrow(RangeError);
  });
});


describe.skipIf(!redisUp && !IN_CI)('redis rate limiter', () => {
  let raw: Redis;
  let prefix: string;
  const opened: RateLimiter[] = [];

  function limiter(limit: number): RateLimiter {
    // A reachable Redis must never fall back to failing open.
    const rl = createRedisRateLimiter(REDIS_URL, limit, {
      prefix,
      onError: (err) => {
        throw err;
      },
    });
    opened.push(rl);
    return rl;
  }

  beforeAll(() => {
    requireRedis();
    raw = new Redis(REDIS_URL);
  });

  beforeEach(() => {
    prefix = `folio:rl:test-${randomBytes(6).toString('hex')}:`;
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((rl) => rl.close()));
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length > 0) await raw.del(...keys);
  });

  afterAll(async () => {
    await raw?.quit();
  });

  it('shares one limit between two limiters (two API replicas)', async () => {
    const a = limiter(3);
    const b = limiter(3);
    expect(await a.consume('k')).toMatchObject({ allowed: true, remaining: 2 });
    expect(await b.consume('k')).toMatchObject({ allowed: true, remaining: 1 });
    expect(await a.consume('k')).toMatchObject({ allowed: true, remaining: 0 });
    const denied = await b.consume('k');
    expect(denied).toMatchObject({ allowed: false, limit: 3, remaining: 0 });
    expect(denied.resetSeconds).toBeGreaterThanOrEqual(19);
    expect(denied.resetSeconds).toBeLessThanOrEqual(20);
    expect((await b.consume('other')).allowed).toBe(true);
  });

  it('stores the counter under the prefix with a TTL', async () => {
    await limiter(3).consume('k');
    expect(await raw.get(`${prefix}k`)).toMatch(/^\d+$/);
    const ttl = await raw.pttl(`${prefix}k`);
    expect(ttl).toBeGreaterThan(19_000);
    expect(ttl).toBeLessThanOrEqual(20_000);
  });

  it('fails open quickly and reports the error when Redis is unreachable', async () => {
    const errors: unknown[] = [];
    const rl = createRedisRateLimiter('redis://127.0.0.1:1', 1, { onError: (err) => errors.push(err) });
    opened.push(rl);
    const started = Date.now();
    for (let i = 0; i < 3; i++) expect((await rl.consume('k')).allowed).toBe(true);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toBeInstanceOf(Error);
  });
});
