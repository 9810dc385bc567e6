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

/** Scratch kept for the next search: at a million isotropic rows a fifth of them pass the first reach. */
let nearScratch = new Int32Array(1024);
let boundScratch = new Float64Array(1024);

/** `buffer`, or a larger one holding its first `kept` values when it has no room for `size`. */
function roomFor<T extends Int32Array | Float64Array>(buffer: T, size: number, kept: number): T {
  if (size <= buffer.length) return buffer;
  const grown = new (buffer.constructor as { new (length: number): T })(Math.max(size, buffer.length * 2));
  grown.set(buffer.subarray(0, kept));
  return grown;
}

/**
 * Writes the bound of the rows at `count` of `positions` into `out` (in that order): called
 * once for many rows, so that a level's bounds are computed in one loop over its columns.
 */
export type PositionBounds = (positions: Int32Array, count: number, out: Float64Array) => void;

/**
 * The positions (increasing) of the scanned rows that may be among the k best, and for each
 * hit whether it is one of them (1) or not (0). `bounds` gives the bounds of the distance
 * between rows' approximate and exact cosines, and `widest` bounds every one; `rowless` are the
 * exact relevances of the hits without a row. `isHit` is scratch, 0 everywhere on entry and on
 * return.
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
  bounds: PositionBounds,
  widest: number,
  hits: PositionHits,
  rowless: readonly number[],
  { alpha, k, minRelevance }: ShortlistQuery,
  isHit: Uint8Array,
): { positions: Int32Array; hitKept: Uint8Array } {
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
  // First the rows not below that reach, in a loop that does nothing else (most rows are below
  // it), then among those the rows not below the reach as the k-th best rises.
  let near = nearScratch;
  let nearCount = 0;
  for (let i = 0; i < n; i++) {
    if (approx[i] < reach) continue;
    if (nearCount === near.length) nearScratch = near = roomFor(near, nearCount + 1, nearCount);
    near[nearCount++] = i;
  }
  const others = new KthOfStream(k);
  let floor = -Infinity;
  let kept = 0;
  for (let j = 0; j < nearCount; j++) {
    const i = near[j];
    const a = approx[i];
    if (a < reach || isHit[i] === 1) continue;
    near[kept++] = i;
    others.add(a);
    if (others.floor !== floor) {
      floor = others.floor;
      reach = Math.max(reach, reachOf(floor));
    }
  }
  nearCount = kept;
  const lows = [...rowless];
  for (const a of others.values()) lows.push(alpha * semanticScore(a - widest));
  // A lower threshold from every hit with the widest bound; the hits that may reach it then
  // with their own.
  const wide = new KthOfStream(k);
  for (const low of lows) wide.add(low);
  for (let h = 0; h < found; h++) wide.add(alpha * semanticScore(approx[hits.positions[h]] - widest) + hits.keywords[h]);
  const wideThreshold = kthLargest(wide.values(), k);
  const open: number[] = [];
  for (let h = 0; h < found; h++) {
    if (!(alpha * semanticScore(approx[hits.positions[h]] + widest) + hits.keywords[h] < wideThreshold)) open.push(h);
  }
  const openPositions = new Int32Array(open.length);
  open.forEach((h, j) => (openPositions[j] = hits.positions[h]));
  boundScratch = roomFor(boundScratch, Math.max(open.length, nearCount), 0);
  const bound = boundScratch;
  bounds(openPositions, open.length, bound);
  const uppers = new Float64Array(open.length);
  open.forEach((h, j) => {
    const a = approx[openPositions[j]];
    lows.push(alpha * semanticScore(a - bound[j]) + hits.keywords[h]);
    uppers[j] = alpha * semanticScore(a + bound[j]) + hits.keywords[h];
  });
  const threshold = kthLargest(lows, k);
  // A row is kept when alpha x semantic(cosine + bound) reaches max(threshold, just above
  // min_relevance): a cosine below that over alpha, less the widest bound, cannot.
  const needed = Math.max(threshold, minRelevance);
  const cut = alpha > 0 ? needed / alpha - widest - 1e-9 : Infinity;
  let reaching = 0;
  for (let j = 0; j < nearCount; j++) if (approx[near[j]] >= cut) near[reaching++] = near[j];
  bounds(near, reaching, bound);
  const positions = new Int32Array(reaching + open.length);
  kept = 0;
  for (let j = 0; j < reaching; j++) {
    const upper = alpha * semanticScore(approx[near[j]] + bound[j]);
    if (upper >= threshold && upper > minRelevance) positions[kept++] = near[j];
  }
  for (let h = 0; h < found; h++) isHit[hits.positions[h]] = 0;
  const hitKept = new Uint8Array(found);
  const nearKept = kept;
  open.forEach((h, j) => {
    if (uppers[j] >= threshold && uppers[j] > minRelevance) {
      hitKept[h] = 1;
      positions[kept++] = hits.positions[h];
    }
  });
  // The near rows are in order: only the hits' need sorting in.
  const out = positions.subarray(0, kept);
  if (kept > nearKept) out.sort();
  return { positions: out, hitKept };
}
