import { availableParallelism } from 'node:os';
import { KERNEL_WASM } from './wasm-bytes.js';

/** The scan kernel, compiled once per process and handed to every worker. */
export const kernelModule = new WebAssembly.Module(KERNEL_WASM);

const PAGE = 65536;
const MAX_PAGES = 65536; // wasm32: 4 GiB
/** Rows a thread scores per kernel call; bounds the scratch each thread needs. */
export const CHUNK = 512;
/**
 * Bytes of rows that a shared pass's queries sweep in turn (scan.wat's scan_multi): small
 * enough to stay in a core's L2 cache. With 8 queries at 20k rows of 1536 dims, two threads
 * at once: 3.6 billion four-float steps a second each, against 3.0 when every row went
 * through all the queries before the next (the row read from memory in short bursts).
 */
const SCAN_BLOCK_BYTES = 256 << 10;
/** Queries one pass over the matrix scores at once (ScanPool batches concurrent scans). */
export const MAX_QUERIES = 8;

export interface VectorMatrixOptions {
  /** Rows to allocate up front (default 256); growth doubles from there. */
  capacity?: number;
  /** Hard cap on rows (default: as many as fit in 4 GiB of wasm32 memory). */
  maxRows?: number;
  /**
   * Threads that may scan this matrix at once, each owning a scratch slot (default: cores + 1,
   * a scan pool's workers and the thread that calls it).
   */
  slots?: number;
  /**
   * What a row holds (default float32): 'int8', the codes of store/vector-codes.ts, each row its
   * codes, then its scale, a query int16s, then its scale; 'bits', the first level of the same
   * file, a bit per dimension and the row's factors, a query its 4 bit planes and factors.
   */
  kind?: RowKind;
}

/** What a matrix's rows hold: float32 vectors, int8 codes, or bits (store/vector-codes.ts). */
export type RowKind = 'float32' | 'int8' | 'bits';

/** Where a thread finds its scratch and the rows; what a worker needs besides the memory. */
export interface MatrixLayout {
  dims: number;
  /** What rows hold: the kernel's scan, scan_i8 or scan_bits (and kin) reads them. */
  kind: RowKind;
  /**
   * Bytes per row: dims rounded up to 16 elements, the padding zero, so the kernel needs no tail
   * loop (int8 and bits: then 16 bytes holding the row's factors).
   */
  stride: number;
  /** Bytes of a query as the caller gives it, and between two queries in a scratch slot. */
  queryBytes: number;
  queryStride: number;
  /** Queries a scratch slot holds. */
  queries: number;
  /** Rows a thread scores per kernel call (CHUNK). */
  chunk: number;
  /** Rows a shared pass's queries sweep in turn within a call (SCAN_BLOCK_BYTES of them). */
  block: number;
  /** Bytes per scratch slot: `queries` queries `queryStride` apart, then CHUNK row indices, then CHUNK scores per query. */
  slotBytes: number;
  /** Byte offset of row 0, after the slots. */
  header: number;
}

let nextId = 1;

/** The layout of a matrix of `dims` dimensions with `slots` scratch slots. */
function layoutOf(dims: number, slots: number, kind: RowKind): MatrixLayout {
  const padded = Math.ceil(dims / 16) * 16;
  const bitBytes = Math.ceil(padded / 128) * 16;
  const sizes = {
    float32: { stride: padded * 4, queryBytes: dims * 4, queryStride: padded * 4 },
    int8: { stride: padded + 16, queryBytes: padded * 2 + 4, queryStride: padded * 2 + 16 },
    bits: { stride: bitBytes + 16, queryBytes: bitBytes * 4 + 16, queryStride: bitBytes * 4 + 16 },
  };
  // The bits kernel adds up a row in i16 lanes, at most 240 per 128 dimensions (scan.wat).
  if (kind === 'bits' && padded > 17_408) throw new RangeError(`a matrix of bits takes at most 17,408 dims, got ${dims}`);
  const { stride, queryBytes, queryStride } = sizes[kind];
  const slotBytes = MAX_QUERIES * queryStride + CHUNK * 4 * (1 + MAX_QUERIES);
  const header = Math.ceil((slots * slotBytes) / 64) * 64;
  const block = Math.max(1, Math.floor(SCAN_BLOCK_BYTES / stride));
  return { dims, kind, stride, queryBytes, queryStride, queries: MAX_QUERIES, chunk: CHUNK, block, slotBytes, header };
}

/**
 * One contiguous matrix (float32 rows, int8 codes or bits) in its own shared WebAssembly memory, so
 * scan workers read it in place. Rows are written in place; nothing here knows which
 * page a row holds. Writes racing an in-flight scan may be seen half-done by it,
 * so apply writes between scans.
 */
export class VectorMatrix {
  readonly id = nextId++;
  readonly dims: number;
  readonly slots: number;
  readonly maxRows: number;
  readonly layout: MatrixLayout;
  readonly memory: WebAssembly.Memory;
  #rows = 0;
  #capacity = 0;
  #f32: Float32Array;
  #bytes: Uint8Array;

  constructor(dims: number, opts: VectorMatrixOptions = {}) {
    if (!Number.isInteger(dims) || dims < 1) throw new RangeError(`dims must be a positive integer, got ${dims}`);
    this.dims = dims;
    this.slots = opts.slots ?? availableParallelism() + 1;
    if (!Number.isInteger(this.slots) || this.slots < 1) throw new RangeError(`slots must be a positive integer`);
    this.layout = layoutOf(dims, this.slots, opts.kind ?? 'float32');
    const { header, stride } = this.layout;
    const fit = Math.floor((MAX_PAGES * PAGE - header) / stride);
    this.maxRows = Math.min(opts.maxRows ?? fit, fit);
    const capacity = Math.min(opts.capacity ?? 256, this.maxRows);
    this.memory = new WebAssembly.Memory({
      initial: this.#pagesFor(capacity),
      maximum: this.#pagesFor(this.maxRows),
      shared: true,
    });
    this.#f32 = new Float32Array(this.memory.buffer);
    this.#bytes = new Uint8Array(this.memory.buffer);
    this.#capacity = this.#rowsIn(this.memory.buffer.byteLength);
  }

