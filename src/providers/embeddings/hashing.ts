// The offline embedder: signed feature hashing of words, word bigrams and character
// n-grams into 1536 dimensions. Deterministic, no model and no network; texts that share
// vocabulary (or word stems, through the n-grams) get a higher cosine than unrelated ones.
import { EMBEDDING_DIMENSIONS, l2Normalize, type EmbeddingProvider } from './types.js';

export const HASHING_MODEL = 'folio-hashing-v1';

// Each family's vector is normalised before mixing, so these weights fix each family's
// share of the similarity whatever the text or word lengths (the squares sum to 1).
const WORD_WEIGHT = Math.sqrt(0.5);
const BIGRAM_WEIGHT = Math.sqrt(0.15);
const NGRAM_WEIGHT = Math.sqrt(0.3);
// Function words get a family of their own with a small share: without it, two unrelated
// short texts sharing "the", "of" and "is" look alike; a text of only such words still
// embeds to something.
const FUNCTION_WORD_WEIGHT = Math.sqrt(0.05);

const FUNCTION_WORDS = new Set(
  ('a an and are as at be but by do does did for from had has have he her his how i if in ' +
    'into is it its me my no not of on or our she so than that the their them then there ' +
    'these they this to was we were what when where which who why will with you your')
    .split(' '),
);

// Distinct seeds so the same key lands in unrelated buckets in each family.
const WORD_SEED = 0x2f6b1a3d;
const FUNCTION_WORD_SEED = 0x1b873593;
const BIGRAM_SEED = 0x5bd1e995;
const NGRAM_SEED = 0x7feb352d;

const MIN_N = 3;
const MAX_N = 5;
const WORD_START = 0x02; // boundary markers; never inside a token
const WORD_END = 0x03;

// A token is a run of letters, marks and digits (without \p{M}, Devanagari words would be
// cut at every vowel sign), except that each Han or kana character is a token by itself:
// Chinese and Japanese have no spaces, so characters and their bigrams stand for words.
const CJK = '\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}';
const TOKEN = new RegExp(`[${CJK}]|[[\\p{L}\\p{M}\\p{N}]--[${CJK}]]+`, 'gv');

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** murmur3's finaliser: spreads FNV's weak low bits before the modulo. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function fnv1a(word: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), FNV_PRIME);
  return h;
}

// Map keys are shifted into V8's small-integer range, which keeps the maps fast.
function count(counts: Map<number, number>, key: number): void {
  const k = key >> 1;
  counts.set(k, (counts.get(k) ?? 0) + 1);
}

/** Character n-grams (MIN_N..MAX_N code units) of the word padded with boundary markers. */
function countNgrams(word: string, counts: Map<number, number>): void {
  const padded = word.length + 2;
  for (let start = 0; start + MIN_N <= padded; start++) {
    const end = Math.min(padded, start + MAX_N);
    let h = FNV_OFFSET;
    for (let i = start; i < end; i++) {
      const code = i === 0 ? WORD_START : i === padded - 1 ? WORD_END : word.charCodeAt(i - 1);
      h = Math.imul(h ^ code, FNV_PRIME);
      if (i - start + 1 >= MIN_N) count(counts, h);
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
 * instead of over all 1536, three times over in each of four families. Taken in ascending
 * order, those give the same sums bit for bit: the dimensions left out add zeros.
 */
const SPARSE_KEYS = 256;

/** Adds one family, sublinear tf (1 + ln tf) with a hashed sign, normalised to `weight`. */
function addFamily(out: Float32Array, counts: Map<number, number>, seed: number, weight: number): void {
  if (counts.size === 0) return;
  const sparse = counts.size <= SPARSE_KEYS;
  let n = 0;
  for (const [key, tf] of counts) {
    const h = mix(key ^ seed);
    const value = 1 + Math.log(tf);
    const d = (h & 0x7fffffff) % EMBEDDING_DIMENSIONS;
    if (sparse && isTouched[d] === 0) {
      isTouched[d] = 1;
      touched[n++] = d;
    }
    scratch[d] += h < 0 ? -value : value;
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

/** The hashing embedding of one text: pure and synchronous, safe to run in a worker. */
export function hashEmbed(text: string): Float32Array {
  const words = new Map<number, number>();
  const functionWords = new Map<number, number>();
  const bigrams = new Map<number, number>();
  const ngrams = new Map<number, number>();
  let previous: number | null = null;
  let previousIsFunctionWord = false;
  for (const match of text.toLowerCase().matchAll(TOKEN)) {
    const word = match[0];
    const h = fnv1a(word);
    const isFunctionWord = FUNCTION_WORDS.has(word);
    if (isFunctionWord) {
      count(functionWords, h);
    } else {
      count(words, h);
      countNgrams(word, ngrams);
    }
    // "of the" says nothing; "the mat" does.
    if (previous !== null && !(isFunctionWord && previousIsFunctionWord)) {
      count(bigrams, Math.imul(previous, 0x9e3779b1) ^ h);
    }
    previous = h;
    previousIsFunctionWord = isFunctionWord;
  }
  const out = new Float32Array(EMBEDDING_DIMENSIONS);
  addFamily(out, words, WORD_SEED, WORD_WEIGHT);
  addFamily(out, functionWords, FUNCTION_WORD_SEED, FUNCTION_WORD_WEIGHT);
  addFamily(out, bigrams, BIGRAM_SEED, BIGRAM_WEIGHT);
  addFamily(out, ngrams, NGRAM_SEED, NGRAM_WEIGHT);
  return l2Normalize(out);
}

export function createHashingEmbeddingProvider(): EmbeddingProvider {
  return {
    model: HASHING_MODEL,
    dimensions: EMBEDDING_DIMENSIONS,
    async embed(texts, signal) {
      signal?.throwIfAborted();
      return texts.map(hashEmbed);
    },
  };
}
