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
   * file, a bit per dimension and the row's factors, in blocks of BIT_BLOCK rows (scan.wat), a
   * query a table per 4 dimensions and its factors.
   */
  kind?: RowKind;
}

/** What a matrix's rows hold: float32 vectors, int8 codes, or bits (store/vector-codes.ts). */
export type RowKind = 'float32' | 'int8' | 'bits';

/** Rows of bits interleaved in a block (scan.wat): a matrix of bits grows, and a scan's parts start, a block at a time. */
export const BIT_BLOCK = 32;
/** Bytes after a bits query in a scratch slot: gather_bits scores a row's whole block there. */
const BIT_SCRATCH = BIT_BLOCK * 4;

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
    bits: { stride: bitBytes + 16, queryBytes: bitBytes * 32 + 16, queryStride: bitBytes * 32 + 16 + BIT_SCRATCH },
  };
  // The bits kernel adds up a row's W (at most 15 per dimension) in u16 lanes (scan.wat).
  if (kind === 'bits' && padded > 4368) throw new RangeError(`a matrix of bits takes at most 4,368 dims, got ${dims}`);
  const { stride, queryBytes, queryStride } = sizes[kind];
  const slotBytes = MAX_QUERIES * queryStride + CHUNK * 4 * (1 + MAX_QUERIES);
  const header = Math.ceil((slots * slotBytes) / 64) * 64;
  const rowsPerBlock = Math.max(1, Math.floor(SCAN_BLOCK_BYTES / stride));
  const block = kind === 'bits' ? Math.max(BIT_BLOCK, rowsPerBlock - (rowsPerBlock % BIT_BLOCK)) : rowsPerBlock;
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
    const rowsFit = Math.floor((MAX_PAGES * PAGE - header) / stride);
    const fit = this.layout.kind === 'bits' ? rowsFit - (rowsFit % BIT_BLOCK) : rowsFit;
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

  /**
   * Appends a row of codes or bits (its stride in bytes, see store/vector-codes.ts: a row of bits
   * as bitRow() makes it, which goes into its block) and returns its index.
   */
  appendCodes(code: Uint8Array): number {
    if (this.layout.kind === 'float32' || code.length !== this.layout.stride) {
      throw new RangeError(`a row of codes has ${this.layout.stride} bytes in a matrix of codes, got ${code.length}`);
    }
    this.reserve(this.#rows + 1);
    if (this.layout.kind === 'bits') this.#putBits(this.#rows, code);
    else this.#bytes.set(code, this.#offset(this.#rows) * 4);
    return this.#rows++;
  }

  /**
   * The bytes of rows [0, rows) of a matrix of codes, in place (valid until the memory grows):
   * what a snapshot keeps. A matrix of bits gives its blocks, the last one whole.
   */
  codeRows(): Uint8Array {
    if (this.layout.kind === 'float32') throw new TypeError('only a matrix of codes gives its rows as bytes');
    return this.#bytes.subarray(this.layout.header, this.layout.header + this.#stored(this.#rows) * this.layout.stride);
  }

  /**
   * Appends `rows` rows of codes that `fill` writes into the view it is given (rows of `stride`
   * bytes, or for bits the blocks codeRows() gave), e.g. from a file; nothing else may change
   * the matrix meanwhile. A matrix of bits takes them only while it is empty.
   */
  async appendCodeRows(rows: number, fill: (into: Uint8Array) => Promise<void>): Promise<void> {
    if (this.layout.kind === 'float32') throw new TypeError('a matrix of codes takes rows of codes');
    if (this.layout.kind === 'bits' && this.#rows > 0) throw new TypeError('a matrix of bits takes blocks only while empty');
    this.reserve(this.#rows + rows);
    const at = this.#offset(this.#rows) * 4;
    await fill(this.#bytes.subarray(at, at + this.#stored(rows) * this.layout.stride));
    this.#rows += rows;
  }

  /** The f32 at byte `at` of a row of codes or bits (one of its factors, for bits after its bits). */
  float32At(row: number, at: number): number {
    if (this.layout.kind !== 'bits') return this.#f32[this.#offset(row) + at / 4];
    return this.#f32[this.#bitFactors(row) / 4 + ((at - (this.layout.stride - 16)) / 4) * BIT_BLOCK];
  }

  /** A copy of a row of bits as appendCodes() takes it (bitRow()'s layout). */
  bitRow(row: number): Uint8Array {
    this.#check(row);
    if (this.layout.kind !== 'bits') throw new TypeError('only a matrix of bits gives a row of bits');
    const out = new Uint8Array(this.layout.stride);
    const bitBytes = this.layout.stride - 16;
    const { block, lane, shift } = this.#bitPlace(row);
    for (let g = 0; g < bitBytes * 2; g++) out[g >> 1] |= ((this.#bytes[block + g * 16 + (lane & 15)] >> shift) & 15) << ((g & 1) * 4);
    const factors = this.#bitFactors(row);
    for (let field = 0; field < 4; field++) out.set(this.#bytes.subarray(factors + field * BIT_BLOCK * 4, factors + field * BIT_BLOCK * 4 + 4), bitBytes + field * 4);
    return out;
  }

  /**
   * Appends rows `rows` of `source`, a matrix of bits of the same dimensions, each copied from
   * its lane of its block into the next lane here: the same bits and factors, so the same
   * estimates (each lane of a block is scored on its own).
   */
  appendBitRowsOf(source: VectorMatrix, rows: Int32Array): void {
    if (this.layout.kind !== 'bits' || source.layout.kind !== 'bits' || source.dims !== this.dims) {
      throw new TypeError('bits are copied between matrices of bits of the same dimensions');
    }
    this.reserve(this.#rows + rows.length);
    const groups = (this.layout.stride - 16) * 2;
    const from = source.#bytes;
    const to = this.#bytes;
    for (const row of rows) {
      source.#check(row);
      const src = source.#bitPlace(row);
      const dst = this.#bitPlace(this.#rows);
      const keep = dst.shift === 0 ? 0xf0 : 0x0f;
      for (let g = 0, s = src.block + (src.lane & 15), d = dst.block + (dst.lane & 15); g < groups; g++, s += 16, d += 16) {
        to[d] = (to[d] & keep) | (((from[s] >> src.shift) & 15) << dst.shift);
      }
      const [sf, df] = [source.#bitFactors(row), this.#bitFactors(this.#rows)];
      for (let field = 0; field < 4; field++) to.set(from.subarray(sf + field * BIT_BLOCK * 4, sf + field * BIT_BLOCK * 4 + 4), df + field * BIT_BLOCK * 4);
      this.#rows++;
    }
  }

  /** Writes a row of bits (bitRow()'s layout) into its place in its block. */
  #putBits(row: number, code: Uint8Array): void {
    const bitBytes = this.layout.stride - 16;
    const { block, lane, shift } = this.#bitPlace(row);
    const keep = shift === 0 ? 0xf0 : 0x0f;
    for (let g = 0; g < bitBytes * 2; g++) {
      const at = block + g * 16 + (lane & 15);
      this.#bytes[at] = (this.#bytes[at] & keep) | (((code[g >> 1] >> ((g & 1) * 4)) & 15) << shift);
    }
    const factors = this.#bitFactors(row);
    for (let field = 0; field < 4; field++) this.#bytes.set(code.subarray(bitBytes + field * 4, bitBytes + field * 4 + 4), factors + field * BIT_BLOCK * 4);
  }

  /** Where a row of bits is: its block's first byte, its lane, and its nibble's shift. */
  #bitPlace(row: number): { block: number; lane: number; shift: number } {
    const lane = row % BIT_BLOCK;
    return { block: this.layout.header + (row - lane) * this.layout.stride, lane, shift: lane < 16 ? 0 : 4 };
  }

  /** The byte of a row of bits' factor; its count of bits set, a and padding follow BIT_BLOCK x 4 bytes apart. */
  #bitFactors(row: number): number {
    const { block, lane } = this.#bitPlace(row);
    return block + (this.layout.stride - 16) * BIT_BLOCK + lane * 4;
  }

  /** Rows whose room `rows` rows take: whole blocks of bits. */
  #stored(rows: number): number {
    return this.layout.kind === 'bits' ? Math.ceil(rows / BIT_BLOCK) * BIT_BLOCK : rows;
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
    if (this.layout.kind === 'bits') return this.#putBits(to, this.bitRow(from));
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
    return Math.max(1, Math.ceil((this.layout.header + this.#stored(rows) * this.layout.stride) / PAGE));
  }

  #rowsIn(bytes: number): number {
    const rows = Math.floor((bytes - this.layout.header) / this.layout.stride);
    return Math.min(this.maxRows, this.layout.kind === 'bits' ? rows - (rows % BIT_BLOCK) : rows);
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
