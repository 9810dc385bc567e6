// The in-process references a search over HTTP is held against, measured in the benchmark
// process on the same kernel and corpus: an exact scan of as many unit vectors (all rows, or
// the filter's 10%), an inverted index over the pages' own words ranking a keyword query, and
// both mixed for the hybrid. No HTTP, no database: the physical floor of each mode here.
//
// Each is timed twice. The yardstick starts every run with the caches flushed, so that the
// vectors come from memory, as issue 12 defines its reference ("the physical limit on this
// machine, ~25 GB/s"): scans repeated back to back keep whatever fits in the last-level cache
// (32 MiB here: the 6 MB of a 10k filtered scan, most of a 50k one). A 10k filtered scan took
// 0.17 ms so, 36 GB/s on one thread, above the all-core memory bandwidth measured the same day
// (31 GB/s), and 0.6 ms from memory. A server does other work between two searches and cannot
// keep its vectors there. The warm figures, each run right after a cold one over the same rows,
// are reported beside it.
import { readFileSync } from 'node:fs';
import type { QueryTerm } from '../../src/search/keyword-index.js';
import type { TermCount } from '../../src/search/tsvector.js';
import { mulberry32, seedOf, type Corpus } from './corpus.js';

type Kernel = typeof import('../../src/search/kernel/index.js');
type Keyword = typeof import('../../src/search/keyword-index.js');

/** Median ms of each reference: alpha 1, alpha 0, alpha 0.5 and alpha 1 over 10% of rows. */
export interface ReferenceFigures {
  scan: number;
  keyword: number;
  hybrid: number;
  filtered: number;
}

/**
 * Each run from flushed caches (the aims' yardstick); `warm`: each run right after a cold one,
 * over the same rows; `spread`: p99 / p50 of SPREAD_RUNS runs back to back, as a server runs
 * searches one after another (the tail this machine gives the same work with no HTTP at all).
 */
export interface References extends ReferenceFigures {
  warm: ReferenceFigures;
  spread: ReferenceFigures;
}

const DIMS = 1536;
const RUNS = 30;
/** Enough runs for a p99 that is not the slowest run alone. */
const SPREAD_RUNS = 300;
const TOP_K = 10;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** The nearest-rank percentile (p in [0, 1]) of `values`; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
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

/** The last-level cache's size from sysfs (Linux), else 32 MiB. */
function lastLevelCacheBytes(): number {
  for (let index = 4; index >= 0; index--) {
    try {
      const size = readFileSync(`/sys/devices/system/cpu/cpu0/cache/index${index}/size`, 'utf8').trim();
      const units: Record<string, number> = { K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 };
      const match = /^(\d+)([KMG])?$/.exec(size);
      if (match) return Number(match[1]) * (units[match[2] ?? ''] ?? 1);
    } catch {
      // no such cache level
    }
  }
  return 32 * 2 ** 20;
}

/** Read (not written, so nothing is written back during the next run) to push the vectors out of every cache. */
const FLUSH = new Float64Array(Math.max(64 * 2 ** 20, 4 * lastLevelCacheBytes()) / 8).fill(1);
let flushSum = 0;

function flushCaches(): void {
  let sum = 0;
  for (let i = 0; i < FLUSH.length; i += 8) sum += FLUSH[i]; // one read per 64-byte line
  flushSum += sum;
}

/**
 * Median ms of RUNS cold runs, each after the caches were flushed (not timed), and of as many
 * warm runs, each right after a cold one (the next query over the same rows): pairs, so that
 * both figures see the same phase of the machine. Five unmeasured runs go first. Then the
 * spread: p99 / p50 of SPREAD_RUNS runs back to back.
 */
async function timed(fn: (i: number) => Promise<unknown> | unknown): Promise<{ cold: number; warm: number; spread: number }> {
  for (let i = 0; i < 5; i++) await fn(i);
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    flushCaches();
    let t0 = performance.now();
    await fn(2 * i);
    cold.push(performance.now() - t0);
    t0 = performance.now();
    await fn(2 * i + 1);
    warm.push(performance.now() - t0);
  }
  if (flushSum < 0) throw new Error('unreachable: keeps the flush from being optimised away');
  const runs: number[] = [];
  for (let i = 0; i < SPREAD_RUNS; i++) {
    const t0 = performance.now();
    await fn(2 * RUNS + i);
    runs.push(performance.now() - t0);
  }
  return { cold: median(cold), warm: median(warm), spread: percentile(runs, 0.99) / percentile(runs, 0.5) };
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
  const { ScanPool, VectorMatrix, topK, topKClamped } = kernel;
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
    const terms = (i: number): QueryTerm[] => words(query(i)).map((w) => ({ lexeme: w.lexeme, weight: w.tf * keyword.priorIdf(w.lexeme, null) }));
    const ids = (i: number) => i;

    const scan = await timed(async (i) => topK(await pool.score(matrix, samples[i % samples.length]), TOP_K, ids));
    const filtered = await timed(async (i) => topK(await pool.score(matrix, samples[i % samples.length], filteredRows), TOP_K, ids));
    const keywordMs = await timed((i) => {
      const hits = index.rank(terms(i), null);
      return topK(hits.ranks, TOP_K, hits.slots);
    });
    // As the service ranks: only the keyword hits and the k rows of best cosine can be in the
    // top k (a row that is neither is outranked by those k), so only they get a relevance.
    const hybrid = await timed(async (i) => {
      const cosines = await pool.score(matrix, samples[i % samples.length]);
      const hits = index.rank(terms(i), null);
      const best = topKClamped(cosines, TOP_K, 0, 1, ids);
      const candidates = new Int32Array(hits.slots.length + best.length);
      const relevance = new Float64Array(candidates.length);
      const isHit = new Set<number>();
      let n = 0;
      hits.slots.forEach((slot, h) => {
        isHit.add(slot);
        candidates[n] = slot;
        relevance[n++] = 0.5 * Math.max(0, cosines[slot]) + 0.5 * (hits.ranks[h] / (hits.ranks[h] + 1));
      });
      for (const row of best) {
        if (isHit.has(row)) continue;
        candidates[n] = row;
        relevance[n++] = 0.5 * Math.max(0, cosines[row]);
      }
      return topK(relevance.subarray(0, n), TOP_K, (j) => candidates[j]);
    });
    return {
      scan: scan.cold,
      filtered: filtered.cold,
      keyword: keywordMs.cold,
      hybrid: hybrid.cold,
      warm: { scan: scan.warm, filtered: filtered.warm, keyword: keywordMs.warm, hybrid: hybrid.warm },
      spread: { scan: scan.spread, filtered: filtered.spread, keyword: keywordMs.spread, hybrid: hybrid.spread },
    };
  } finally {
    pool.release(matrix);
    await pool.close();
  }
}
