import { availableParallelism } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { BIT_BLOCK, kernelModule, MAX_QUERIES, type MatrixLayout, type VectorMatrix } from './matrix.js';

/**
 * Below this many bytes per thread, splitting costs more than it saves: handing a part to a
 * second thread (its message, its wake-up, waiting for the later of two) measured 0.5-1 ms
 * over HTTP on a 2-core machine, about what one thread takes to scan 8 MiB.
 */
const MIN_PART_BYTES = 8 << 20;
/**
 * Parts up to this size the calling thread scans one of itself (0.5-1 ms of its event loop)
 * while the workers scan the rest: one hand-off fewer. Larger parts all go to the workers.
 */
const MAX_HERE_PART_BYTES = 2 * MIN_PART_BYTES;
/** Output buffers kept for reuse by scoreWith(). */
const MAX_FREE_OUTPUTS = 8;

/** What the scan kernel exports (scan.wat): each for float32 rows, with `_i8` for codes, with `_bits` for bits. */
interface Kernel {
  scan(query: number, rows: number, stride: number, n: number, out: number): void;
  gather(query: number, header: number, stride: number, indices: number, n: number, out: number): void;
  scan_i8(query: number, rows: number, stride: number, n: number, out: number): void;
  gather_i8(query: number, header: number, stride: number, indices: number, n: number, out: number): void;
  scan_bits(query: number, rows: number, stride: number, n: number, out: number): void;
  gather_bits(query: number, header: number, stride: number, indices: number, n: number, out: number): void;
}

/** A query as the kernel takes it: float32 for a matrix of floats, its code or bits (store/vector-codes.ts) for a matrix of those. */
export type ScanQuery = Float32Array | Uint8Array;

interface PartJob {
  layout: MatrixLayout;
  slot: number;
  start: number;
  end: number;
  query: ScanQuery;
  /** The rows of positions [start, end), or none to score rows [start, end) themselves. */
  rows?: Int32Array;
  out: SharedArrayBuffer;
}

/**
 * Scores positions [start, end) a chunk at a time through scratch slot `slot` (query, row
 * indices, scores) and copies each chunk's scores out to position i of `out`. The workers run
 * its text (so it refers to nothing outside itself), and the calling thread runs it for a scan
 * too small to hand over.
 */
function scanPart({ exports, memory }: { exports: Kernel; memory: WebAssembly.Memory }, { layout, slot, start, end, query, rows, out }: PartJob): void {
  const { stride, header, chunk } = layout;
  const q = slot * layout.slotBytes, idx = q + layout.queries * layout.queryStride, res = idx + chunk * 4;
  const f32 = new Float32Array(memory.buffer);
  const scores = new Float32Array(out);
  // The padding after the query is never written, so stays zero.
  new Uint8Array(memory.buffer).set(new Uint8Array(query.buffer, query.byteOffset, query.byteLength), q);
  const scan = layout.kind === 'bits' ? exports.scan_bits : layout.kind === 'int8' ? exports.scan_i8 : exports.scan;
  const gather = layout.kind === 'bits' ? exports.gather_bits : layout.kind === 'int8' ? exports.gather_i8 : exports.gather;
  for (let i = start; i < end; i += chunk) {
    const n = Math.min(chunk, end - i);
    if (rows) {
      new Int32Array(memory.buffer, idx, n).set(rows.subarray(i - start, i - start + n));
      gather(q, header, stride, idx, n, res);
    } else {
      scan(q, header + i * stride, stride, n, res);
    }
    scores.set(f32.subarray(res / 4, res / 4 + n), i);
  }
}

