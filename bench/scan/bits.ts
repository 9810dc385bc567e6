// The page index's levels in process: `npx tsx bench/scan/bits.ts [--sizes=100000,300000,1000000]
// [--queries=100] [--sets=clustered,isotropic] [--threads=N]`, or the bits kernel alone on random
// bits: `--kernel [--sizes=...] [--threads=N]`. See README.md.
//
// Per vector set, one workspace grows to each size in turn (no HTTP, no store: the index is
// handed the workspace as a snapshot would restore it), and the same queries are searched at
// alpha 1, top_k 10 three ways, one after another per query: bits first (the default from
// BITS_MIN_ROWS rows), int8 codes only, and exact: true (the reference of recall@10).
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { IndexSnapshots } from '../../src/search/index-snapshot.js';
import { ScanPool, VectorMatrix } from '../../src/search/kernel/index.js';
import { PageIndex, type PageQuery } from '../../src/search/page-index.js';
import type { RowScorer } from '../../src/search/kernel/row-scorer.js';
import { WorkspacePages } from '../../src/search/workspace-pages.js';
import type { Store } from '../../src/store/engine.js';
import type { IndexedPage } from '../../src/store/pages.js';
import { codeSpace, encodeBitQuery } from '../../src/store/vector-codes.js';
import { DIMS, SET_KINDS, VectorSet, type SetKind } from '../scale/vectors.js';

