// From the codes' approximate cosines and their bounds (store/vector-codes.ts), the scanned
// rows that may be among a search's k best: a row whose highest possible relevance cannot reach
// the k-th best lowest one, or cannot pass min_relevance, is left out. What is left is scored
// again from the float vectors, so the ranking is the float scan's.
import { SEMANTIC_MAX, semanticScore } from './scores.js';

/** A keyword hit at a scanned position, with its part of the relevance, (1 - alpha) x keyword. */
export interface PositionHit {
  position: number;
  keyword: number;
}

export interface ShortlistQuery {
  alpha: number;
  k: number;
  minRelevance: number;
}

/** The k-th largest of `values` (-Infinity when there are fewer than k), by selection on a copy. */
export function kthLargest(values: ArrayLike<number>, k: number): number {
  const all = Float64Array.from(values);
  if (k > all.length || k < 1) return -Infinity;
  // Quickselect for position k - 1 in decreasing order.
  let lo = 0;
  let hi = all.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = all[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (all[i] > pivot) i++;
      while (all[j] < pivot) j--;
      if (i <= j) {
        const t = all[i];
        all[i] = all[j];
        all[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return all[target];
}

/**
 * The positions (increasing) of the scanned rows that may be among the k best, and for each
 * hit whether it is one of them. `bound(position)` bounds the distance between a row's
 * approximate and exact cosine, and `widest` every bound; `rowless` are the exact relevances
 * of the hits without a row. `isHit` is scratch, 0 everywhere on entry and on return.
 *
 * The threshold is taken with the widest bound for the rows that are not hits (lower than with
 * their own bounds, so it keeps more rows, never fewer), which needs only their k best
 * cosines; each row kept is then checked with its own bound.
 */
export function shortlistPositions(
  approx: Float32Array,
  bound: (position: number) => number,
  widest: number,
  hits: readonly PositionHit[],
  rowless: readonly number[],
  { alpha, k, minRelevance }: ShortlistQuery,
  isHit: Uint8Array,
): { positions: number[]; hitKept: boolean[] } {
  const n = approx.length;
  const lows = [...rowless];
  const hitUppers: number[] = [];
  for (const { position, keyword } of hits) {
    const b = bound(position);
    isHit[position] = 1;
    lows.push(alpha * semanticScore(approx[position] - b) + keyword);
    hitUppers.push(alpha * semanticScore(approx[position] + b) + keyword);
  }
  // The other rows' k best cosines, kept above a floor that rises as they come, and in the
  // same pass the rows that may still reach the threshold: a row more than twice the widest
  // bound below the k-th best cosine cannot, its highest relevance being at most the k-th
  // best's lowest (equal only where semantic_score clamps both: at 0, which min_relevance >= 0
  // turns away, and at 1, which a row whose cosine is a bound below 1 cannot reach).
  const best = new Float64Array(Math.max(4 * k, 256));
  let count = 0;
  let floor = -Infinity;
  let reach = -Infinity;
  const near: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = approx[i];
    if (a < reach || isHit[i] === 1) continue;
    near.push(i);
    if (a <= floor) continue;
    if (count === best.length) {
      // Keep the k best: those above the k-th, then as many equal to it as make k.
      floor = kthLargest(best, k);
      reach = Math.min(floor - 2 * widest, SEMANTIC_MAX - widest) - 1e-9;
      const above = best.filter((v) => v > floor);
      best.set(above);
      for (count = above.length; count < k; count++) best[count] = floor;
      if (a <= floor) continue;
    }
    best[count++] = a;
  }
  for (let j = 0; j < count; j++) lows.push(alpha * semanticScore(best[j] - widest));
  const threshold = kthLargest(lows, k);
  // A row is kept when alpha x semantic(cosine + bound) reaches max(threshold, just above
  // min_relevance): a cosine below that over alpha, less the widest bound, cannot.
  const needed = Math.max(threshold, minRelevance);
  const cut = alpha > 0 ? needed / alpha - widest - 1e-9 : Infinity;
  const positions: number[] = [];
  for (const at of near) {
    if (approx[at] < cut) continue;
    const upper = alpha * semanticScore(approx[at] + bound(at));
    if (upper >= threshold && upper > minRelevance) positions.push(at);
  }
  const hitKept = hits.map(({ position }, j) => {
    isHit[position] = 0;
    const kept = hitUppers[j] >= threshold && hitUppers[j] > minRelevance;
    if (kept) positions.push(position);
    return kept;
  });
  positions.sort((x, y) => x - y);
  return { positions, hitKept };
}
