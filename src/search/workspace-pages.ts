// One workspace's pages in the page index: a contiguous matrix of unit embeddings, the
// keyword inverted index, and the slot bookkeeping that ties both to page and document ids,
// with the catch-up state page-index.ts keeps current.
import type { IndexedPage, ReadPosition } from '../store/pages.js';
import { bitAgreement, bitRow, codeSpace, encodeRow } from '../store/vector-codes.js';
import { ContentFile, type ContentState, type TextEntry } from './content-file.js';
import { VectorMatrix } from './kernel/index.js';
import { BIT_BLOCK } from './kernel/matrix.js';
import { KeywordIndex, MAX_SLOTS, type KeywordState } from './keyword-index.js';
import { grown } from './lexeme-table.js';
import { ReadWriteGate } from './read-write-gate.js';
import { RowVectors, type VectorState } from './row-vectors.js';
import { EMBEDDING_DIMENSIONS } from './vectors.js';

/** Slots the per-page columns start with. */
const FIRST_SLOTS = 256;

/** Rows a copy of a filter's bits takes in one turn of the event loop (a few milliseconds). */
const COPY_SLICE = 10_000;
/** Filters' rows compactBits() keeps track of, the least recently asked for dropped first. */
const COMPACT_FILTERS = 8;
/** The copies of filters' bits hold at most this share of the workspace's rows. */
const COMPACT_SHARE = 0.5;

/** A filter's rows as compactBits() knows them. */
interface CompactBits {
  layout: number;
  /** Whether the rows leave most of the blocks they touch unasked for (else no copy is made). */
  spread: boolean;
  /** Searches that asked for them. */
  uses: number;
  matrix: VectorMatrix | null;
}

/** Whether sorted `rows` touch at least twice the blocks of bits they would fill. */
function spreadOverBlocks(rows: Int32Array): boolean {
  let blocks = 0;
  let last = -1;
  for (const row of rows) {
    const block = Math.floor(row / BIT_BLOCK);
    if (block !== last) blocks++;
    last = block;
  }
  return blocks >= 2 * Math.ceil(rows.length / BIT_BLOCK);
}

/** How the pages' embeddings are coded for the first pass of a search (store/vector-codes.ts). */
export const CODE_SPACE = codeSpace(EMBEDDING_DIMENSIONS);

/** A page as a search result gives it: its content is null when the content file could not keep it. */
export interface SlotPage {
  pageId: number;
  documentId: number;
  pageNumber: number;
  content: string | null;
}

/**
 * What a snapshot keeps of a workspace (index-snapshot.ts) beside copies of its vector and content
 * files (copyFiles()): the slot columns up to `slots`, the row columns up to the codes' rows, the
 * codes, the keyword index and the position. The maps are rebuilt from these.
 */
export interface WorkspaceState {
  slotPage: Float64Array;
  slotDocument: Float64Array;
  slotRow: Int32Array;
  slotNumber: Int32Array;
  textOffset: Float64Array;
  textBytes: Int32Array;
  rowSlot: Int32Array;
  rowError: Float32Array;
  rowSuperseded: Uint8Array;
  /** The codes' rows, rows of `codes.layout.stride` bytes. */
  codes: Uint8Array;
  /** The first level's rows, rows of `bits.layout.stride` bytes. */
  bits: Uint8Array;
  maxNorm: number;
  maxError: number;
  minAgreement: number;
  keyword: KeywordState;
  position: ReadPosition;
}

/** The files a snapshot kept, open and unlinked, with what they hold. */
export interface SnapshotFiles {
  vectors: { fd: number; state: VectorState };
  contents: { fd: number; state: ContentState };
}

/**
 * One workspace's pages. A page has a slot, fixed until compaction, that the keyword index
 * knows it by; a page with an embedding also has a matrix row, which moves when another row
 * is removed (the matrix stays contiguous). Page contents are in the content file.
 */