const arg = (name: string, fallback: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const SIZES = arg('sizes', process.argv.includes('--kernel') ? '100000,1000000' : '100000,300000,1000000').split(',').map(Number);
const QUERIES = Number(arg('queries', '100'));
const SETS = arg('sets', SET_KINDS.join(',')).split(',') as SetKind[];
const THREADS = Number(arg('threads', String(availableParallelism())));
const WARMUP = 5;
const K = 10;
const BATCH = 1000;
/** An empty binary tsvector: the pages have no text. */
const NO_LEXEMES = new Uint8Array(4);

type Mode = 'bits' | 'codes' | 'exact';
const MODES: readonly Mode[] = ['bits', 'codes', 'exact'];

function unit(v: Float64Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  const out = new Float32Array(v.length);
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * scale;
  return out;
}

interface Sample {
  wall: number;
  cpu: number;
  afterBits: number;
  afterCodes: number;
  ids: number[];
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

const pool = new ScanPool({ threads: THREADS });

/**
 * The bits kernel alone: a matrix of random bits, timed by full scans (one query at a time)
 * and scans of a random tenth of its rows, on THREADS threads.
 */
async function kernelOnly(): Promise<void> {
  const space = codeSpace(DIMS);
  const scans = 40;
  console.log(`bits kernel, ${new Date().toISOString()}, ${THREADS} threads, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const size of SIZES) {
    const matrix = new VectorMatrix(DIMS, { kind: 'bits', capacity: size });
    const row = new Uint8Array(space.bitRowBytes);
    const view = new DataView(row.buffer);
    view.setFloat32(space.bitBytes, 0.03, true);
    view.setInt32(space.bitBytes + 4, space.padded / 2, true);
    view.setFloat32(space.bitBytes + 8, 0.8, true);
    for (let i = 0; i < size; i++) {
      crypto.getRandomValues(row.subarray(0, space.bitBytes));
      matrix.appendCodes(row);
    }
    const queries = Array.from({ length: scans + WARMUP }, () => encodeBitQuery(space, unit(Float64Array.from({ length: DIMS }, () => Math.random() - 0.5))).bytes);
    const tenth = Int32Array.from({ length: size }, (_, i) => i).filter(() => Math.random() < 0.1);
    for (const [label, rows] of [['all rows', undefined], ['a tenth', tenth]] as const) {
      const ms: number[] = [];
      const cpu = process.cpuUsage();
      for (const [i, q] of queries.entries()) {
        const t0 = performance.now();
        await pool.scoreWith(matrix, q, rows, () => 0);
        if (i >= WARMUP) ms.push(performance.now() - t0);
      }
      const used = process.cpuUsage(cpu);
      const best = percentile(ms, 0);
      console.log(
        `${String(size).padStart(8)} rows, ${label.padEnd(8)}: p50 ${percentile(ms, 0.5).toFixed(2)} ms, best ${best.toFixed(2)} ms ` +
          `(${((best * 1e6 * THREADS) / size).toFixed(1)} ns a row a thread), CPU ${((used.user + used.system) / 1000 / queries.length).toFixed(2)} ms a scan`,
      );
    }
    pool.release(matrix);
  }
}

if (process.argv.includes('--kernel')) {
  await kernelOnly();
  await pool.close();
  process.exit(0);
}

// What each search narrows to: the rows the bits leave for the codes (a scan of given rows of
// the codes), and the rows the codes leave for the floats.
const counts = { afterBits: -1, afterCodes: -1 };
const scoreWith = pool.scoreWith.bind(pool);
pool.scoreWith = ((matrix: VectorMatrix, query, rows, use) => {
  if (matrix.layout.kind === 'int8' && rows) counts.afterBits = rows.length;
  return scoreWith(matrix, query, rows, use);
}) as typeof pool.scoreWith;

console.log(
  `page index levels, ${new Date().toISOString()}, ${THREADS} threads, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}, ` +
    `${QUERIES} queries (after ${WARMUP} warm-up) at alpha 1, top_k ${K}`,
);
console.log(
  `${'set'.padEnd(10)} ${'rows'.padStart(8)} ${'mode'.padEnd(6)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'cpu ms'.padStart(8)} ` +
    `${'recall'.padStart(7)} ${'after bits'.padStart(11)} ${'after codes'.padStart(12)}`,
);

for (const kind of SETS) {
  const set = new VectorSet(kind, 1);
  const dir = mkdtempSync(path.join(tmpdir(), 'folio-bench-bits-'));
  const ws = new WorkspacePages(dir);
  ws.seenWrites = 0;
  const vectors = ws.vectors;
  const score = vectors.score.bind(vectors);
  vectors.score = (scorer: RowScorer, query: Float32Array, rows: Int32Array) => {
    counts.afterCodes = rows.length;
    return score(scorer, query, rows);
  };
  // The index restores the workspace from this "snapshot", and sees no write to catch up with.
  const store = { db: null, localWrites: { count: 0 }, readPages: null } as unknown as Store;
  const snapshots = { restore: async () => ws } as unknown as IndexSnapshots;
  const indexes: Record<Mode, PageIndex> = {
    bits: new PageIndex(store, pool, dir, snapshots),
    codes: new PageIndex(store, pool, dir, snapshots, { bitsMinRows: Number.MAX_SAFE_INTEGER }),
    exact: new PageIndex(store, pool, dir, snapshots),
  };
  const queries = Array.from({ length: QUERIES + WARMUP }, (_, i) => unit(set.queryVector(i)));
  for (const size of SIZES) {
    const rss = process.memoryUsage().rss;
    const built = performance.now();
    while (ws.codes.rows < size) {
      const pages: IndexedPage[] = [];
      for (let n = ws.codes.rows; n < Math.min(size, ws.codes.rows + BATCH); n++) {
        pages.push({ id: n + 1, documentId: n + 1, pageNumber: 1, content: new Uint8Array(0), embedding: unit(set.documentVector(n)), tsv: NO_LEXEMES });
      }
      ws.addAll(pages);
    }
    const buildSeconds = (performance.now() - built) / 1000;
    const samples: Record<Mode, Sample[]> = { bits: [], codes: [], exact: [] };
    for (const [i, vector] of queries.entries()) {
      for (const mode of MODES) {
        counts.afterBits = -1;
        counts.afterCodes = -1;
        const q: PageQuery = { vector: Promise.resolve(vector), terms: Promise.resolve([]), alpha: 1, filter: null, k: K, minRelevance: 0, exact: mode === 'exact' };
        const cpu = process.cpuUsage();
        const t0 = performance.now();
        const results = await indexes[mode].search(1, q);
        const wall = performance.now() - t0;
        const used = process.cpuUsage(cpu);
        if (i < WARMUP) continue;
        samples[mode].push({ wall, cpu: (used.user + used.system) / 1000, ...counts, ids: results.map((r) => r.pageId) });
      }
    }
    for (const mode of MODES) {
      const s = samples[mode];
      let found = 0;
      s.forEach((sample, j) => {
        const exact = new Set(samples.exact[j].ids);
        found += sample.ids.filter((id) => exact.has(id)).length;
      });
      const wanted = samples.exact.reduce((sum, e) => sum + e.ids.length, 0);
      const median = (f: (x: Sample) => number) => percentile(s.map(f), 0.5);
      const rows = (f: (x: Sample) => number) => (mode === 'exact' || f(s[0]) < 0 ? '-' : String(Math.round(median(f))));
      console.log(
        `${kind.padEnd(10)} ${String(size).padStart(8)} ${mode.padEnd(6)} ${percentile(s.map((x) => x.wall), 0.5).toFixed(1).padStart(8)} ` +
          `${percentile(s.map((x) => x.wall), 0.99).toFixed(1).padStart(8)} ${median((x) => x.cpu).toFixed(1).padStart(8)} ` +
          `${(found / wanted).toFixed(4).padStart(7)} ${(mode === 'bits' ? rows((x) => x.afterBits) : '-').padStart(11)} ${rows((x) => x.afterCodes).padStart(12)}`,
      );
    }
    const memory = indexes.bits.memory();
    console.log(
      `${kind.padEnd(10)} ${String(size).padStart(8)} built in ${buildSeconds.toFixed(0)} s; ${(memory.vectorBytes / ws.codes.rows).toFixed(0)} B per row in memory ` +
        `(codes, bits, error); RSS ${(process.memoryUsage().rss / 2 ** 30).toFixed(2)} GiB (+${((process.memoryUsage().rss - rss) / 2 ** 20).toFixed(0)} MiB); ` +
        `load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    );
  }
  pool.release(ws.codes);
  pool.release(ws.bits);
  ws.close();
  rmSync(dir, { recursive: true, force: true });
}
await pool.close();
