import { kernelModule } from './matrix.js';

/** What the scorer calls of the kernel (scan.wat). */
interface ScanKernel {
  scan(query: number, rows: number, stride: number, n: number, out: number): void;
}

const PAGE = 65536;

/**
 * Scores rows handed over as bytes, on the calling thread, with the scan kernel: each score is
 * the same sum, in the same order, as a scan of a matrix holding the row gives, bit for bit.
 * For the few rows a search scores again from their float vectors, which are not in a matrix.
 */
export class RowScorer {
  readonly dims: number;
  /** Bytes per row: dims rounded up to 16 floats, the padding zero. */
  readonly stride: number;
  #memory: WebAssembly.Memory;
  #kernel: ScanKernel;
  #capacity = 0;

  constructor(dims: number) {
    this.dims = dims;
    this.stride = Math.ceil(dims / 16) * 64;
    this.#memory = new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true });
    this.#kernel = new WebAssembly.Instance(kernelModule, { env: { memory: this.#memory } }).exports as unknown as ScanKernel;
  }

  /** Where `n` rows' bytes go (row i at i * stride) before score(); valid until the next call. */
  rows(n: number): Uint8Array {
    if (n > this.#capacity) {
      const bytes = this.stride + n * (this.stride + 4);
      const pages = Math.ceil(bytes / PAGE) - this.#memory.buffer.byteLength / PAGE;
      if (pages > 0) this.#memory.grow(pages);
      this.#capacity = n;
    }
    return new Uint8Array(this.#memory.buffer, this.stride, n * this.stride);
  }

  /** The dot products of `query` with the first `n` rows written to rows(). */
  score(query: Float32Array, n: number): Float32Array {
    if (query.length !== this.dims) throw new RangeError(`query has ${query.length} dims, the scorer ${this.dims}`);
    if (n > this.#capacity) throw new RangeError(`${n} rows asked, ${this.#capacity} written`);
    new Float32Array(this.#memory.buffer, 0, this.dims).set(query);
    const out = this.stride + this.#capacity * this.stride;
    this.#kernel.scan(0, this.stride, this.stride, n, out);
    return new Float32Array(this.#memory.buffer, out, n).slice();
  }
}

/** Scorers a RowScorers makes at most: a scorer keeps the memory its largest call grew it to (up to 6 MB). */
const MAX_SCORERS = 8;

/**
 * Row scorers lent to one call at a time: a call that reads its rows into its scorer on other
 * threads (row-vectors.ts) holds it until it returns, while other searches score with others.
 * Past MAX_SCORERS lent, a call waits for one to come back.
 */
export class RowScorers {
  private readonly idle: RowScorer[] = [];
  private readonly waiting: ((scorer: RowScorer) => void)[] = [];
  private made = 0;

  constructor(
    private readonly dims: number,
    private readonly most = MAX_SCORERS,
  ) {}

  async use<T>(fn: (scorer: RowScorer) => Promise<T> | T): Promise<T> {
    const scorer = await this.take();
    try {
      return await fn(scorer);
    } finally {
      const next = this.waiting.shift();
      if (next) next(scorer);
      else this.idle.push(scorer);
    }
  }

  private take(): Promise<RowScorer> | RowScorer {
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.made < this.most) {
      this.made++;
      return new RowScorer(this.dims);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}