export class WorkspacePages {
  /** Row -> the page's code (store/vector-codes.ts), which searches scan. */
  readonly codes = new VectorMatrix(EMBEDDING_DIMENSIONS, { kind: 'int8' });
  /** Row -> the page's bits (store/vector-codes.ts), which large searches scan before the codes. */
  readonly bits = new VectorMatrix(EMBEDDING_DIMENSIONS, { kind: 'bits' });
  /** Row -> the page's float32 vector, read to score again the rows the codes leave in doubt. */
  vectors: RowVectors;
  /** Row -> a bound on its code's error (store/vector-codes.ts). */
  rowError = new Float32Array(FIRST_SLOTS);
  /**
   * Row -> its bits' a (bitAgreement()), which sets its first-level bound: the same as in the
   * bits' blocks, where a search reading those of tens of thousands of rows reads a page of
   * memory for each (6.6 KB a block of 32 rows).
   */
  rowAgreement = new Float32Array(FIRST_SLOTS);
  /** Row -> 1 where its vector is of the superseded offline model (scored with a query embedded by that model). */
  rowSuperseded = new Uint8Array(FIRST_SLOTS);
  /** How many rows are of the superseded model. */
  supersededRows = 0;
  /** The largest norm of a row ever held (unit rows: 1 give or take float32's rounding), and the largest error bound. */
  maxNorm = 0;
  maxError = 0;
  /** The smallest a of a row's bits ever held: the widest of the first level's bounds. */
  minAgreement = 1;
  keyword = new KeywordIndex();
  readonly gate = new ReadWriteGate();
  private texts: ContentFile;
  /** Where add() makes a row's bits before they are copied into the matrix. */
  private readonly bitScratch = new Uint8Array(CODE_SPACE.bitRowBytes);
  /** Slots in use, removed ones too until compaction: the length of the slot columns below. */
  slots = 0;
  // The per-page data is in typed columns that double as pages arrive: a million pages are then
  // a few arrays, not millions of objects and array elements for the garbage collector to trace.
  /** Slot -> page id (-1 once removed), document id and row (-1 without an embedding). */
  slotPage = new Float64Array(FIRST_SLOTS);
  slotDocument = new Float64Array(FIRST_SLOTS);
  slotRow = new Int32Array(FIRST_SLOTS);
  /** Slot -> page number, and where its content is in the content file (offset -1: not there). */
  private slotNumber = new Int32Array(FIRST_SLOTS);
  private textOffset = new Float64Array(FIRST_SLOTS);
  private textBytes = new Int32Array(FIRST_SLOTS);
  /** Row -> slot (the first `codes.rows`). */
  rowSlot = new Int32Array(FIRST_SLOTS);
  readonly slotOf = new Map<number, number>();
  /**
   * The slots of each document's pages (removed ones too, until compaction), for filters that
   * select documents: a list per document, from its last slot through `slotNext` (-1 ends it).
   */
  private readonly documentLastSlot = new Map<number, number>();
  private slotNext = new Int32Array(FIRST_SLOTS);
  removed = 0;
  /** Moves with every removal: a row's scores computed before may since belong to another page (swap-remove). */
  removals = 0;
  /** Where the index last read the store: catch-ups read the changes since. */
  position: ReadPosition = { snapshot: '', xmin: '0' };
  /** The store's local write count when the last catch-up began reading. */
  seenWrites = -1;
  /** Moves whenever a catch-up sees a document or page change: filters' documents read before are stale. */
  generation = 0;
  catchingUp = false;
  /** Whether the last catch-up found no change (searches may then run while the next one reads). */
  quiet = false;
  /** Moves with every change of rows or slots (add, remove, compaction): rows computed before are stale. */
  private layout = 0;
  /** The rows of a filter's documents (the same set while the filter's documents are cached), with the layout they were computed at. */
  private readonly eligibleRows = new WeakMap<ReadonlySet<number>, { layout: number; rows: Int32Array }>();
  /** Filters' rows by rowsOf()'s arrays, the most recently asked for last. */
  private readonly compacted = new Map<Int32Array, CompactBits>();
  /** The catch-up that has not started reading yet: later arrivals can share it. */
  nextCatchUp: Promise<void> | null = null;
  lastCatchUp: Promise<unknown> = Promise.resolve();

