// The shortlist keeps every row that can be among the k best, whatever the exact cosines are
// within the bounds: random bands of cosines, approximations at the very edge of their bounds,
// keyword hits, rows without a vector, min_relevance, and ties.
import { describe, expect, it } from 'vitest';
import { semanticScore } from '../../src/search/scores.js';
import { kthLargest, shortlistPositions } from '../../src/search/shortlist.js';

/** A seeded generator in [0, 1). */
function random(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
}

describe('shortlist', () => {
  it('keeps every row whose exact relevance can rank among the k best', () => {
    const next = random(11);
    let left = 0;
    let rows = 0;
    for (let trial = 0; trial < 400; trial++) {
      const n = 1 + Math.floor(next() * (trial % 4 === 0 ? 40 : 3000));
      const alpha = [1, 1, 0.5, 0.2, 0.9][trial % 5];
      const k = 1 + Math.floor(next() * (trial % 3 === 0 ? 200 : 30));
      const minRelevance = trial % 7 === 0 ? 0.3 * next() : 0;
      const widest = 0.02 * next();
      const centre = next() * 1.2 - 0.2;
      const band = [0.001, 0.02, 0.3][trial % 3];
      const bounds = Float64Array.from({ length: n }, () => (next() < 0.2 ? widest : widest * next()));
      const approx = Float32Array.from({ length: n }, () => centre + band * (next() - 0.5));
      // The exact cosine anywhere within the bound, often at its very edge; in every other
      // trial the worst case, the best approximations too high and the others too low.
      const exact = Array.from(approx, (a, i) => {
        const u = next();
        const side = trial % 2 === 1 ? (a > centre ? 1 : -1) : u < 0.3 ? -1 : u < 0.6 ? 1 : 2 * next() - 1;
        return a - side * bounds[i];
      });
      for (let i = 1; i < n; i += 17) {
        approx[i] = approx[i - 1];
        exact[i] = exact[i - 1];
        bounds[i] = bounds[i - 1];
      }
      const hitPositions: number[] = [];
      const keywordAt = new Float64Array(n);
      if (alpha < 1) {
        // A rare word's hits, or a common word's (most rows, most of them far below the k best).
        const share = trial % 4 === 2 ? 0.7 : 0.1;
        for (let i = 0; i < n; i++) {
          if (next() < share) {
            keywordAt[i] = (1 - alpha) * next() * 0.6;
            hitPositions.push(i);
          }
        }
      }
      const hits = { positions: Int32Array.from(hitPositions), keywords: Float64Array.from(hitPositions, (i) => keywordAt[i]) };
      const rowless = alpha < 1 ? Array.from({ length: Math.floor(next() * 5) }, () => (1 - alpha) * next() * 0.6) : [];
      const isHit = new Uint8Array(n);
      const { positions, hitKept } = shortlistPositions(
        approx,
        (at, count, out) => {
          for (let i = 0; i < count; i++) out[i] = bounds[at[i]];
        },
        widest,
        hits,
        rowless,
        { alpha, k, minRelevance },
        isHit,
      );

      const relevance = exact.map((e, i) => alpha * semanticScore(e) + keywordAt[i]);
      const kth = kthLargest([...relevance, ...rowless], k);
      const kept = new Set(positions);
      for (let i = 0; i < n; i++) {
        if (relevance[i] >= kth && relevance[i] > minRelevance) expect(kept.has(i), `trial ${trial}, row ${i}`).toBe(true);
      }
      hitPositions.forEach((position, j) => expect(hitKept[j] === 1).toBe(kept.has(position)));
      expect([...positions]).toEqual([...positions].sort((a, b) => a - b));
      expect(new Set(positions).size).toBe(positions.length);
      expect(isHit.every((v) => v === 0)).toBe(true);
      left += n - positions.length;
      rows += n;
    }
    // It is not all kept: most rows are left out.
    expect(left / rows).toBeGreaterThan(0.5);
  });

  it('keeps every row that can rank when a sample of many rows gives the first k-th best', () => {
    // Many rows, so that every 16th is sampled first: a few far above the rest (sampled or
    // not), so that the sample's best are no guide to the k-th best; ties at the k-th best.
    const next = random(23);
    for (let trial = 0; trial < 24; trial++) {
      const n = 20_000 + Math.floor(next() * 30_000);
      const k = [1, 10, 50][trial % 3];
      const alpha = trial % 4 === 3 ? 0.5 : 1;
      const widest = 0.001 + 0.01 * next();
      const approx = Float32Array.from({ length: n }, () => 0.3 + 0.2 * next());
      const outliers = Math.floor(k / 2) + (trial % 2);
      for (let o = 0; o < outliers; o++) approx[(trial % 2 === 0 ? 16 : 7) * (1 + Math.floor(next() * (n / 17)))] = 0.95;
      for (let i = 3; i < n; i += 101) approx[i] = approx[i - 3];
      const exact = Array.from(approx, (a) => a + widest * (2 * next() - 1));
      const keywordAt = new Float64Array(n);
      const hitPositions: number[] = [];
      if (alpha < 1) {
        for (let i = 5; i < n; i += 13) {
          keywordAt[i] = (1 - alpha) * next() * 0.3;
          hitPositions.push(i);
        }
      }
      const hits = { positions: Int32Array.from(hitPositions), keywords: Float64Array.from(hitPositions, (i) => keywordAt[i]) };
      const { positions } = shortlistPositions(approx, (_, count, out) => out.fill(widest, 0, count), widest, hits, [], { alpha, k, minRelevance: 0 }, new Uint8Array(n));
      const relevance = exact.map((e, i) => alpha * semanticScore(e) + keywordAt[i]);
      const kth = kthLargest(relevance, k);
      const kept = new Set(positions);
      for (let i = 0; i < n; i++) if (relevance[i] >= kth) expect(kept.has(i), `trial ${trial}, row ${i}`).toBe(true);
    }
  });

  it('finds the k-th largest value, ties and all', () => {
    expect(kthLargest([3, 1, 2], 1)).toBe(3);
    expect(kthLargest([3, 1, 2], 3)).toBe(1);
    expect(kthLargest([2, 2, 2, 1], 3)).toBe(2);
    expect(kthLargest([1], 2)).toBe(-Infinity);
    const next = random(5);
    const values = Array.from({ length: 1000 }, () => Math.floor(next() * 50));
    const sorted = [...values].sort((a, b) => b - a);
    for (const k of [1, 7, 500, 1000]) expect(kthLargest(values, k)).toBe(sorted[k - 1]);
  });
});
