// The webhook signature (HMAC-SHA256 over "<t>.<body>", checked against a known vector and the
// verification recipe of docs/guides/webhooks.md) and the retry schedule (8 attempts over about 24 h, jittered).
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_BASE_MS, MAX_DELIVERY_ATTEMPTS, retryDelayMs } from '../../src/webhooks/backoff.js';
import { newSecret, signature, signatureHeader } from '../../src/webhooks/signature.js';
import { verifyFolioSignature } from '../helpers/webhook-receiver.js';

describe('webhook signature', () => {
  it('is the hex HMAC-SHA256 of "<t>.<body>" under the secret', () => {
    // Computed apart: printf '%s' '1700000000.{"a":1}' | openssl dgst -sha256 -hmac s3cret
    const expected = '1698a50bc74d1ff1db85c4e0a5297c2ad9fdba245d5737cdb789e4cc6e098940';
    expect(signature('s3cret', 1700000000, '{"a":1}')).toBe(expected);
    expect(signatureHeader('s3cret', 1700000000, '{"a":1}')).toBe(`t=1700000000,v1=${expected}`);
    expect(signature('s3cret', 1700000001, '{"a":1}')).not.toBe(expected);
  });

  it('passes the documented check, which refuses another secret or body and an old or future time', () => {
    const secret = newSecret();
    const body = JSON.stringify({ id: 'e1', type: 'task.completed', created_at: new Date().toISOString(), data: { progress: 100 } });
    const now = Math.floor(Date.now() / 1000);
    expect(verifyFolioSignature(secret, signatureHeader(secret, now, body), body)).toBe(true);
    expect(verifyFolioSignature(secret, signatureHeader(secret, now - 200, body), body)).toBe(true);
    expect(verifyFolioSignature(newSecret(), signatureHeader(secret, now, body), body)).toBe(false);
    expect(verifyFolioSignature(secret, signatureHeader(secret, now, body), body.replace('100', '99'))).toBe(false);
    expect(verifyFolioSignature(secret, signatureHeader(secret, now - 301, body), body)).toBe(false);
    expect(verifyFolioSignature(secret, signatureHeader(secret, now + 301, body), body)).toBe(false);
    expect(verifyFolioSignature(secret, `t=${now},v1=abc`, body)).toBe(false);
    expect(verifyFolioSignature(secret, 'garbage', body)).toBe(false);
  });

  it('makes distinct, long secrets', () => {
    const secrets = new Set(Array.from({ length: 100 }, newSecret));
    expect(secrets.size).toBe(100);
    for (const s of secrets) expect(s).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  });
});

describe('webhook retry schedule', () => {
  const nominal = (attempt: number, base = DEFAULT_RETRY_BASE_MS) => retryDelayMs(attempt, base, MAX_DELIVERY_ATTEMPTS, () => 0.5);

  it('waits base × 3^(n−1) after failed attempt n, 8 attempts over about 24 h', () => {
    const waits = Array.from({ length: MAX_DELIVERY_ATTEMPTS - 1 }, (_, i) => nominal(i + 1));
    expect(waits).toEqual([80_000, 240_000, 720_000, 2_160_000, 6_480_000, 19_440_000, 58_320_000]);
    const total = waits.reduce((sum, w) => sum! + w!, 0)!;
    expect(total / 3600_000).toBeCloseTo(24.3, 1);
    expect(nominal(MAX_DELIVERY_ATTEMPTS)).toBeNull();
    expect(nominal(MAX_DELIVERY_ATTEMPTS + 3)).toBeNull();
  });

  it('jitters each wait within ±20 % and follows the base and the attempt limit it is given', () => {
    for (let attempt = 1; attempt < MAX_DELIVERY_ATTEMPTS; attempt++) {
      const mid = nominal(attempt)!;
      expect(retryDelayMs(attempt, DEFAULT_RETRY_BASE_MS, MAX_DELIVERY_ATTEMPTS, () => 0)).toBe(Math.round(mid * 0.8));
      expect(retryDelayMs(attempt, DEFAULT_RETRY_BASE_MS, MAX_DELIVERY_ATTEMPTS, () => 0.999999)).toBeLessThanOrEqual(Math.round(mid * 1.2));
      const random = retryDelayMs(attempt, DEFAULT_RETRY_BASE_MS)!;
      expect(random).toBeGreaterThanOrEqual(mid * 0.8 - 1);
      expect(random).toBeLessThanOrEqual(mid * 1.2 + 1);
    }
    expect([1, 2, 3].map((n) => retryDelayMs(n, 100, 4, () => 0.5))).toEqual([100, 300, 900]);
    expect(retryDelayMs(4, 100, 4)).toBeNull();
  });
});
