// The first offline embedder (v1): signed feature hashing of words, word bigrams and
// character n-grams into 1536 dimensions, every content word weighing the same. Kept, bit for
// bit, so that pages stored with it can be searched with a query embedded the same way until
// they are embedded again with the current offline embedder (lexeme-hashing.ts).
import { addFamily, addTo, eachNgram, fnv1a } from './feature-hashing.js';
import { EMBEDDING_DIMENSIONS, l2Normalize, localEmbeddingProvider, type EmbeddingProvider } from './types.js';

export const HASHING_V1_MODEL = 'folio-hashing-v1';

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

// A token is a run of letters, marks and digits (without \p{M}, Devanagari words would be
// cut at every vowel sign), except that each Han or kana character is a token by itself:
// Chinese and Japanese have no spaces, so characters and their bigrams stand for words.
const CJK = '\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}';
export const TOKEN = new RegExp(`[${CJK}]|[[\\p{L}\\p{M}\\p{N}]--[${CJK}]]+`, 'gv');

/** Sublinear term frequency. */
const sublinear = (tf: number): number => 1 + Math.log(tf);

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
      addTo(functionWords, h, 1);
    } else {
      addTo(words, h, 1);
      eachNgram(word, MIN_N, MAX_N, (g) => addTo(ngrams, g, 1));
    }
    // "of the" says nothing; "the mat" does.
    if (previous !== null && !(isFunctionWord && previousIsFunctionWord)) {
      addTo(bigrams, Math.imul(previous, 0x9e3779b1) ^ h, 1);
    }
    previous = h;
    previousIsFunctionWord = isFunctionWord;
  }
  const out = new Float32Array(EMBEDDING_DIMENSIONS);
  addFamily(out, words, WORD_SEED, WORD_WEIGHT, sublinear);
  addFamily(out, functionWords, FUNCTION_WORD_SEED, FUNCTION_WORD_WEIGHT, sublinear);
  addFamily(out, bigrams, BIGRAM_SEED, BIGRAM_WEIGHT, sublinear);
  addFamily(out, ngrams, NGRAM_SEED, NGRAM_WEIGHT, sublinear);
  return l2Normalize(out);
}

export function createHashingV1EmbeddingProvider(): EmbeddingProvider {
  return localEmbeddingProvider(HASHING_V1_MODEL, hashEmbed);
}
