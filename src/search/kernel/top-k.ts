type Id = number | bigint | string;

/**
 * Positions of the `k` highest scores, best first. Equal scores are ordered by
 * `ids` ascending (an array, or the id of a position), by position without ids, so results
 * are deterministic.
 * Keeps a heap of the k best seen: O(n log k), no sort of all n.
 */
export function topK(scores: ArrayLike<number>, k: number, ids?: ArrayLike<Id> | ((i: number) => Id)): Int32Array {
  const idOf = typeof ids === 'function' ? ids : (i: number): Id => (ids ? ids[i] : i);
  // True when position a ranks below position b.
  const worse = (a: number, b: number): boolean =>
    scores[a] < scores[b] || (scores[a] === scores[b] && idOf(a) > idOf(b));
  const heap: number[] = []; // min-heap on rank: the worst kept result at heap[0]
  // A swap through a temporary: destructuring allocated an array per swap (about 7 KB a search).
  const swap = (a: number, b: number): void => {
    const t = heap[a];
    heap[a] = heap[b];
    heap[b] = t;
  };
  const siftDown = (from: number): void => {
    for (let i = from; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l], heap[m])) m = l;
      if (r < heap.length && worse(heap[r], heap[m])) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  const n = scores.length;
  const keep = Math.max(0, Math.min(k, n));
  let i = 0;
  for (; i < n && heap.length < keep; i++) {
    heap.push(i);
    for (let c = heap.length - 1, p = (c - 1) >> 1; c > 0 && worse(heap[c], heap[p]); c = p, p = (c - 1) >> 1) swap(c, p);
  }
  if (keep > 0) {
    // The worst kept score in a local: most positions fall below it and cost one comparison
    // (100k scores: 1.7 ns a position instead of 4).
    let floor = scores[heap[0]];
    for (; i < n; i++) {
      const score = scores[i];
      // Replaced exactly when worse(heap[0], i): a NaN score never enters, as there.
      if (!(score > floor || (score === floor && worse(heap[0], i)))) continue;
      heap[0] = i;
      siftDown(0);
      floor = scores[heap[0]];
    }
  }
  return Int32Array.from(heap.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0)));
}

/**
 * topK by min(hi, max(lo, scores[i])) (a cosine's semantic score, say), for many scores of
 * which few rank. Positions reaching the k-th best clamped score seen so far gather in a
 * buffer, cut back to its k best when it fills, which raises that floor; every other position
 * costs a read and a comparison of its raw score, as a raw score at or above a floor inside
 * (lo, hi] clamps to at least that floor. Clamping every score (Math.min and Math.max branch on
 * each) and writing it out took longer than the whole rest of a ranking at 50k scores.
 */
export function topKClamped(scores: Float32Array, k: number, lo: number, hi: number, idOf: (i: number) => Id): Int32Array {
  const keep = Math.max(0, Math.min(k, scores.length));
  if (keep === 0) return new Int32Array(0);
  const room = Math.max(4 * keep, 64);
  const kept = new Int32Array(room);
  const clamped = new Float64Array(room);
  let count = 0;
  let threshold = -Infinity; // ties at the floor may still rank by id; a NaN never passes
  const cut = (): void => {
    const best = topK(clamped.subarray(0, count), keep, (j) => idOf(kept[j]));
    const positions = Int32Array.from(best, (j) => kept[j]);
    const values = Float64Array.from(best, (j) => clamped[j]);
    kept.set(positions);
    clamped.set(values);
    count = best.length;
    if (count === keep && clamped[count - 1] > lo) threshold = clamped[count - 1];
  };
  for (let i = 0; i < scores.length; i++) {
    if (!(scores[i] >= threshold)) continue;
    if (count === room) {
      cut();
      if (!(scores[i] >= threshold)) continue;
    }
    kept[count] = i;
    clamped[count++] = Math.min(hi, Math.max(lo, scores[i]));
  }
  cut();
  return kept.slice(0, count);
}
