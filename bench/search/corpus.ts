// The seeded synthetic corpus of the search benchmark: a generated vocabulary with Zipf word
// frequencies, topics that bias a page's vocabulary, pages of ~1-2 KB and short queries.
// Page n and query i depend only on (seed, n) and (seed, stream, i), so a corpus grows and
// is regenerated identically whatever the order or concurrency of the ingest.

/** mulberry32: a small, fast, seedable PRNG with uniform output in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed mixed from several integers. */
export function seedOf(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p | 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
    h = Math.imul(h ^ Math.floor(p / 2 ** 32), 0x297a2d39);
  }
  return h >>> 0;
}

export const VOCABULARY = 30_000;
export const TOPICS = 50;
const TOPIC_WORDS = 80;
/** Share of a page's words drawn from its topic's words rather than the whole vocabulary. */
const TOPIC_SHARE = 0.2;
// The most frequent ranks are English function words, as in real text: the hashing
// embedder and the `english` text search configuration both treat them specially.
const FUNCTION_WORDS = ['the', 'of', 'and', 'to', 'a', 'in', 'is', 'that', 'for', 'it', 'with', 'as', 'on', 'was', 'by'];
const ONSETS = ['b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'z', 'br', 'cr', 'dr', 'fl', 'gr', 'pl', 'st', 'tr', 'sh', 'ch', 'th', 'qu'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'a', 'e', 'o', 'ai', 'ou', 'ea', 'io'];
const CODAS = ['', '', '', '', 'n', 'r', 'l', 's', 'm', 'x', 'nd', 'rt', 'st', 'lk'];

export interface Page {
  content: string;
  topic: number;
  bucket: number;
}

export class Corpus {
  /** Word by frequency rank (0 = most frequent). */
  readonly words: string[];
  /** Cumulative Zipf probabilities (s = 1) by rank, ending at 1. */
  private readonly cdf: Float64Array;
  private readonly topicWords: number[][];
  private readonly topicCdf: Float64Array;

  constructor(readonly seed: number) {
    const rng = mulberry32(seedOf(seed, 0));
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];
    const seen = new Set<string>(FUNCTION_WORDS);
    this.words = [...FUNCTION_WORDS];
    while (this.words.length < VOCABULARY) {
      // Frequent words tend to be short, as in natural language.
      const syllables = this.words.length < 300 ? 1 + Math.floor(rng() * 2) : 2 + Math.floor(rng() * 2);
      let word = '';
      for (let s = 0; s < syllables; s++) word += pick(ONSETS) + pick(VOWELS) + (s === syllables - 1 ? pick(CODAS) : '');
      if (word.length < 3 || seen.has(word)) continue;
      seen.add(word);
      this.words.push(word);
    }
    this.cdf = zipfCdf(VOCABULARY);
    // Each topic's words come from outside the most frequent ranks.
    this.topicWords = Array.from({ length: TOPICS }, () =>
      Array.from({ length: TOPIC_WORDS }, () => 200 + Math.floor(rng() * (VOCABULARY - 200))),
    );
    this.topicCdf = zipfCdf(TOPIC_WORDS);
  }

  private zipfWord(rng: () => number): string {
    return this.words[sample(this.cdf, rng())];
  }

  private topicWord(topic: number, rng: () => number): string {
    return this.words[this.topicWords[topic][sample(this.topicCdf, rng())]];
  }

  /** Page n: 1000-2000 characters of sentences in paragraphs, one topic, bucket n % 10. */
  page(n: number): Page {
    const rng = mulberry32(seedOf(this.seed, 1, n));
    const topic = Math.floor(rng() * TOPICS);
    const target = 1000 + rng() * 1000;
    const paragraphs: string[] = [];
    let length = 0;
    while (length < target) {
      const sentences: string[] = [];
      const count = 3 + Math.floor(rng() * 4);
      for (let s = 0; s < count && length < target; s++) {
        const words: string[] = [];
        const n = 6 + Math.floor(rng() * 13);
        for (let w = 0; w < n; w++) words.push(rng() < TOPIC_SHARE ? this.topicWord(topic, rng) : this.zipfWord(rng));
        const sentence = words.join(' ');
        sentences.push(sentence[0].toUpperCase() + sentence.slice(1) + (rng() < 0.9 ? '.' : '?'));
        length += sentence.length + 2;
      }
      paragraphs.push(sentences.join(' '));
    }
    return { content: paragraphs.join('\n\n'), topic, bucket: n % 10 };
  }

  /**
   * Query i of a stream: one word characteristic of a random topic and one or two words of
   * middling frequency (ranks 100-10000, log-uniform), in random order.
   */
  query(stream: number, i: number): string {
    const rng = mulberry32(seedOf(this.seed, 2, stream, i));
    const topic = Math.floor(rng() * TOPICS);
    const words = [this.topicWord(topic, rng)];
    const extra = 1 + Math.floor(rng() * 2);
    for (let k = 0; k < extra; k++) words.push(this.words[Math.floor(Math.exp(Math.log(100) + rng() * Math.log(100)))]);
    for (let k = words.length - 1; k > 0; k--) {
      const j = Math.floor(rng() * (k + 1));
      [words[k], words[j]] = [words[j], words[k]];
    }
    return words.join(' ');
  }
}

function zipfCdf(n: number): Float64Array {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let r = 0; r < n; r++) cdf[r] = sum += 1 / (r + 1);
  for (let r = 0; r < n; r++) cdf[r] /= sum;
  return cdf;
}

/** The first index whose cumulative probability exceeds u. */
function sample(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cdf[mid] > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
