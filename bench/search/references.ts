// The in-process references a search over HTTP is held against, measured in the benchmark
// process on the same kernel and corpus: an exact scan of as many unit vectors (all rows, or
// the filter's 10%), an inverted index over the pages' own words ranking a keyword query, and
// both mixed for the hybrid. No HTTP, no database: the physical floor of each mode here.
import type { QueryTerm } from '../../src/search/keyword-index.js';
import type { TermCount } from '../../src/search/tsvector.js';
import { mulberry32, seedOf, type Corpus } from './corpus.js';

type Kernel = typeof import('../../src/search/kernel/index.js');
type Keyword = typeof import('../../src/search/keyword-index.js');

export interface References {
  /** Median ms of each reference: alpha 1, alpha 0, alpha 0.5 and alpha 1 over 10% of rows. */
  scan: number;
  keyword: number;
  hybrid: number;
  filtered: number;
}

const DIMS = 1536;
const RUNS = 30;
const TOP_K = 10;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** 64 seeded random unit vectors: the rows of an in-process matrix repeat them. */
export function unitSamples(seed: number): Float32Array[] {
  const rng = mulberry32(seedOf(seed, 3));
  return Array.from({ length: 64 }, () => {
    const v = new Float32Array(DIMS).map(() => rng() - 0.5);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

/** Lower-case words with their counts: the reference's stand-in for PostgreSQL's lexemes. */
function words(text: string): TermCount[] {
  const counts = new Map<string, number>();
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts].map(([lexeme, tf]) => ({ lexeme, tf }));
}

async function timed(fn: (i: number) => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < 5; i++) await fn(i);
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn(i);
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

/** Measures every reference at `pages` pages; `query(i)` gives the i-th query text. */
export async function measureReferences(
  kernel: Kernel,
  keyword: Keyword,
  corpus: Corpus,
  pages: number,
  seed: number,
  query: (i: number) => string,
): Promise<References> {
  const { ScanPool, VectorMatrix, topK } = kernel;
  const pool = new ScanPool();
  const matrix = new VectorMatrix(DIMS, { capacity: pages });
  const index = new keyword.KeywordIndex();
  try {
    const samples = unitSamples(seed);
    for (let r = 0; r < pages; r++) {
      matrix.append(samples[r % samples.length]);
      index.add(r, words(corpus.page(r).content));
    }
    const filteredRows = Int32Array.from({ length: Math.floor(pages / 10) }, (_, i) => i * 10);
    const terms = (i: number): QueryTerm[] => words(query(i)).map((w) => ({ lexeme: w.lexeme, weight: w.tf * keyword.priorIdf(null) }));
    const ids = (i: number) => i;

    const scan = await timed(async (i) => topK(await pool.score(matrix, samples[i % samples.length]), TOP_K, ids));
    const filtered = await timed(async (i) => topK(await pool.score(matrix, samples[i % samples.length], filteredRows), TOP_K, ids));
    const keywordMs = await timed((i) => {
      const hits = index.rank(terms(i), null);
      return topK(hits.ranks, TOP_K, hits.slots);
    });
    const hybrid = await timed(async (i) => {
      const cosines = await pool.score(matrix, samples[i % samples.length]);
      const relevance = Float64Array.from(cosines, (c) => 0.5 * Math.max(0, c));
      const hits = index.rank(terms(i), null);
      hits.slots.forEach((slot, h) => (relevance[slot] += 0.5 * (hits.ranks[h] / (hits.ranks[h] + 1))));
      return topK(relevance, TOP_K, ids);
    });
    return { scan, keyword: keywordMs, hybrid, filtered };
  } finally {
    pool.release(matrix);
    await pool.close();
  }
}