// Plain script source, evaluated by the worker: the same text runs from dist/ and from
// TypeScript under vitest or tsx, with no worker file to resolve. It must parse both
// as CommonJS and as ESM (workers inherit --input-type), hence the dynamic import.
// The wasm module arrives in workerData; a matrix's memory arrives with its first job.
const WORKER_SOURCE = `
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
      if (job.nq) scanMulti(k, job);
      else scanPart(k, job);
      parentPort.postMessage({ job: job.job });
    } catch (err) {
      parentPort.postMessage({ job: job.job, error: String((err && err.stack) || err) });
    }
  });
});
${scanPart.toString()}
// Scores rows against nq queries (their bytes one after another) in one pass; query j's scores start at j * total in the
// caller's buffer. The workers of a pass take its chunks in turn from the shared counter
// \`next\` (the next row to score), so one that joins late takes what is left.
function scanMulti({ exports, memory }, { layout, slot, next, end, query, nq, total, out }) {
  const { stride, header, chunk, block, queryBytes, queryStride } = layout;
  const q = slot * layout.slotBytes, res = q + layout.queries * queryStride + chunk * 4;
  const f32 = new Float32Array(memory.buffer);
  const bytes = new Uint8Array(memory.buffer);
  const scores = new Float32Array(out);
  const rows = new Int32Array(next);
  const queries = new Uint8Array(query.buffer, query.byteOffset, query.byteLength);
  for (let j = 0; j < nq; j++) bytes.set(queries.subarray(j * queryBytes, (j + 1) * queryBytes), q + j * queryStride);
  for (let i = Atomics.add(rows, 0, chunk); i < end; i = Atomics.add(rows, 0, chunk)) {
    const n = Math.min(chunk, end - i);
    if (layout.kind === 'bits') exports.scan_multi_bits(q, nq, header + i * stride, stride, n, res, chunk, block, queryStride);
    else if (layout.kind === 'int8') exports.scan_multi_i8(q, nq, header + i * stride, stride, n, res, chunk, block, queryStride);
    else exports.scan_multi(q, nq, header + i * stride, stride, n, res, chunk, block);
    for (let j = 0; j < nq; j++) scores.set(f32.subarray(res / 4 + j * chunk, res / 4 + j * chunk + n), j * total + i);
  }
}
`;

// Slot i of a matrix's scratch belongs to worker i of the pool scanning it, so two
// pools must not scan one matrix: each matrix has one owning pool at a time.
const owners = new WeakMap<VectorMatrix, ScanPool>();

/** A part as a worker gets it: `query` holds `nq` queries' bytes one after another in a shared pass. */
interface Job extends PartJob {
  job: number;
  matrix: number;
  memory?: WebAssembly.Memory;
  /** Queries scored in one pass, and the rows of the whole scan (the stride of their scores in `out`). */
  nq?: number;
  total?: number;
  /** A pass's next row to score (an Int32), shared by its workers. */
  next?: SharedArrayBuffer;
}

interface Reply {
  job: number;
  error?: string;
}

/** Full scans of one matrix waiting for the running one, to go together in the next pass. */
interface MatrixQueue {
  running: boolean;
  waiting: { query: ScanQuery; settle: (scores: Float32Array | Error) => void }[];
}

/** A shared pass: its queries, their scores, and its workers' jobs. */
interface Pass {
  batch: MatrixQueue['waiting'];
  /** The matrix's rows when the pass began: each query's scores in `out`. */
  rows: number;
  out: SharedArrayBuffer;
  jobs: Promise<void>[];
  /** Posts the pass to the workers it did not start on. */
  join(): void;
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
 * process alive; close() ends them. The calling thread takes a share itself only when the
 * matrix has a scratch slot beyond the workers' (VectorMatrix's default): a whole scan of one
 * part (at most MIN_PART_BYTES, a few tenths of a millisecond), or the first part of a scan
 * of given rows whose parts are at most MAX_HERE_PART_BYTES.
 */
export class ScanPool {
  readonly threads: number;
  #workers: Worker[];
  #attached: Set<number>[]; // ids of the matrices each worker has instantiated
  #inFlight: number[];
  #pending = new Map<number, Pending>();
  #nextJob = 1;
  #failed: Error | undefined;
  #outputs: SharedArrayBuffer[] = [];
  #queues = new WeakMap<VectorMatrix, MatrixQueue>();
  /** This thread's kernel instances, by matrix, for scans too small to hand to a worker. */
  #local = new WeakMap<VectorMatrix, { exports: Kernel; memory: WebAssembly.Memory }>();
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
  async score(matrix: VectorMatrix, query: ScanQuery, rows?: Int32Array): Promise<Float32Array> {
    const out = new SharedArrayBuffer((rows ? rows.length : matrix.rows) * 4);
    await this.#scan(matrix, query, rows, out);
    return new Float32Array(out);
  }

