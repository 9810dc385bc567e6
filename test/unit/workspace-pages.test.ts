// The rows a filter's documents select follow every change of the workspace's pages, also when
// the same set of documents is asked again (the page index keeps a filter's set while it holds).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { EMBEDDING_DIMENSIONS } from '../../src/search/vectors.js';
import { WorkspacePages } from '../../src/search/workspace-pages.js';

const unit = () => {
  const v = new Float32Array(EMBEDDING_DIMENSIONS);
  v[0] = 1;
  return v;
};
/** The binary tsvector of 'wing':1, as tsvectorsend writes it. */
const WING = Uint8Array.from([0, 0, 0, 1, ...Buffer.from('wing'), 0, 0, 1, 0, 1]);
const page = (id: number, documentId: number, embedded = true, content = `page ${id}`) => ({
  id,
  documentId,
  pageNumber: id % 7,
  content: Buffer.from(content),
  embedding: embedded ? unit() : null,
  tsv: WING,
});
/** The page ids behind rows. */
const pagesAt = (ws: WorkspacePages, rows: Int32Array) => [...rows].map((row) => ws.slotPage[ws.rowSlot[row]]).sort((a, b) => a - b);

describe('WorkspacePages.rowsOf', () => {
  it('gives the embedded pages of the documents, and follows adds, removals and compaction for the same set', () => {
    const ws = new WorkspacePages();
    ws.reserve(4000);
    for (let id = 1; id <= 10; id++) ws.addAll([page(id, id % 3, id !== 4)]);
    const documents: ReadonlySet<number> = new Set([1, 2]);
    expect(pagesAt(ws, ws.rowsOf(documents))).toEqual([1, 2, 5, 7, 8, 10]);
    expect(ws.rowsOf(documents)).toBe(ws.rowsOf(documents));

    ws.addAll([page(11, 2)]);
    expect(pagesAt(ws, ws.rowsOf(documents))).toEqual([1, 2, 5, 7, 8, 10, 11]);
    ws.remove(1);
    ws.remove(2);
    expect(pagesAt(ws, ws.rowsOf(documents))).toEqual([5, 7, 8, 10, 11]);

    // Enough removals to compact the slots: rows and slots are renumbered.
    ws.addAll(Array.from({ length: 3100 }, (_, i) => page(100 + i, 0)));
    for (let id = 100; id < 3200; id++) ws.remove(id);
    const rows = ws.rowsOf(documents);
    expect(pagesAt(ws, rows)).toEqual([5, 7, 8, 10, 11]);
    expect([...rows]).toEqual([...rows].sort((a, b) => a - b));
  });
});

describe('WorkspacePages.pageAt', () => {
  /** The ids of live pages whose number and content differ from the expected, and of expected pages not live. */
  const differing = async (ws: WorkspacePages, expected: Map<number, string>) => {
    const ids = [...expected.keys()].filter((id) => !ws.slotOf.has(id));
    for (const [id, slot] of ws.slotOf) {
      const p = await ws.pageAt(slot);
      if (`${p.pageNumber}:${p.content}` !== expected.get(id)) ids.push(id);
    }
    return ids;
  };

  it('reads each page back from the content file through additions, removals, slot compaction and a rewrite of the file', async () => {
    // Its directory and the missing parents are made.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-contents-'));
    // Content files opened: the first, then the one it is rewritten into.
    const opened = vi.spyOn(fs, 'openSync');
    const ws = new WorkspacePages(path.join(root, 'data', 'index'));
    const expected = new Map<number, string>();
    // 3,000 pages of 8 KB of non-ASCII text (24 MB): removing most of them outweighs the rest and rewrites the file.
    const text = (id: number) => `é ${id} ${'ü'.repeat(4000)} ${id}`;
    ws.addAll(Array.from({ length: 3000 }, (_, i) => page(i + 1, i % 5, i % 4 !== 0, text(i + 1))));
    ws.addAll([page(5, 0, true, 'a duplicate is not added again')]);
    for (let id = 1; id <= 3000; id++) expected.set(id, `${id % 7}:${text(id)}`);
    expect(await differing(ws, expected)).toEqual([]);
    for (let id = 1; id <= 2900; id++) {
      ws.remove(id);
      expected.delete(id);
    }
    expect(opened.mock.calls.filter(([file]) => path.basename(String(file)).startsWith('contents-'))).toHaveLength(2);
    opened.mockRestore();
    ws.addAll([page(5000, 1, true, 'late page, after the rewrite')]);
    expected.set(5000, `${5000 % 7}:late page, after the rewrite`);
    expect(await differing(ws, expected)).toEqual([]);
    ws.close();
    expect((await ws.pageAt(ws.slotOf.get(5000)!)).content).toBeNull();
    // The file was unlinked as soon as it was open.
    expect(fs.readdirSync(path.join(root, 'data', 'index'))).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('keeps no contents without a directory, or when the directory cannot be made', async () => {
    // A directory under a file cannot be made, nor one in /proc (where Node's recursive mkdir never returns).
    for (const dir of [null, path.join(fileURLToPath(import.meta.url), 'contents'), '/proc/folio-contents/index']) {
      const ws = new WorkspacePages(dir);
      ws.addAll([page(1, 1, true, 'some text')]);
      expect(await ws.pageAt(ws.slotOf.get(1)!)).toEqual({ pageId: 1, documentId: 1, pageNumber: 1, content: null });
      ws.close();
    }
  });
});
