import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { CHUNK, kernelModule, type MatrixLayout, type VectorMatrix } from './matrix.js';

/** Below this many bytes per thread, splitting costs more in messages than it saves. */
const MIN_PART_BYTES = 1 << 20;

// Plain script source, evaluated by the worker: the same text runs from dist/ and from
// TypeScript under vitest or tsx, with no worker file to resolve. It must parse both
// as CommonJS and as ESM (workers inherit --input-type), hence the dynamic import.
// The wasm module arrives in workerData; a matrix's memory arrives with its first job.
const WORKER_SOURCE = `
const CHUNK = ${CHUNK};
import('node:worker_threads').then(({ parentPort, workerData }) => {
  const kernels = new Map();
  parentPort.on('message', (job) => {
    if (job.release !== undefined) return void kernels.delete(job.release);
    try {
      let k = kernels.get(job.matrix);
      if (!k) {
        const env = { memory: job.memory };
        k = { memory: job.memory, exports: new WebAssembly.Instance(workerData.module, { env }).exports };
        kernels.set(job.matrix, k);
      }
      scan(k, job);
      parentPort.postMessage({ job: job.job });
    } catch (err) {
      parentPort.postMessage({ job: job.job, error: String((err && err.stack) || err) });
    }
  });
});
// Scores positions [start, end) CHUNK at a time through this thread's scratch slot
// (query, row indices, scores) and copies each chunk's scores out to the caller's buffer.
function scan({ exports, memory }, { layout, slot, start, end, query, rows, out }) {
  const { stride, header } = layout;
  const q = slot * layout.slotBytes, idx = q + stride, res = idx + CHUNK * 4;
  const f32 = new Float32Array(memory.buffer);
  const scores = new Float32Array(out);
  f32.set(query, q / 4); // the padding after it is never written, so stays zero
  for (let i = start; i < end; i += CHUNK) {
    const n = Math.min(CHUNK, end - i);
    if (rows) {
      new Int32Array(memory.buffer, idx, n).set(rows.subarray(i - start, i - start + n));
      exports.gather(q, header, stride, idx, n, res);
    } else {
      exports.scan(q, header + i * stride, stride, n, res);
    }
    scores.set(f32.subarray(res / 4, res / 4 + n), i);
  }
}
`;

// Slot i of a matrix's scratch belongs to worker i of the pool scanning it, so two
// pools must not scan one matrix: each matrix has one owning pool at a time.
const owners = new WeakMap<VectorMatrix, ScanPool>();

interface Job {
  job: number;
  matrix: number;
  memory?: WebAssembly.Memory;
  layout: MatrixLayout;
  slot: number;
  start: number;
  end: number;
  query: Float32Array;
  rows?: Int32Array;
  out: SharedArrayBuffer;
}

interface Reply {
  job: number;
  error?: string;
}

interface Pending {
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface ScanPoolOptions {
  /** Worker threads (default: available cores). */
  threads?: number;
}

/**
 * Worker threads that score a VectorMatrix against a query, each taking a share of
 * the rows. Workers are unref'd while idle, so an open pool does not keep the
 * process alive; close() ends them. The event loop never runs the scan itself.
 */
export class ScanPool {
  readonly threads: number;
  #workers: Worker[];
  #attached: Set<number>[]; // ids of the matrices each worker has instantiated
  #inFlight: number[];
  #pending = new Map<number, Pending>();
  #nextJob = 1;
  #failed: Error | undefined;
  // A matrix dropped without release() still frees its memory in the workers.
  #registry = new FinalizationRegistry<number>((id) => this.#detach(id));

  constructor(opts: ScanPoolOptions = {}) {
    this.threads = opts.threads ?? availableParallelism();
    if (!Number.isInteger(this.threads) || this.threads < 1) {
      throw new RangeError(`threads must be a positive integer, got ${this.threads}`);
    }
    this.#workers = Array.from({ length: this.threads }, (_, i) => this.#spawn(i));
    this.#attached = this.#workers.map(() => new Set());
    this.#inFlight = this.#workers.map(() => 0);
  }