  /**
   * Like score(), into a pooled buffer that `use` reads before it goes back to the pool: a
   * search then allocates no scores, whose churn of large buffers grows the process's memory.
   * Scans of every row that arrive while one of the same matrix runs wait for it and then go
   * together, up to MAX_QUERIES in one pass, which reads the matrix once for all of them (at
   * 100k rows on 2 cores: one query 14.5 ms, seven in one pass 53 ms, where the arithmetic
   * rather than the reading bounds it). A scan small enough to run on the calling thread runs
   * there at once.
   */
  async scoreWith<T>(matrix: VectorMatrix, query: ScanQuery, rows: Int32Array | undefined, use: (scores: Float32Array) => T): Promise<T> {
    const n = rows ? rows.length : matrix.rows;
    if (!rows && !this.#scansHere(matrix, n)) {
      this.#check(matrix, query, undefined);
      return new Promise<T>((resolve, reject) => {
        let queue = this.#queues.get(matrix);
        if (!queue) this.#queues.set(matrix, (queue = { running: false, waiting: [] }));
        queue.waiting.push({
          query,
          settle: (scores) => {
            if (scores instanceof Error) return reject(scores);
            try {
              resolve(use(scores));
            } catch (error) {
              reject(error);
            }
          },
        });
        if (!queue.running) void this.#drain(matrix, queue);
      });
    }
    const out = this.#acquire(n * 4);
    // After a failed scan another part may still be writing: that buffer is not reused.
    await this.#scan(matrix, query, rows, out);
    try {
      return use(new Float32Array(out, 0, n));
    } finally {
      this.#release(out);
    }
  }

