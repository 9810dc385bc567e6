// The pages' float32 vectors by matrix row, kept out of the process's memory: a search scans
// the codes (store/vector-codes.ts) and reads only the few rows its bounds leave in doubt from here (every
// row when it asks to be exact). They are in a file of the index's own, unlinked as soon as it
// is open and served by the operating system's page cache, as the content file is; where no
// file can be made or written (a read-only or full disk) they are kept in memory instead.
import fs from 'node:fs';
import { closeFile, copyOpenFile, openUnlinked, readAt, writeAll } from './content-file.js';
import type { RowScorer } from './kernel/row-scorer.js';
import { grown } from './lexeme-table.js';

/** Rows scored between two turns of the event loop. */
const CHUNK_ROWS = 1024;
/** Below this many bytes of removed rows the file is not rewritten. */
const MIN_WASTE_BYTES = 16 << 20;

/** What a snapshot keeps of the vectors beside its copy of their file (index-snapshot.ts): each row's place, and the places used. */
export interface VectorState {
  rowPlace: Int32Array<ArrayBuffer>;
  places: number;
}

/** Bytes a row of `dims` dimensions takes, padded as the kernel reads it. */
export function vectorStride(dims: number): number {
  return Math.ceil(dims / 16) * 64;
}

export class RowVectors {
  /** Bytes per row, padded as the kernel reads it. */
  readonly stride: number;
  /** The file, or null once the vectors are kept in memory. */
  private fd: number | null;
  private memory = new Uint8Array(0);
  /** Row -> its place (in strides) in the file or in memory. */
  private rowPlace = new Int32Array(256);
  private count = 0;
  /** Places used, live or not. */
  private places = 0;

  /** `fd`: the file, a new one in `dir` unless given. */
  constructor(
    readonly dims: number,
    private readonly dir: string | null,
    fd: number | null = dir === null ? null : openUnlinked(dir, 'vectors'),
  ) {
    this.stride = vectorStride(dims);
    this.fd = fd;
  }

  /** A file a snapshot kept (open and unlinked, checked to hold the places `state` gives its rows). */
  static adopt(dims: number, dir: string | null, fd: number, { rowPlace, places }: VectorState): RowVectors {
    const vectors = new RowVectors(dims, dir, fd);
    vectors.rowPlace = grown(rowPlace, Math.max(256, rowPlace.length));
    vectors.count = rowPlace.length;
    vectors.places = places;
    return vectors;
  }

  /** Copies the file to `to` (a snapshot's) and says where each row is in it; null while the vectors are in memory. */
  copyTo(to: string): VectorState | null {
    if (this.fd === null) return null;
    copyOpenFile(this.fd, to);
    return { rowPlace: this.rowPlace.slice(0, this.count), places: this.places };
  }

  get rows(): number {
    return this.count;
  }

  /** Bytes the vectors take in the process's memory (none while they are in the file). */
  get residentBytes(): number {
    return this.fd === null ? this.memory.length : 0;
  }

  /** Appends the vectors as rows, in one write. */
  appendAll(vectors: readonly Float32Array[]): void {
    if (vectors.length === 0) return;
    const bytes = Buffer.alloc(vectors.length * this.stride);
    const floats = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    vectors.forEach((v, i) => {
      if (v.length !== this.dims) throw new RangeError(`vector has ${v.length} dims, rows have ${this.dims}`);
      floats.set(v, (i * this.stride) / 4);
    });
    this.write(bytes, this.places);
    if (this.rowPlace.length < this.count + vectors.length) {
      const grown = new Int32Array(Math.max(this.rowPlace.length * 2, this.count + vectors.length));
      grown.set(this.rowPlace);
      this.rowPlace = grown;
    }
    for (let i = 0; i < vectors.length; i++) this.rowPlace[this.count++] = this.places++;
  }

  /** Row `to` takes row `from`'s vector (a swap-remove); `to`'s own place is left as waste. */
  moveRow(from: number, to: number): void {
    this.rowPlace[to] = this.rowPlace[from];
  }

  /** Drops the rows from `rows` on; rewrites the live rows once the waste outweighs them. */
  truncate(rows: number): void {
    this.count = rows;
    const waste = (this.places - this.count) * this.stride;
    if (waste > MIN_WASTE_BYTES && this.places > 2 * this.count) this.compact();
  }

