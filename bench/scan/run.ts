// Scan kernel benchmark: `npx tsx bench/scan/run.ts [--threads=N]`. See README.md.
import { availableParallelism } from 'node:os';
import { ScanPool, VectorMatrix } from '../../src/search/kernel/index.js';
import { measureBandwidth } from './bandwidth.js';

const DIMS = 1536;
const SIZES = [10_000, 50_000, 100_000];
const QUERIES = 60;
const WARMUP = 5;

const threadsArg = process.argv.find((a) => a.startsWith('--threads='));
const threads = threadsArg ? Number(threadsArg.slice('--threads='.length)) : availableParallelism();

function randomUnit(v = new Float32Array(DIMS)): Float32Array {
  let norm = 0;
  for (let i = 0; i < DIMS; i++) {
    v[i] = Math.random() - 0.5;
    norm += v[i] * v[i];
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < DIMS; i++) v[i] *= scale;
  return v;
}

interface Timing {
  median: number;
  best: number;
}

async function time(run: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < WARMUP; i++) await run();
  const ms: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[ms.length >> 1], best: ms[0] };
}

const bw = await measureBandwidth({ threads });
console.log(
  `memory bandwidth: ${bw.gbPerSecond.toFixed(1)} GB/s ` +
    `(${threads} threads streaming ${(bw.bytes / 2 ** 30).toFixed(0)} GiB with the SIMD sum)\n`,
);

const pool = new ScanPool({ threads });
const matrix = new VectorMatrix(DIMS);
const rowBytes = matrix.layout.stride;
let rssGrowth = 0; // while filling only: the scans' garbage would blur it
const gbs = (rows: number, ms: number): number => (rows * rowBytes) / (ms / 1000) / 1e9;
const pct = (rate: number): string => `${((100 * rate) / bw.gbPerSecond).toFixed(0).padStart(3)}%`;
const line = (label: string, rows: number, t: Timing): string =>
  `${label.padEnd(26)} ${t.median.toFixed(2).padStart(7)} ms  ${gbs(rows, t.median).toFixed(1).padStart(5)} GB/s  ` +
  `${pct(gbs(rows, t.median))} of bandwidth   (best ${t.best.toFixed(2)} ms, ${pct(gbs(rows, t.best))})`;
console.log(`${''.padEnd(26)}  median    read rate   share of bandwidth`);

for (const size of SIZES) {
  const row = new Float32Array(DIMS); // reused, so the RSS figure below is the matrix's
  const rss = process.memoryUsage().rss;
  while (matrix.rows < size) matrix.append(randomUnit(row));
  rssGrowth += process.memoryUsage().rss - rss;
  const full = await time(() => pool.score(matrix, randomUnit()));
  console.log(line(`${size} x ${DIMS}`, size, full));
  const subset = Int32Array.from({ length: size }, (_, i) => i).filter(() => Math.random() < 0.1);
  const filtered = await time(() => pool.score(matrix, randomUnit(), subset));
  console.log(line(`  filtered, ${subset.length} rows`, subset.length, filtered));
}

const rssPerRow = rssGrowth / matrix.rows;
console.log(
  `\nmemory: ${rowBytes} B per row stored; process RSS grew ${Math.round(rssPerRow)} B per row ` +
    `(capacity ${matrix.capacity} rows, ${(matrix.byteLength / 2 ** 20).toFixed(0)} MiB reserved)`,
);
await pool.close();
