// When a failed delivery is tried again: 8 attempts in all; the wait after failed attempt n is
// base × 3^(n−1) with ±20 % jitter. With the default base of 80 s the waits are 80 s, 4 min,
// 12 min, 36 min, 1.8 h, 5.4 h and 16.2 h: the eighth attempt comes about 24 h after the first.

export const MAX_DELIVERY_ATTEMPTS = 8;
export const DEFAULT_RETRY_BASE_MS = 80_000;
const FACTOR = 3;
const JITTER = 0.2;

/**
 * The wait after failed attempt `attempt` (1-based), or null when it was the last one.
 * `random` in [0, 1) picks the jitter (0.5: none), which keeps retries of a burst apart.
 */
export function retryDelayMs(attempt: number, baseMs: number, maxAttempts = MAX_DELIVERY_ATTEMPTS, random: () => number = Math.random): number | null {
  if (attempt >= maxAttempts) return null;
  const nominal = baseMs * FACTOR ** (attempt - 1);
  return Math.round(nominal * (1 - JITTER + 2 * JITTER * random()));
}