  /** `contentDir`: where the content file goes; null keeps no contents (results then read them from the store). */
  constructor(contentDir: string | null = null) {
    this.texts = ContentFile.open(contentDir);
    this.vectors = new RowVectors(EMBEDDING_DIMENSIONS, contentDir);
  }

  /** The workspace as a snapshot keeps it: views of its columns, valid until it changes. */
  state(): WorkspaceState {
    const rows = this.codes.rows;
    return {
      slotPage: this.slotPage.subarray(0, this.slots),
      slotDocument: this.slotDocument.subarray(0, this.slots),
      slotRow: this.slotRow.subarray(0, this.slots),
      slotNumber: this.slotNumber.subarray(0, this.slots),
      textOffset: this.textOffset.subarray(0, this.slots),
      textBytes: this.textBytes.subarray(0, this.slots),
      rowSlot: this.rowSlot.subarray(0, rows),
      rowError: this.rowError.subarray(0, rows),
      rowSuperseded: this.rowSuperseded.subarray(0, rows),
      codes: this.codes.codeRows(),
      bits: this.bits.codeRows(),
      maxNorm: this.maxNorm,
      maxError: this.maxError,
      minAgreement: this.minAgreement,
      keyword: this.keyword.state(),
      position: this.position,
    };
  }

  /** Copies the vector and content files to a snapshot's, and says what they hold; null where either is not in a file. */
  copyFiles(vectorsTo: string, contentsTo: string): { vectors: VectorState; contents: ContentState } | null {
    const vectors = this.vectors.copyTo(vectorsTo);
    const contents = vectors && this.texts.copyTo(contentsTo);
    return vectors && contents ? { vectors, contents } : null;
  }

  /**
   * Takes a snapshot's state, codes and bits (read into the matrices by `readCodes` and `readBits`) and files, in a
   * workspace just made, after checking that its slots and rows agree, and rebuilds the maps
   * from them. The files are adopted (its own closed) only once nothing can fail: on an error
   * they are still the caller's.
   */
  async restore(
    state: Omit<WorkspaceState, 'codes' | 'bits'>,
    readCodes: (into: Uint8Array) => Promise<void>,
    readBits: (into: Uint8Array) => Promise<void>,
    files: SnapshotFiles,
    contentDir: string | null,
  ): Promise<void> {
    const slots = state.slotPage.length;
    const rows = state.rowSlot.length;
    const columns = [state.slotDocument, state.slotRow, state.slotNumber, state.textOffset, state.textBytes];
    if (columns.some((c) => c.length !== slots) || state.rowError.length !== rows || state.rowSuperseded.length !== rows) {
      throw new RangeError("a snapshot's columns differ in length");
    }
    if (files.vectors.state.rowPlace.length !== rows) throw new RangeError("a snapshot's vectors are not one per row");
    for (let row = 0; row < rows; row++) {
      const slot = state.rowSlot[row];
      if (!(slot >= 0 && slot < slots && state.slotRow[slot] === row && state.slotPage[slot] >= 0)) throw new RangeError("a snapshot's rows and slots disagree");
    }
    this.keyword = KeywordIndex.restored(state.keyword);
    if (this.keyword.slots !== slots) throw new RangeError("a snapshot's keyword index holds other slots");
    this.reserveSlots(slots);
    this.slots = slots;
    this.slotPage.set(state.slotPage);
    this.slotDocument.set(state.slotDocument);
    this.slotRow.set(state.slotRow);
    this.slotNumber.set(state.slotNumber);
    this.textOffset.set(state.textOffset);
    this.textBytes.set(state.textBytes);
    await this.codes.appendCodeRows(rows, readCodes);
    await this.bits.appendCodeRows(rows, readBits);
    this.reserve(rows);
    this.rowSlot.set(state.rowSlot);
    this.rowError.set(state.rowError);
    // A row of bits keeps its a after its bits, its factor and its count of bits set.
    for (let row = 0; row < rows; row++) this.rowAgreement[row] = this.bits.float32At(row, CODE_SPACE.bitBytes + 8);
    this.rowSuperseded.set(state.rowSuperseded);
    this.supersededRows = state.rowSuperseded.reduce((sum, s) => sum + s, 0);
    this.maxNorm = state.maxNorm;
    this.maxError = state.maxError;
    this.minAgreement = state.minAgreement;
    this.position = state.position;
    let rowed = 0;
    for (let slot = 0; slot < slots; slot++) {
      this.slotNext[slot] = this.documentLastSlot.get(this.slotDocument[slot]) ?? -1;
      this.documentLastSlot.set(this.slotDocument[slot], slot);
      const pageId = this.slotPage[slot];
      if (pageId < 0) {
        this.removed++;
        if (this.slotRow[slot] !== -1) throw new RangeError("a snapshot's removed page keeps a row");
        continue;
      }
      if (this.slotOf.has(pageId)) throw new RangeError('a snapshot holds a page twice');
      this.slotOf.set(pageId, slot);
      if (this.slotRow[slot] >= 0) rowed++;
    }
    if (rowed !== rows) throw new RangeError("a snapshot's pages with a row are not its rows");
    this.texts.close();
    this.vectors.close();
    this.texts = ContentFile.adopt(files.contents.fd, contentDir, files.contents.state);
    this.vectors = RowVectors.adopt(EMBEDDING_DIMENSIONS, contentDir, files.vectors.fd, files.vectors.state);
  }

