// Signed feature hashing, shared by the offline embedders: keys (hashed words, lexemes,
// n-grams) land in one of 1536 dimensions with a hashed sign, and each family of keys is
// normalised to its own share of the vector.
import { EMBEDDING_DIMENSIONS } from './types.js';

export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;
// Boundary markers of a word's character n-grams; never inside a token.
const WORD_START = 0x02;
const WORD_END = 0x03;

/** murmur3's finaliser: spreads FNV's weak low bits before the modulo. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

export function fnv1a(word: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), FNV_PRIME);
  return h;
}

/** Adds `value` to `key`'s entry; keys are shifted into V8's small-integer range, which keeps the maps fast. */
export function addTo(values: Map<number, number>, key: number, value: number): void {
  const k = key >> 1;
  values.set(k, (values.get(k) ?? 0) + value);
}

/** Calls `each` with the hash of every character n-gram (minN..maxN code units) of the word padded with boundary markers. */
export function eachNgram(word: string, minN: number, maxN: number, each: (hash: number) => void): void {
  const padded = word.length + 2;
  for (let start = 0; start + minN <= padded; start++) {
    const end = Math.min(padded, start + maxN);
    let h = FNV_OFFSET;
    for (let i = start; i < end; i++) {
      const code = i === 0 ? WORD_START : i === padded - 1 ? WORD_END : word.charCodeAt(i - 1);
      h = Math.imul(h ^ code, FNV_PRIME);
      if (i - start + 1 >= minN) each(h);
    }
  }
}

// All zero between calls of addFamily.
const scratch = new Float64Array(EMBEDDING_DIMENSIONS);
const touched = new Int32Array(EMBEDDING_DIMENSIONS);
const isTouched = new Uint8Array(EMBEDDING_DIMENSIONS);
const ALL_DIMENSIONS = Int32Array.from({ length: EMBEDDING_DIMENSIONS }, (_, d) => d);
/**
 * Families of at most this many keys (a query's) are summed over the dimensions they touch
 * instead of over all 1536. Taken in ascending order, those give the same sums bit for bit:
 * the dimensions left out add zeros.
 */
const SPARSE_KEYS = 256;

/**
 * Adds one family to `out`: each key's `value(raw)` with a hashed sign in a hashed dimension,
 * the family's sum normalised to `weight`.
 */
export function addFamily(out: Float32Array, raw: Map<number, number>, seed: number, weight: number, value: (raw: number) => number): void {
  if (raw.size === 0 || weight === 0) return;
  const sparse = raw.size <= SPARSE_KEYS;
  let n = 0;
  for (const [key, x] of raw) {
    const h = mix(key ^ seed);
    const v = value(x);
    const d = (h & 0x7fffffff) % EMBEDDING_DIMENSIONS;
    if (sparse && isTouched[d] === 0) {
      isTouched[d] = 1;
      touched[n++] = d;
    }
    scratch[d] += h < 0 ? -v : v;
  }
  const dims = sparse ? touched.subarray(0, n).sort() : ALL_DIMENSIONS;
  let sum = 0;
  for (const d of dims) sum += scratch[d] * scratch[d];
  if (sum !== 0) {
    const scale = weight / Math.sqrt(sum);
    for (const d of dims) out[d] += scratch[d] * scale;
  }
  for (const d of dims) {
    scratch[d] = 0;
    isTouched[d] = 0;
  }
}