  /**
   * Scans for the queries waiting on `matrix`, up to MAX_QUERIES per pass, until none wait.
   * While the event loop ranks one pass's results, the next pass (the queries that arrived
   * during the first) already runs on all its workers but one, which joins it when the ranking
   * is done: the workers would otherwise sit idle through the ranking (a fifth of the time with
   * 8 clients at 50k pages), and the one left out leaves a core to the event loop.
   */
  async #drain(matrix: VectorMatrix, queue: MatrixQueue): Promise<void> {
    queue.running = true;
    let next = this.#startPass(matrix, queue, this.threads);
    while (next) {
      const pass = next;
      try {
        await Promise.all(pass.jobs);
      } catch (error) {
        for (const w of pass.batch) w.settle(error instanceof Error ? error : new Error(String(error)));
        next = this.#startPass(matrix, queue, this.threads);
        continue;
      }
      next = this.#startPass(matrix, queue, this.threads - 1);
      const n = pass.rows;
      for (const [j, w] of pass.batch.entries()) {
        // Each reader ranks on the event loop's thread: a turn between two lets other
        // requests (a /health probe) in, instead of all of a pass's rankings back to back.
        if (j > 0) await nextTurn();
        w.settle(new Float32Array(pass.out, j * n * 4, n));
      }
      this.#release(pass.out);
      // Scans that arrived during the ranking, when none waited as it began, would otherwise
      // wait for a scan after them that may never come.
      if (next) next.join();
      else next = this.#startPass(matrix, queue, this.threads);
    }
    queue.running = false;
  }

  /**
   * Posts a pass for up to MAX_QUERIES of the queries waiting on `matrix` to the first
   * `workers` of its parts' workers (at least one); join() posts it to the others. Null when
   * no query waits.
   */
  #startPass(matrix: VectorMatrix, queue: MatrixQueue, workers: number): Pass | null {
    if (queue.waiting.length === 0) return null;
    const batch = queue.waiting.splice(0, MAX_QUERIES);
    const n = matrix.rows;
    const out = this.#acquire(batch.length * n * 4);
    const { queryBytes } = matrix.layout;
    const all = new Uint8Array(batch.length * queryBytes);
    batch.forEach((w, j) => all.set(new Uint8Array(w.query.buffer, w.query.byteOffset, queryBytes), j * queryBytes));
    const job = { layout: matrix.layout, start: 0, end: n, query: all, nq: batch.length, total: n, out, next: new SharedArrayBuffer(4) };
    const jobs: Promise<void>[] = [];
    const post = (p: number): void => {
      const posted = this.#failed ? Promise.reject(this.#failed) : this.#post(p, matrix, { ...job, slot: p });
      posted.catch(() => undefined); // awaited only after the previous pass's ranking
      jobs.push(posted);
    };
    const parts = this.#parts(matrix, n);
    const first = Math.max(1, Math.min(parts, workers));
    for (let p = 0; p < first; p++) post(p);
    return {
      batch,
      rows: n,
      out,
      jobs,
      join: () => {
        for (let p = first; p < parts; p++) post(p);
      },
    };
  }

  /** The smallest free output buffer that holds `bytes`, or a new one with a quarter to spare. */
  #acquire(bytes: number): SharedArrayBuffer {
    let best = -1;
    this.#outputs.forEach((b, i) => {
      if (b.byteLength >= bytes && (best < 0 || b.byteLength < this.#outputs[best].byteLength)) best = i;
    });
    if (best < 0) return new SharedArrayBuffer(Math.ceil((bytes * 1.25) / 4096) * 4096);
    return this.#outputs.splice(best, 1)[0];
  }

  #release(out: SharedArrayBuffer): void {
    this.#outputs.push(out);
    // As many as scans run at once; the smallest go first (the matrix outgrew them).
    if (this.#outputs.length > MAX_FREE_OUTPUTS) {
      this.#outputs.sort((a, b) => b.byteLength - a.byteLength);
      this.#outputs.length = MAX_FREE_OUTPUTS;
    }
  }

  #check(matrix: VectorMatrix, query: ScanQuery, rows: Int32Array | undefined): void {
    if (this.#failed) throw this.#failed;
    const owner = owners.get(matrix);
    if (owner && owner !== this && !owner.#failed) {
      throw new Error('this matrix is scanned by another ScanPool: release() it there first');
    }
    owners.set(matrix, this);
    const bytes = matrix.layout.kind !== 'float32';
    if (bytes ? !(query instanceof Uint8Array) || query.length !== matrix.layout.queryBytes : query.length !== matrix.dims) {
      throw new RangeError(`query has ${query.length} elements, matrix takes ${bytes ? `${matrix.layout.queryBytes} bytes` : `${matrix.dims} dims`}`);
    }
    if (rows) {
      for (const row of rows) {
        if (row < 0 || row >= matrix.rows) throw new RangeError(`row ${row} out of range (${matrix.rows} rows)`);
      }
    }
  }

  async #scan(matrix: VectorMatrix, query: ScanQuery, rows: Int32Array | undefined, out: SharedArrayBuffer): Promise<void> {
    this.#check(matrix, query, rows);
    const n = rows ? rows.length : matrix.rows;
    const parts = this.#parts(matrix, n);
    const here = this.#takesFirstPart(matrix, n, parts);
    const first = here ? 1 : 0;
    const q = parts > first ? query.slice() : query; // posting a view would copy its whole buffer
    const jobs: Promise<void>[] = [];
    for (let p = first; p < parts; p++) {
      const start = this.#partStart(matrix, n, p, parts, rows);
      const end = this.#partStart(matrix, n, p + 1, parts, rows);
      const part = rows?.slice(start, end);
      jobs.push(this.#post(p, matrix, { layout: matrix.layout, slot: p, start, end, query: q, rows: part, out }));
    }
    const posted = Promise.all(jobs);
    if (here) {
      const end = this.#partStart(matrix, n, 1, parts, rows);
      try {
        scanPart(this.#kernelOf(matrix), { layout: matrix.layout, slot: this.threads, start: 0, end, query, rows: rows?.subarray(0, end), out });
      } catch (error) {
        await posted.catch(() => undefined);
        throw error;
      }
    }
    await posted;
  }

  /** Where part `p` of `parts` of a scan of `n` rows starts: a scan of every row of bits splits between blocks (scan.wat). */
  #partStart(matrix: VectorMatrix, n: number, p: number, parts: number, rows: Int32Array | undefined): number {
    const at = Math.floor((n * p) / parts);
    return p < parts && !rows && matrix.layout.kind === 'bits' ? at - (at % BIT_BLOCK) : at;
  }

  #parts(matrix: VectorMatrix, rows: number): number {
    return Math.min(this.threads, matrix.slots, Math.ceil((rows * matrix.layout.stride) / MIN_PART_BYTES));
  }

  /**
   * Whether a scan of `rows` rows runs on the calling thread: one part, and a slot of the
   * matrix beyond the workers'. Handing it over (a message, a thread's wake-up, the answer's)
   * would cost about what scanning it does, 0.1-0.5 ms, and it keeps the event loop no longer.
   */
  #scansHere(matrix: VectorMatrix, rows: number): boolean {
    const parts = this.#parts(matrix, rows);
    return parts === 1 && this.#takesFirstPart(matrix, rows, parts);
  }

  /** Whether the calling thread scans the first of `parts` parts itself: it has a slot, and the parts are small. */
  #takesFirstPart(matrix: VectorMatrix, rows: number, parts: number): boolean {
    return matrix.slots > this.threads && (rows * matrix.layout.stride) / parts <= MAX_HERE_PART_BYTES;
  }

  #kernelOf(matrix: VectorMatrix): { exports: Kernel; memory: WebAssembly.Memory } {
    let kernel = this.#local.get(matrix);
    if (!kernel) {
      const { exports } = new WebAssembly.Instance(kernelModule, { env: { memory: matrix.memory } });
      this.#local.set(matrix, (kernel = { exports: exports as unknown as Kernel, memory: matrix.memory }));
    }
    return kernel;
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