  /**
   * Whether adding `count` pages leaves every row and slot a search in flight holds where it
   * is: appends do, unless the slots run out and compaction renumbers them.
   */
  appendsInPlace(count: number): boolean {
    return this.slots + count < MAX_SLOTS;
  }

  /** Makes room for `rows` embedded pages. */
  reserve(rows: number): void {
    this.codes.reserve(rows);
    this.bits.reserve(rows);
    if (rows > this.rowError.length) {
      const size = Math.max(rows, this.rowError.length * 2);
      this.rowError = grown(this.rowError, size);
      this.rowAgreement = grown(this.rowAgreement, size);
      this.rowSlot = grown(this.rowSlot, size);
      this.rowSuperseded = grown(this.rowSuperseded, size);
    }
  }

  /** Makes room for `slots` slots in the slot columns. */
  private reserveSlots(slots: number): void {
    if (slots <= this.slotPage.length) return;
    const size = Math.max(slots, this.slotPage.length * 2);
    this.slotPage = grown(this.slotPage, size);
    this.slotDocument = grown(this.slotDocument, size);
    this.slotRow = grown(this.slotRow, size);
    this.slotNumber = grown(this.slotNumber, size);
    this.textOffset = grown(this.textOffset, size);
    this.textBytes = grown(this.textBytes, size);
    this.slotNext = grown(this.slotNext, size);
  }

  private textAt(slot: number): TextEntry {
    return { offset: this.textOffset[slot], bytes: this.textBytes[slot] };
  }

  /** Adds the pages not already held; their contents go to the content file in one write. */
  addAll(pages: readonly IndexedPage[]): void {
    const seen = new Set<number>();
    const fresh = pages.filter((p) => !this.slotOf.has(p.id) && !seen.has(p.id) && seen.add(p.id));
    const texts = this.texts.append(fresh.map((p) => p.content));
    this.vectors.appendAll(fresh.flatMap((p) => (p.embedding ? [p.embedding] : [])));
    fresh.forEach((page, i) => this.add(page, texts[i]));
  }