  get rows(): number {
    return this.#rows;
  }

  /** Rows that fit before the memory must grow. */
  get capacity(): number {
    return this.#capacity;
  }

  /** Bytes of memory allocated (address space; pages never written take no RAM). */
  get byteLength(): number {
    return this.memory.buffer.byteLength;
  }

  /** Appends a row and returns its index. */
  append(vec: Float32Array): number {
    this.#checkLength(vec);
    this.reserve(this.#rows + 1);
    this.#rows++;
    this.set(this.#rows - 1, vec);
    return this.#rows - 1;
  }

  set(row: number, vec: Float32Array): void {
    this.#check(row);
    this.#checkLength(vec);
    this.#f32.set(vec, this.#offset(row));
  }

  /** Appends a row of codes or bits (its stride in bytes, see store/vector-codes.ts) and returns its index. */
  appendCodes(code: Uint8Array): number {
    if (this.layout.kind === 'float32' || code.length !== this.layout.stride) {
      throw new RangeError(`a row of codes has ${this.layout.stride} bytes in a matrix of codes, got ${code.length}`);
    }
    this.reserve(this.#rows + 1);
    this.#bytes.set(code, this.#offset(this.#rows) * 4);
    return this.#rows++;
  }

  /** The bytes of rows [0, rows) of a matrix of codes, in place (valid until the memory grows): what a snapshot keeps. */
  codeRows(): Uint8Array {
    if (this.layout.kind === 'float32') throw new TypeError('only a matrix of codes gives its rows as bytes');
    return this.#bytes.subarray(this.layout.header, this.layout.header + this.#rows * this.layout.stride);
  }

  /**
   * Appends `rows` rows of codes that `fill` writes into the view it is given (rows of `stride`
   * bytes), e.g. from a file; nothing else may change the matrix meanwhile.
   */
  async appendCodeRows(rows: number, fill: (into: Uint8Array) => Promise<void>): Promise<void> {
    if (this.layout.kind === 'float32') throw new TypeError('a matrix of codes takes rows of codes');
    this.reserve(this.#rows + rows);
    const at = this.#offset(this.#rows) * 4;
    await fill(this.#bytes.subarray(at, at + rows * this.layout.stride));
    this.#rows += rows;
  }

  /** The f32 at byte `at` of a row of codes or bits (one of its factors). */
  float32At(row: number, at: number): number {
    return this.#f32[this.#offset(row) + at / 4];
  }

  /** A copy of a row. */
  get(row: number): Float32Array {
    this.#check(row);
    const at = this.#offset(row);
    return this.#f32.slice(at, at + this.dims);
  }

  /** Overwrites row `to` with row `from` (e.g. moving the last row into a deleted one's place). */
  copyRow(from: number, to: number): void {
    this.#check(from);
    this.#check(to);
    const src = this.#offset(from) * 4;
    this.#bytes.copyWithin(this.#offset(to) * 4, src, src + this.layout.stride);
  }

  /** Drops the rows from `rows` on; their memory is reused by later appends. */
  truncate(rows: number): void {
    if (!Number.isInteger(rows) || rows < 0 || rows > this.#rows) {
      throw new RangeError(`cannot truncate ${this.#rows} rows to ${rows}`);
    }
    this.#rows = rows;
  }

  /** Makes room for `rows` rows, at least doubling the capacity so appends stay amortised O(1). */
  reserve(rows: number): void {
    if (rows <= this.#capacity) return;
    if (rows > this.maxRows) {
      throw new RangeError(
        `vector matrix full: ${rows} rows of ${this.dims} dims exceed its limit of ${this.maxRows} rows` +
          ` (wasm32 memory holds at most 4 GiB)`,
      );
    }
    const target = Math.min(this.maxRows, Math.max(rows, this.#capacity * 2));
    const pages = this.#pagesFor(target) - this.memory.buffer.byteLength / PAGE;
    try {
      this.memory.grow(pages);
    } catch (err) {
      throw new RangeError(`could not grow vector matrix to ${target} rows (${pages} more 64 KiB pages)`, {
        cause: err,
      });
    }
    this.#f32 = new Float32Array(this.memory.buffer);
    this.#bytes = new Uint8Array(this.memory.buffer);
    this.#capacity = this.#rowsIn(this.memory.buffer.byteLength);
  }

  #pagesFor(rows: number): number {
    return Math.max(1, Math.ceil((this.layout.header + rows * this.layout.stride) / PAGE));
  }

  #rowsIn(bytes: number): number {
    return Math.min(this.maxRows, Math.floor((bytes - this.layout.header) / this.layout.stride));
  }

  #offset(row: number): number {
    return (this.layout.header + row * this.layout.stride) / 4;
  }

  #checkLength(vec: Float32Array): void {
    if (this.layout.kind !== 'float32') throw new TypeError('a matrix of codes takes rows of codes (appendCodes)');
    if (vec.length !== this.dims) throw new RangeError(`vector has ${vec.length} dims, matrix has ${this.dims}`);
  }

  #check(row: number): void {
    if (!Number.isInteger(row) || row < 0 || row >= this.#rows) {
      throw new RangeError(`row ${row} out of range (${this.#rows} rows)`);
    }
  }
}
