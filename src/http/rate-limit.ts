// Per-API-key rate limiting: N requests per minute, enforced with GCRA (the generic cell
// rate algorithm), which allows a burst of N and then spreads requests evenly instead of
// letting 2N through around a fixed window's edge. Two stores: in-process for a single
// replica, Redis for replicas that must share one limit.
import type { Redis } from 'ioredis';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /**
   * Seconds until the quota resets, >= 1: when allowed, until the full limit is back;
   * when denied, until the next request will be allowed (so it doubles as Retry-After).
   */
  resetSeconds: number;
}

export interface RateLimiter {
  consume(key: string): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

export interface MemoryRateLimiter extends RateLimiter {
  /** Keys currently tracked (for tests and metrics). */
  readonly size: number;
}

export interface RedisRateLimiterOptions {
  /** Prefix for the counter keys; defaults to "folio:rl:". */
  prefix?: string;
  /** Told about every Redis failure; the request is allowed anyway. */
  onError?: (err: unknown) => void;
}

const PERIOD_US = 60_000_000;
const DEFAULT_MAX_KEYS = 100_000;

// Time is kept in integer microseconds so both stores do exact integer arithmetic.
// `window` is the limit expressed in time: a key may be booked at most this far ahead.
interface Gcra {
  limit: number;
  interval: number;
  window: number;
}

function gcraParams(limit: number): Gcra {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`rate limit must be a positive integer, got ${limit}`);
  }
  const interval = Math.max(1, Math.floor(PERIOD_US / limit));
  return { limit, interval, window: interval * limit };
}

function decision(g: Gcra, allowed: boolean, remaining: number, waitUs: number): RateLimitDecision {
  return { allowed, limit: g.limit, remaining, resetSeconds: Math.max(1, Math.ceil(waitUs / 1e6)) };
}

/** One GCRA step; `stored` is the key's theoretical arrival time, if it has one. */
function gcraStep(g: Gcra, stored: number | undefined, now: number): { tat?: number; decision: RateLimitDecision } {
  const tat = Math.max(stored ?? now, now) + g.interval;
  const ahead = tat - now;
  if (ahead > g.window) return { decision: decision(g, false, 0, ahead - g.window) };
  return { tat, decision: decision(g, true, Math.floor((g.window - ahead) / g.interval), ahead) };
}

export function createMemoryRateLimiter(
  limitPerMinute: number,
  now: () => number = Date.now,
  options: { maxKeys?: number } = {},
): MemoryRateLimiter {
  const g = gcraParams(limitPerMinute);
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  // key -> theoretical arrival time (µs). Map order is least recently used first, so
  // expired keys collect at the front and the bound evicts the coldest key.
  const tats = new Map<string, number>();

  return {
    get size() {
      return tats.size;
    },
    async consume(key) {
      const t = Math.round(now() * 1000);
      for (const [k, tat] of tats) {
        if (tat > t) break;
        tats.delete(k);
      }
      const stored = tats.get(key);
      const step = gcraStep(g, stored, t);
      const tat = step.tat ?? stored;
      if (tat !== undefined) {
        tats.delete(key);
        tats.set(key, tat);
      }
      if (tats.size > maxKeys) {
        const oldest = tats.keys().next();
        if (!oldest.done) tats.delete(oldest.value);
      }
      return step.decision;
    },
    async close() {
      tats.clear();
    },
  };
}

// The same step as gcraStep, atomic in Redis. It uses Redis' clock so that replicas with
// skewed clocks still agree. KEYS[1] holds the arrival time; ARGV: interval, limit.
// Returns {allowed, remaining, wait in µs}.
const GCRA_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local window = interval * tonumber(ARGV[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[1])) or now, now) + interval
local ahead = tat - now
if ahead > window then
  return {0, 0, ahead - window}
end
redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil(ahead / 1000))
return {1, math.floor((window - ahead) / interval), ahead}
`;

export function createRedisRateLimiter(
  redisUrl: string,
  limitPerMinute: number,
  options: RedisRateLimiterOptions = {},
): RateLimiter {
  const g = gcraParams(limitPerMinute);
  const prefix = options.prefix ?? 'folio:rl:';
  // ioredis is loaded with the first request, so that a service without Redis never loads it.
  let redis: Redis | null = null;
  let loading: Promise<Redis> | undefined;
  const client = (): Promise<Redis> =>
    (loading ??= import('ioredis').then(({ Redis }) => {
      // Every wait is bounded: no offline queue (commands fail at once while disconnected),
      // short connect and command timeouts, one retry; reconnection goes on in the background.
      const created = new Redis(redisUrl, {
        lazyConnect: true,
        connectTimeout: 500,
        commandTimeout: 500,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        retryStrategy: (times) => Math.min(times * 200, 2000),
      });
      // Failures reach the caller through onError per request; this only keeps ioredis from
      // printing each failed reconnect.
      created.on('error', () => {});
      return (redis = created);
    }));

  let connecting: Promise<void> | undefined;
  async function connected(): Promise<Redis> {
    const r = await client();
    if (r.status === 'wait') {
      connecting ??= r.connect().finally(() => {
        connecting = undefined;
      });
    }
    await connecting;
    return r;
  }

  return {
    async consume(key) {
      try {
        const r = await connected();
        const reply = (await r.eval(GCRA_SCRIPT, 1, prefix + key, g.interval, g.limit)) as number[];
        const [allowed, remaining, waitUs] = reply;
        return decision(g, allowed === 1, remaining, waitUs);
      } catch (err) {
        // Fail open: the limit protects the API, so an outage of the shared counter must
        // not take the API down with it. The caller logs through onError.
        options.onError?.(err);
        return gcraStep(g, undefined, 0).decision;
      }
    },
    async close() {
      const r = redis;
      if (!r) return;
      if (r.status === 'ready') await r.quit().catch(() => r.disconnect());
      else r.disconnect();
    },
  };
}

export function rateLimitHeaders(d: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.resetSeconds),
  };
  if (!d.allowed) headers['Retry-After'] = String(d.resetSeconds);
  return headers;
}