  private add(page: IndexedPage, text: TextEntry): void {
    this.layout++;
    if (this.slots >= MAX_SLOTS) this.compact();
    const slot = this.slots;
    this.reserveSlots(slot + 1);
    this.slots++;
    this.slotPage[slot] = page.id;
    this.slotDocument[slot] = page.documentId;
    this.slotNumber[slot] = page.pageNumber;
    this.textOffset[slot] = text.offset;
    this.textBytes[slot] = text.bytes;
    this.slotOf.set(page.id, slot);
    this.slotNext[slot] = this.documentLastSlot.get(page.documentId) ?? -1;
    this.documentLastSlot.set(page.documentId, slot);
    if (page.embedding) {
      const code = page.code ?? encodeRow(CODE_SPACE, page.embedding);
      const row = this.codes.appendCodes(code.bytes);
      const bits = bitRow(CODE_SPACE, code.bytes, this.bitScratch);
      this.bits.appendCodes(bits);
      const agreement = bitAgreement(CODE_SPACE, bits);
      this.minAgreement = Math.min(this.minAgreement, agreement);
      this.reserve(row + 1);
      this.rowError[row] = code.error;
      this.rowAgreement[row] = agreement;
      this.rowSuperseded[row] = page.superseded ? 1 : 0;
      if (page.superseded) this.supersededRows++;
      this.maxNorm = Math.max(this.maxNorm, code.norm);
      this.maxError = Math.max(this.maxError, code.error);
      this.rowSlot[row] = slot;
      this.slotRow[slot] = row;
    } else {
      this.slotRow[slot] = -1;
    }
    this.keyword.addTsvectorBytes(slot, page.tsv);
  }

  remove(pageId: number): void {
    const slot = this.slotOf.get(pageId);
    if (slot === undefined) return;
    this.layout++;
    this.slotOf.delete(pageId);
    // The document's list keeps the slot (a removed slot has no row) until compaction.
    this.keyword.remove(slot);
    this.slotPage[slot] = -1;
    this.removed++;
    this.removals++;
    if (this.texts.release(this.textAt(slot))) this.rewriteTexts();
    const row = this.slotRow[slot];
    if (row >= 0) {
      this.supersededRows -= this.rowSuperseded[row];
      // Swap-remove: the last row moves into the hole.
      const last = this.codes.rows - 1;
      if (row !== last) {
        this.vectors.moveRow(last, row);
        this.codes.copyRow(last, row);
        this.bits.copyRow(last, row);
        this.rowError[row] = this.rowError[last];
        this.rowAgreement[row] = this.rowAgreement[last];
        this.rowSuperseded[row] = this.rowSuperseded[last];
        const moved = this.rowSlot[last];
        this.rowSlot[row] = moved;
        this.slotRow[moved] = row;
      }
      this.codes.truncate(last);
      this.bits.truncate(last);
      this.vectors.truncate(last);
      this.slotRow[slot] = -1;
    }
    if (this.removed > 1024 && this.removed * 2 > this.slots) this.compact();
  }

  /** Renumbers the slots of live pages from 0, dropping removed ones (in place: a live slot only moves down). */
  private compact(): void {
    const remap = new Int32Array(this.slots).fill(-1);
    let live = 0;
    for (let slot = 0; slot < this.slots; slot++) {
      if (this.slotPage[slot] < 0) continue;
      remap[slot] = live;
      this.slotPage[live] = this.slotPage[slot];
      this.slotDocument[live] = this.slotDocument[slot];
      this.slotRow[live] = this.slotRow[slot];
      this.slotNumber[live] = this.slotNumber[slot];
      this.textOffset[live] = this.textOffset[slot];
      this.textBytes[live] = this.textBytes[slot];
      live++;
    }
    this.keyword.compact(remap, live);
    this.slots = live;
    for (let row = 0; row < this.codes.rows; row++) this.rowSlot[row] = remap[this.rowSlot[row]];
    for (const [pageId, slot] of this.slotOf) this.slotOf.set(pageId, remap[slot]);
    this.documentLastSlot.clear();
    for (let slot = 0; slot < live; slot++) {
      this.slotNext[slot] = this.documentLastSlot.get(this.slotDocument[slot]) ?? -1;
      this.documentLastSlot.set(this.slotDocument[slot], slot);
    }
    this.removed = 0;
  }