  /**
   * The dot products of `query` with rows `rows[i]`, each the scan kernel's, a chunk of rows
   * at a time with a turn of the event loop between chunks. The rows must stay where they are
   * meanwhile (the page index's gate), and the scorer is the call's alone until it returns: the
   * rows are read into it on other threads.
   */
  async score(scorer: RowScorer, query: Float32Array, rows: Int32Array): Promise<Float32Array> {
    const scores = new Float32Array(rows.length);
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const part = rows.subarray(start, start + CHUNK_ROWS);
      await this.readRows(part, scorer.rows(part.length));
      scores.set(scorer.score(query, part.length), start);
    }
    return scores;
  }

  /** Rows `rows[i]`'s bytes (row i at i * stride), copied while the rows stay where they are, for scoreCopies(). */
  async copy(rows: Int32Array): Promise<Uint8Array> {
    const bytes = new Uint8Array(rows.length * this.stride);
    await this.readRows(rows, bytes);
    return bytes;
  }

  /** The dot products of `query` with rows copied by copy(), as score() gives them. */
  scoreCopies(scorer: RowScorer, query: Float32Array, bytes: Uint8Array): Float32Array {
    const n = bytes.length / this.stride;
    scorer.rows(n).set(bytes);
    return scorer.score(query, n);
  }

  close(): void {
    if (this.fd !== null) closeFile(this.fd);
    this.fd = null;
    this.memory = new Uint8Array(0);
  }

  /** Reads rows `rows[i]` to `into` at i * stride: from the file all at once (readAt), or from memory. */
  private async readRows(rows: Int32Array, into: Uint8Array): Promise<void> {
    const reads: Promise<void>[] = [];
    this.eachRun(rows, into, (target, at) => {
      if (this.fd === null) target.set(this.memory.subarray(at, at + target.length));
      else reads.push(readAt(this.fd, target, at).then((bytes) => assertRead(bytes, target.length)));
    });
    // Every read settled before a failure is thrown: none may still write into `into` (a scorer lent next to another search).
    const failed = (await Promise.allSettled(reads)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** readRows() on this thread. */
  private readRowsNow(rows: Int32Array, into: Uint8Array): void {
    this.eachRun(rows, into, (target, at) => {
      if (this.fd === null) target.set(this.memory.subarray(at, at + target.length));
      else assertRead(fs.readSync(this.fd, target, 0, target.length, at), target.length);
    });
  }

  /** Each run of `rows` at consecutive places, as the part of `into` it goes to (row i at i * stride) and its byte offset. */
  private eachRun(rows: Int32Array, into: Uint8Array, read: (target: Uint8Array, at: number) => void): void {
    const { stride } = this;
    for (let i = 0; i < rows.length; ) {
      const place = this.rowPlace[rows[i]];
      let run = 1;
      while (i + run < rows.length && this.rowPlace[rows[i + run]] === place + run) run++;
      read(into.subarray(i * stride, (i + run) * stride), place * stride);
      i += run;
    }
  }

  /** Writes `bytes` at place `at`, to the file or, once it fails, to memory (with what the file held). */
  private write(bytes: Uint8Array, at: number): void {
    if (this.fd !== null) {
      try {
        writeAll(this.fd, bytes, at * this.stride);
        return;
      } catch {
        this.toMemory();
      }
    }
    const end = (at + bytes.length / this.stride) * this.stride;
    if (this.memory.length < end) {
      const grown = new Uint8Array(Math.max(end, Math.ceil(this.memory.length * 1.5)));
      grown.set(this.memory);
      this.memory = grown;
    }
    this.memory.set(bytes, at * this.stride);
  }

  /** Moves what the file holds to memory and gives the file up. */
  private toMemory(): void {
    const fd = this.fd!;
    const held = new Uint8Array(this.places * this.stride);
    assertRead(fs.readSync(fd, held, 0, held.length, 0), held.length);
    closeFile(fd);
    this.fd = null;
    this.memory = held;
  }

  /** Rewrites the live rows in row order, dropping the places removed rows left. */
  private compact(): void {
    const rows = Int32Array.from({ length: this.count }, (_, i) => i);
    const live = new Uint8Array(this.count * this.stride);
    this.readRowsNow(rows, live);
    const fd = this.fd === null || this.dir === null ? null : openUnlinked(this.dir, 'vectors');
    if (this.fd !== null) closeFile(this.fd);
    this.fd = fd;
    this.memory = new Uint8Array(0);
    this.places = 0;
    this.write(live, 0);
    this.places = this.count;
    this.rowPlace.set(rows);
  }
}

function assertRead(bytes: number, wanted: number): void {
  if (bytes !== wanted) throw new Error('The page index could not read its vector file');
}
