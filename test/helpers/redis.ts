// Whether the Redis server on 127.0.0.1 answers; under CI=true a silent one fails the run.
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const IN_CI = process.env.CI === 'true';

export async function redisAnswers(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

export const redisUp = await redisAnswers();

export function requireRedis(): void {
  if (!redisUp) throw new Error(`Redis is required under CI=true but does not answer at ${REDIS_URL}`);
}