  /** The page at a live slot, with its content from the content file (read while the slot stays where it is). */
  async pageAt(slot: number): Promise<SlotPage> {
    const page = { pageId: this.slotPage[slot], documentId: this.slotDocument[slot], pageNumber: this.slotNumber[slot] };
    return { ...page, content: await this.texts.read(this.textAt(slot)) };
  }

  /** Copies the live pages' contents into a new content file, leaving the removed ones' behind. */
  private rewriteTexts(): void {
    const live: number[] = [];
    for (let slot = 0; slot < this.slots; slot++) if (this.slotPage[slot] >= 0) live.push(slot);
    const moved = this.texts.rewrite(live.map((slot) => this.textAt(slot)));
    if (moved) {
      live.forEach((slot, i) => {
        this.textOffset[slot] = moved[i].offset;
        this.textBytes[slot] = moved[i].bytes;
      });
    }
  }

  close(): void {
    this.texts.close();
    this.vectors.close();
  }

  /** Rows of the eligible documents' embedded pages, in increasing order; the same array until the layout changes. */
  rowsOf(documents: ReadonlySet<number>): Int32Array {
    const cached = this.eligibleRows.get(documents);
    if (cached?.layout === this.layout) return cached.rows;
    const list: number[] = [];
    for (const documentId of documents) {
      for (let slot = this.documentLastSlot.get(documentId) ?? -1; slot >= 0; slot = this.slotNext[slot]) {
        if (this.slotRow[slot] >= 0) list.push(this.slotRow[slot]);
      }
    }
    // Sorted rows read the matrix in order, and let keyword hits find their position by bisection.
    const rows = Int32Array.from(list).sort();
    this.eligibleRows.set(documents, { layout: this.layout, rows });
    return rows;
  }

  /**
   * The bits of `rows` (a filter's, as rowsOf() gives them) copied into a matrix of their own,
   * in the same order, or null. A filter spread over the workspace (a category every tenth
   * page has) has a few rows in each block of 32, so a scan of its rows scores nearly every
   * block: at a million pages a tenth of them cost a scan of all. The copy holds its rows only.
   * The second search with the same rows starts the copy, in slices between other work; later
   * searches scan it. A change of rows drops it, and the copies hold at most COMPACT_SHARE of
   * the workspace's rows, the least recently used dropped first.
   */
  compactBits(rows: Int32Array): VectorMatrix | null {
    for (const [key, known] of this.compacted) if (known.layout !== this.layout) this.compacted.delete(key);
    const entry = this.compacted.get(rows) ?? { layout: this.layout, spread: spreadOverBlocks(rows), uses: 0, matrix: null };
    this.compacted.delete(rows);
    this.compacted.set(rows, entry);
    if (this.compacted.size > COMPACT_FILTERS) this.compacted.delete(this.compacted.keys().next().value!);
    if (++entry.uses === 2 && entry.spread && rows.length <= COMPACT_SHARE * this.codes.rows) void this.copyBits(rows, entry);
    return entry.matrix;
  }

  private async copyBits(rows: Int32Array, entry: CompactBits): Promise<void> {
    const matrix = new VectorMatrix(EMBEDDING_DIMENSIONS, { kind: 'bits', capacity: rows.length });
    for (let i = 0; i < rows.length; i += COPY_SLICE) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (entry.layout !== this.layout || this.compacted.get(rows) !== entry) return;
      matrix.appendBitRowsOf(this.bits, rows.subarray(i, i + COPY_SLICE));
    }
    entry.matrix = matrix;
    let held = 0;
    for (const known of [...this.compacted.values()].reverse()) {
      if (known.matrix && (held += known.matrix.rows) > COMPACT_SHARE * this.codes.rows) known.matrix = null;
    }
  }
}
