// One workspace's pages in the page index: a contiguous matrix of unit embeddings, the
// keyword inverted index, and the slot bookkeeping that ties both to page and document ids,
// with the catch-up state page-index.ts keeps current.
import type { IndexedPage } from '../store/pages.js';
import { VectorMatrix } from './kernel/index.js';
import { KeywordIndex, MAX_SLOTS } from './keyword-index.js';
import { ReadWriteGate } from './read-write-gate.js';
import { parseTsvector } from './tsvector.js';
import { EMBEDDING_DIMENSIONS } from './vectors.js';

/**
 * One workspace's pages. A page has a slot, fixed until compaction, that the keyword index
 * knows it by; a page with an embedding also has a matrix row, which moves when another row
 * is removed (the matrix stays contiguous).
 */
export class WorkspacePages {
  readonly matrix = new VectorMatrix(EMBEDDING_DIMENSIONS);
  readonly keyword = new KeywordIndex();
  readonly gate = new ReadWriteGate();
  /** Row -> slot. */
  rowSlot: number[] = [];
  /** Slot -> page id (-1 once removed), document id and row (-1 without an embedding). */
  slotPage: number[] = [];
  slotDocument: number[] = [];
  slotRow: number[] = [];
  readonly slotOf = new Map<number, number>();
  /** Document id -> slots of its pages (removed ones too, until compaction), for filters that select documents. */
  readonly documentSlots = new Map<number, number[]>();
  removed = 0;
  xmin = '0';
  /** The store's local write count when the last catch-up began reading. */
  seenWrites = -1;
  /** Moves whenever a catch-up sees a document or page change: filters' documents read before are stale. */
  generation = 0;
  catchingUp = false;
  /** Moves with every change of rows or slots (add, remove, compaction): rows computed before are stale. */
  private layout = 0;
  /** The rows of a filter's documents (the same set while the filter's documents are cached), with the layout they were computed at. */
  private readonly eligibleRows = new WeakMap<ReadonlySet<number>, { layout: number; rows: Int32Array }>();
  /** The catch-up that has not started reading yet: later arrivals can share it. */
  nextCatchUp: Promise<void> | null = null;
  lastCatchUp: Promise<unknown> = Promise.resolve();

  add(page: IndexedPage): void {
    if (this.slotOf.has(page.id)) return;
    this.layout++;
    if (this.slotPage.length >= MAX_SLOTS) this.compact();
    const slot = this.slotPage.length;
    this.slotPage.push(page.id);
    this.slotDocument.push(page.documentId);
    this.slotOf.set(page.id, slot);
    let slots = this.documentSlots.get(page.documentId);
    if (!slots) this.documentSlots.set(page.documentId, (slots = []));
    slots.push(slot);
    if (page.embedding) {
      const row = this.matrix.append(page.embedding);
      this.rowSlot[row] = slot;
      this.slotRow.push(row);
    } else {
      this.slotRow.push(-1);
    }
    this.keyword.add(slot, parseTsvector(page.tsv));
  }

  remove(pageId: number): void {
    const slot = this.slotOf.get(pageId);
    if (slot === undefined) return;
    this.layout++;
    this.slotOf.delete(pageId);
    // documentSlots keeps the slot (a removed slot has no row) until compaction.
    this.keyword.remove(slot);
    this.slotPage[slot] = -1;
    this.removed++;
    const row = this.slotRow[slot];
    if (row >= 0) {
      // Swap-remove: the last row moves into the hole.
      const last = this.matrix.rows - 1;
      if (row !== last) {
        this.matrix.copyRow(last, row);
        const moved = this.rowSlot[last];
        this.rowSlot[row] = moved;
        this.slotRow[moved] = row;
      }
      this.rowSlot.pop();
      this.matrix.truncate(last);
      this.slotRow[slot] = -1;
    }
    if (this.removed > 1024 && this.removed * 2 > this.slotPage.length) this.compact();
  }

  /** Renumbers the slots of live pages from 0, dropping removed ones. */
  private compact(): void {
    const remap = new Int32Array(this.slotPage.length).fill(-1);
    const slotPage: number[] = [];
    const slotDocument: number[] = [];
    const slotRow: number[] = [];
    for (let slot = 0; slot < this.slotPage.length; slot++) {
      if (this.slotPage[slot] < 0) continue;
      remap[slot] = slotPage.length;
      slotPage.push(this.slotPage[slot]);
      slotDocument.push(this.slotDocument[slot]);
      slotRow.push(this.slotRow[slot]);
    }
    this.keyword.compact(remap, slotPage.length);
    this.slotPage = slotPage;
    this.slotDocument = slotDocument;
    this.slotRow = slotRow;
    this.rowSlot = this.rowSlot.map((slot) => remap[slot]);
    for (const [pageId, slot] of this.slotOf) this.slotOf.set(pageId, remap[slot]);
    for (const [documentId, slots] of this.documentSlots) {
      const live = slots.map((s) => remap[s]).filter((s) => s >= 0);
      if (live.length > 0) this.documentSlots.set(documentId, live);
      else this.documentSlots.delete(documentId);
    }
    this.removed = 0;
  }

  /** Rows of the eligible documents' embedded pages, in increasing order; the same array until the layout changes. */
  rowsOf(documents: ReadonlySet<number>): Int32Array {
    const cached = this.eligibleRows.get(documents);
    if (cached?.layout === this.layout) return cached.rows;
    const list: number[] = [];
    for (const documentId of documents) {
      for (const slot of this.documentSlots.get(documentId) ?? []) {
        if (this.slotRow[slot] >= 0) list.push(this.slotRow[slot]);
      }
    }
    // Sorted rows read the matrix in order, and let keyword hits find their position by bisection.
    const rows = Int32Array.from(list).sort();
    this.eligibleRows.set(documents, { layout: this.layout, rows });
    return rows;
  }
}
