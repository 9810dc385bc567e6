// The rows a filter's documents select follow every change of the workspace's pages, also when
// the same set of documents is asked again (the page index keeps a filter's set while it holds).
import { describe, expect, it } from 'vitest';
import { EMBEDDING_DIMENSIONS } from '../../src/search/vectors.js';
import { WorkspacePages } from '../../src/search/workspace-pages.js';

const unit = () => {
  const v = new Float32Array(EMBEDDING_DIMENSIONS);
  v[0] = 1;
  return v;
};
const page = (id: number, documentId: number, embedded = true) => ({ id, documentId, embedding: embedded ? unit() : null, tsv: "'wing':1" });
/** The page ids behind rows. */
const pagesAt = (ws: WorkspacePages, rows: Int32Array) => [...rows].map((row) => ws.slotPage[ws.rowSlot[row]]).sort((a, b) => a - b);

describe('WorkspacePages.rowsOf', () => {
  it('gives the embedded pages of the documents, and follows adds, removals and compaction for the same set', () => {
    const ws = new WorkspacePages();
    ws.matrix.reserve(4000);
    for (let id = 1; id <= 10; id++) ws.add(page(id, id % 3, id !== 4));
    const documents: ReadonlySet<number> = new Set([1, 2]);
    expect(pagesAt(ws, ws.rowsOf(documents))).toEqual([1, 2, 5, 7, 8, 10]);
    expect(ws.rowsOf(documents)).toBe(ws.rowsOf(documents));

    ws.add(page(11, 2));
    expect(pagesAt(ws, ws.rowsOf(documents))).toEqual([1, 2, 5, 7, 8, 10, 11]);
    ws.remove(1);
    ws.remove(2);
    expect(pagesAt(ws, ws.rowsOf(documents))).toEqual([5, 7, 8, 10, 11]);

    // Enough removals to compact the slots: rows and slots are renumbered.
    for (let id = 100; id < 3200; id++) ws.add(page(id, 0));
    for (let id = 100; id < 3200; id++) ws.remove(id);
    const rows = ws.rowsOf(documents);
    expect(pagesAt(ws, rows)).toEqual([5, 7, 8, 10, 11]);
    expect([...rows]).toEqual([...rows].sort((a, b) => a - b));
  });
});