  /**
   * Dot products of `query` with every row of `matrix` (scores[i] for row i), or with
   * the given rows only (scores[i] for rows[i]). Uses at most `matrix.slots` threads.
   * The scores live in a SharedArrayBuffer of their own.
   */
  async score(matrix: VectorMatrix, query: Float32Array, rows?: Int32Array): Promise<Float32Array> {
    if (this.#failed) throw this.#failed;
    const owner = owners.get(matrix);
    if (owner && owner !== this && !owner.#failed) {
      throw new Error('this matrix is scanned by another ScanPool: release() it there first');
    }
    owners.set(matrix, this);
    if (query.length !== matrix.dims) {
      throw new RangeError(`query has ${query.length} dims, matrix has ${matrix.dims}`);
    }
    if (rows) {
      for (const row of rows) {
        if (row < 0 || row >= matrix.rows) throw new RangeError(`row ${row} out of range (${matrix.rows} rows)`);
      }
    }
    const n = rows ? rows.length : matrix.rows;
    const out = new SharedArrayBuffer(n * 4);
    const parts = Math.min(this.threads, matrix.slots, Math.ceil((n * matrix.layout.stride) / MIN_PART_BYTES));
    const q = query.slice(); // posting a view would copy its whole buffer
    const jobs: Promise<void>[] = [];
    for (let p = 0; p < parts; p++) {
      const start = Math.floor((n * p) / parts);
      const end = Math.floor((n * (p + 1)) / parts);
      const part = rows?.slice(start, end);
      jobs.push(this.#post(p, matrix, { layout: matrix.layout, slot: p, start, end, query: q, rows: part, out }));
    }
    await Promise.all(jobs);
    return new Float32Array(out);
  }

  /** Lets the workers drop their instance of `matrix` (and their hold on its memory). */
  release(matrix: VectorMatrix): void {
    if (owners.get(matrix) === this) owners.delete(matrix);
    this.#registry.unregister(matrix);
    this.#detach(matrix.id);
  }

  async close(): Promise<void> {
    this.#failed ??= new Error('ScanPool is closed');
    for (const pending of this.#pending.values()) pending.reject(this.#failed);
    this.#pending.clear();
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }

  #post(w: number, matrix: VectorMatrix, part: Omit<Job, 'job' | 'matrix' | 'memory'>): Promise<void> {
    const job: Job = { job: this.#nextJob++, matrix: matrix.id, ...part };
    if (!this.#attached[w].has(matrix.id)) {
      if (!this.#attached.some((ids) => ids.has(matrix.id))) this.#registry.register(matrix, matrix.id, matrix);
      this.#attached[w].add(matrix.id);
      job.memory = matrix.memory;
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(job.job, { resolve, reject });
      if (this.#inFlight[w]++ === 0) this.#workers[w].ref();
      this.#workers[w].postMessage(job);
    });
  }

  #spawn(w: number): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module: kernelModule } });
    worker.on('message', (reply: Reply) => {
      if (--this.#inFlight[w] === 0) worker.unref();
      const pending = this.#pending.get(reply.job);
      if (!pending) return; // already rejected by close() or a failure
      this.#pending.delete(reply.job);
      if (reply.error === undefined) pending.resolve();
      else pending.reject(new Error(`scan failed: ${reply.error}`));
    });
    worker.on('error', (err) => this.#fail(err));
    worker.on('exit', (code) => this.#fail(new Error(`scan worker exited with code ${code}`)));
    worker.unref(); // after the listeners: adding a 'message' listener refs the port again
    return worker;
  }

  // A worker that died leaves its share undone: fail what is pending and refuse new scans.
  #fail(err: Error): void {
    if (this.#failed) return;
    this.#failed = err;
    for (const pending of this.#pending.values()) pending.reject(err);
    this.#pending.clear();
  }

  #detach(id: number): void {
    if (this.#failed) return; // the workers are gone
    this.#attached.forEach((ids, w) => {
      if (ids.delete(id)) this.#workers[w].postMessage({ release: id });
    });
  }
}
