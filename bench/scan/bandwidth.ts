import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { kernelModule } from '../../src/search/kernel/matrix.js';

export interface Bandwidth {
  /** Best observed read rate over all threads together, in GB/s (1e9 bytes). */
  gbPerSecond: number;
  threads: number;
  bytes: number;
}

export interface BandwidthOptions {
  /** Size of the buffer streamed (default 1 GiB): far beyond any cache. */
  bytes?: number;
  threads?: number;
  /** Timed rounds; the best is reported (default 5). */
  rounds?: number;
  /** Passes over the buffer per round (default 2). */
  passes?: number;
}

// Parses as CommonJS and as ESM alike (workers inherit --input-type).
const WORKER_SOURCE = `
import('node:worker_threads').then(({ parentPort, workerData }) => {
  const env = { memory: workerData.memory };
  const { sum } = new WebAssembly.Instance(workerData.module, { env }).exports;
  parentPort.on('message', ({ passes }) => {
    let total = 0;
    for (let p = 0; p < passes; p++) total += sum(workerData.start, workerData.length);
    parentPort.postMessage(total);
  });
});
`;

/**
 * Memory read bandwidth of this machine as a scan sees it: every thread at once
 * streams its share of one large shared wasm memory with the kernel's SIMD sum.
 */
export async function measureBandwidth(opts: BandwidthOptions = {}): Promise<Bandwidth> {
  const threads = opts.threads ?? availableParallelism();
  const pages = Math.ceil((opts.bytes ?? 2 ** 30) / 65536);
  const bytes = pages * 65536;
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  // Write every page first: untouched pages all map the one zero page, which reads from cache.
  new Float32Array(memory.buffer).fill(1);
  const share = Math.floor(bytes / threads / 64) * 64;
  const workers = Array.from(
    { length: threads },
    (_, i) =>
      new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { module: kernelModule, memory, start: i * share, length: share },
      }),
  );
  const round = (passes: number): Promise<unknown[]> =>
    Promise.all(
      workers.map(
        (w) =>
          new Promise((resolve, reject) => {
            w.once('message', resolve);
            w.once('error', reject);
            w.postMessage({ passes });
          }),
      ),
    );
  try {
    await round(1); // compile and fault everything in
    const passes = opts.passes ?? 2;
    let best = Infinity;
    for (let r = 0; r < (opts.rounds ?? 5); r++) {
      const t0 = performance.now();
      await round(passes);
      best = Math.min(best, (performance.now() - t0) / 1000 / passes);
    }
    return { gbPerSecond: (share * threads) / best / 1e9, threads, bytes };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
