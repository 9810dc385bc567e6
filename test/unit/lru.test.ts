// The service's cache shape: least recently used out first, within a count or a weight.
import { describe, expect, it } from 'vitest';
import { LruMap } from '../../src/lru.js';

describe('LruMap', () => {
  it('keeps at most its capacity of entries, dropping the least recently used', () => {
    const lru = new LruMap<string, number | null>(2);
    lru.set('a', 1);
    lru.set('b', null);
    expect(lru.get('a')).toBe(1); // b is now the least recently used
    lru.set('c', 3);
    expect([lru.has('a'), lru.has('b'), lru.has('c')]).toEqual([true, false, true]);
    expect(lru.get('b')).toBeUndefined();
    lru.set('a', 10); // replacing a value does not grow the map
    expect(lru.size).toBe(2);
    expect(lru.get('a')).toBe(10);
  });

  it('keeps null values apart from absent ones', () => {
    const lru = new LruMap<string, null>(2);
    lru.set('stop', null);
    expect(lru.has('stop')).toBe(true);
    expect(lru.get('stop')).toBeNull();
    expect(lru.delete('stop')).toBe(true);
    expect(lru.delete('stop')).toBe(false);
  });

  it('weighs entries, and does not keep one heavier than the whole capacity', () => {
    const lru = new LruMap<number, string>(10, (s) => s.length);
    lru.set(1, 'aaaa');
    lru.set(2, 'bbbb');
    lru.set(3, 'cccc'); // 12 > 10: 1 goes
    expect([lru.has(1), lru.has(2), lru.has(3)]).toEqual([false, true, true]);
    lru.delete(2);
    lru.set(4, 'dddddd'); // 4 + 6 = 10 fits
    expect([lru.has(3), lru.has(4)]).toEqual([true, true]);
    lru.set(5, 'x'.repeat(11));
    expect(lru.has(5)).toBe(false);
    expect(lru.size).toBe(2);
  });
});
