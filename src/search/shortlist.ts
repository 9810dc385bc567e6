// From the codes' approximate cosines and their bounds (store/vector-codes.ts), the scanned
// rows that may be among a search's k best: a row whose highest possible relevance cannot reach
// the k-th best lowest one, or cannot pass min_relevance, is left out. What is left is scored
// again from the float vectors, so the ranking is the float scan's.
import { SEMANTIC_MAX, semanticScore } from './scores.js';

/** Every SAMPLE_STRIDE-th row is sampled for a first k-th best, when that takes SAMPLE_MIN x k rows or more. */
const SAMPLE_STRIDE = 16;
const SAMPLE_MIN = 8;

/** Keyword hits at scanned positions, each with its part of the relevance, (1 - alpha) x keyword. */
export interface PositionHits {
  positions: Int32Array;
  keywords: Float64Array;
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
 * The k-th largest of a stream of values, from a buffer of the best ones cut back to the k best
 * (those above the k-th, then as many equal to it as make k) each time it fills. `floor` is the
 * k-th largest at the last cut: a value at or below it cannot change the answer.
 */
export class KthOfStream {
  private readonly best: Float64Array;
  private count = 0;
  floor = -Infinity;

  constructor(private readonly k: number) {
    this.best = new Float64Array(Math.max(4 * k, 256));
  }

  add(value: number): void {
    if (value <= this.floor) return;
    if (this.count === this.best.length) {
      const best = this.best;
      const floor = kthLargest(best, this.k);
      let kept = 0;
      for (let i = 0; i < best.length; i++) if (best[i] > floor) best[kept++] = best[i];
      for (; kept < this.k; kept++) best[kept] = floor;
      this.count = kept;
      this.floor = floor;
      if (value <= floor) return;
    }
    this.best[this.count++] = value;
  }

  /** The values kept: every one of the k largest is among them. */
  values(): Float64Array {
    return this.best.subarray(0, this.count);
  }
}

/**
 * The positions (increasing) of the scanned rows that may be among the k best, and for each
 * hit whether it is one of them (1) or not (0). `bound(position)` bounds the distance between a
 * row's approximate and exact cosine, and `widest` every bound; `rowless` are the exact
 * relevances of the hits without a row. `isHit` is scratch, 0 everywhere on entry and on return.
 *
 * The threshold, the k-th best lowest relevance, is taken with the widest bound for the rows
 * that are not hits (lower than with their own bounds, so it keeps more rows, never fewer),
 * which needs only their k best cosines; each row kept is then checked with its own bound.
 * A hit whose highest relevance with the widest bound is below the k-th best lowest one with the
 * widest bound is below the threshold too: its own bound is not needed (a common word's hits are
 * most of the rows, and their bounds most of a hybrid search's shortlist).
 */
export function shortlistPositions(
  approx: Float32Array,
  bound: (position: number) => number,
  widest: number,
  hits: PositionHits,
  rowless: readonly number[],
  { alpha, k, minRelevance }: ShortlistQuery,
  isHit: Uint8Array,
): { positions: number[]; hitKept: Uint8Array } {
  const n = approx.length;
  const found = hits.positions.length;
  for (let h = 0; h < found; h++) isHit[hits.positions[h]] = 1;
  // The other rows' k best cosines, and in the same pass the rows that may still reach the
  // threshold: a row more than twice the widest bound below the k-th best cosine cannot, its
  // highest relevance being at most the k-th best's lowest (equal only where semantic_score
  // clamps both: at 0, which min_relevance >= 0 turns away, and at 1, which a row whose cosine
  // is a bound below 1 cannot reach).
  const reachOf = (floor: number) => Math.min(floor - 2 * widest, SEMANTIC_MAX - widest) - 1e-9;
  // Rows in order raise the k-th best slowly (a million rows of bits kept tens of thousands
  // near): the k-th best of every SAMPLE_STRIDE-th row is at most the k-th best of all, so
  // the pass starts from its reach.
  let reach = -Infinity;
  if (n >= SAMPLE_STRIDE * SAMPLE_MIN * k) {
    const sample = new KthOfStream(k);
    for (let i = 0; i < n; i += SAMPLE_STRIDE) if (isHit[i] !== 1) sample.add(approx[i]);
    reach = reachOf(kthLargest(sample.values(), k));
  }
  const others = new KthOfStream(k);
  let floor = -Infinity;
  const near: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = approx[i];
    if (a < reach || isHit[i] === 1) continue;
    near.push(i);
    others.add(a);
    if (others.floor !== floor) {
      floor = others.floor;
      reach = Math.max(reach, reachOf(floor));
    }
  }
  const lows = [...rowless];
  for (const a of others.values()) lows.push(alpha * semanticScore(a - widest));
  // A lower threshold from every hit with the widest bound; the hits that may reach it then
  // with their own.
  const wide = new KthOfStream(k);
  for (const low of lows) wide.add(low);
  for (let h = 0; h < found; h++) wide.add(alpha * semanticScore(approx[hits.positions[h]] - widest) + hits.keywords[h]);
  const wideThreshold = kthLargest(wide.values(), k);
  const open: number[] = [];
  const uppers: number[] = [];
  for (let h = 0; h < found; h++) {
    const position = hits.positions[h];
    const a = approx[position];
    if (alpha * semanticScore(a + widest) + hits.keywords[h] < wideThreshold) continue;
    const b = bound(position);
    open.push(h);
    lows.push(alpha * semanticScore(a - b) + hits.keywords[h]);
    uppers.push(alpha * semanticScore(a + b) + hits.keywords[h]);
  }
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
  for (let h = 0; h < found; h++) isHit[hits.positions[h]] = 0;
  const hitKept = new Uint8Array(found);
  open.forEach((h, j) => {
    if (uppers[j] >= threshold && uppers[j] > minRelevance) {
      hitKept[h] = 1;
      positions.push(hits.positions[h]);
    }
  });
  positions.sort((x, y) => x - y);
  return { positions, hitKept };
}
