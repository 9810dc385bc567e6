// The in-process exact vector index: per workspace, one contiguous float32 matrix of unit
// page embeddings, loaded from the store on first use and brought up to date with the
// store's page changes before every scan, so a search on any process sees every write
// acknowledged before it.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { loadPageVectors, pageChangesSince, pageVectors } from '../store/pages.js';
import { ScanPool, VectorMatrix } from './kernel/index.js';
import { EMBEDDING_DIMENSIONS } from './vectors.js';

export interface SemanticScores {
  /** Page id of each score. */
  pageIds: number[];
  /** Dot product of the query with each page's unit embedding (its cosine). */
  scores: Float32Array;
}

export interface IndexMemory {
  workspaces: number;
  pages: number;
  /** Bytes holding page vectors. */
  vectorBytes: number;
  /** Bytes of address space the matrices have grown to (untouched pages take no RAM). */
  reservedBytes: number;
}

class WorkspaceVectors {
  readonly matrix = new VectorMatrix(EMBEDDING_DIMENSIONS);
  /** Row -> page id. */
  readonly pageIds: number[] = [];
  /** Row -> document id, for filters that select documents. */
  readonly documentIds: number[] = [];
  /** Page id -> row. */
  readonly rowOf = new Map<number, number>();
  xmin = '0';
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` alone: writes to the matrix never race a scan of it. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  append(pageId: number, documentId: number, embedding: Float32Array): void {
    if (this.rowOf.has(pageId)) return;
    const row = this.matrix.append(embedding);
    this.pageIds[row] = pageId;
    this.documentIds[row] = documentId;
    this.rowOf.set(pageId, row);
  }

  /** Swap-remove: the last row moves into the hole, so the matrix stays contiguous. */
  remove(pageId: number): void {
    const row = this.rowOf.get(pageId);
    if (row === undefined) return;
    const last = this.matrix.rows - 1;
    if (row !== last) {
      this.matrix.copyRow(last, row);
      const moved = this.pageIds[last];
      this.pageIds[row] = moved;
      this.documentIds[row] = this.documentIds[last];
      this.rowOf.set(moved, row);
    }
    this.pageIds.pop();
    this.documentIds.pop();
    this.rowOf.delete(pageId);
    this.matrix.truncate(last);
  }
}

export class VectorIndex {
  private readonly workspaces = new Map<number, Promise<WorkspaceVectors>>();
  private readonly loaded = new Set<WorkspaceVectors>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly pool: ScanPool,
  ) {}

  /**
   * Cosines of `query` (a unit vector) with every embedded page of the workspace, or only
   * with the pages of the given documents.
   */
  async score(workspaceId: number, query: Float32Array, documentIds: ReadonlySet<number> | null): Promise<SemanticScores> {
    const ws = await this.workspace(workspaceId);
    return ws.exclusive(async () => {
      await this.catchUp(workspaceId, ws);
      if (documentIds === null) {
        return { pageIds: ws.pageIds.slice(), scores: await this.pool.score(ws.matrix, query) };
      }
      const rows: number[] = [];
      for (let row = 0; row < ws.documentIds.length; row++) {
        if (documentIds.has(ws.documentIds[row])) rows.push(row);
      }
      return this.scoreRows(ws, query, rows);
    });
  }

  /** Cosines of `query` with the given pages (those without an embedding are left out). */
  async scorePages(workspaceId: number, query: Float32Array, pageIds: number[]): Promise<SemanticScores> {
    const ws = await this.workspace(workspaceId);
    return ws.exclusive(async () => {
      await this.catchUp(workspaceId, ws);
      const rows: number[] = [];
      for (const id of pageIds) {
        const row = ws.rowOf.get(id);
        if (row !== undefined) rows.push(row);
      }
      return this.scoreRows(ws, query, rows);
    });
  }

  private async scoreRows(ws: WorkspaceVectors, query: Float32Array, rows: number[]): Promise<SemanticScores> {
    if (rows.length === 0) return { pageIds: [], scores: new Float32Array(0) };
    return { pageIds: rows.map((row) => ws.pageIds[row]), scores: await this.pool.score(ws.matrix, query, Int32Array.from(rows)) };
  }

  memory(): IndexMemory {
    const stats: IndexMemory = { workspaces: 0, pages: 0, vectorBytes: 0, reservedBytes: 0 };
    for (const ws of this.loaded) {
      stats.workspaces++;
      stats.pages += ws.matrix.rows;
      stats.vectorBytes += ws.matrix.rows * ws.matrix.layout.stride;
      stats.reservedBytes += ws.matrix.byteLength;
    }
    return stats;
  }

  private workspace(workspaceId: number): Promise<WorkspaceVectors> {
    let pending = this.workspaces.get(workspaceId);
    if (!pending) {
      pending = this.load(workspaceId);
      this.workspaces.set(workspaceId, pending);
      pending.catch(() => this.workspaces.delete(workspaceId));
    }
    return pending;
  }

  private async load(workspaceId: number): Promise<WorkspaceVectors> {
    const ws = new WorkspaceVectors();
    ws.xmin = await loadPageVectors(this.db, workspaceId, (count, batch) => {
      ws.matrix.reserve(count);
      for (const page of batch) ws.append(page.id, page.documentId, page.embedding);
    });
    this.loaded.add(ws);
    return ws;
  }

  private async catchUp(workspaceId: number, ws: WorkspaceVectors): Promise<void> {
    const { xmin, changes } = await pageChangesSince(this.db, workspaceId, ws.xmin);
    const inserted = new Set<number>();
    for (const change of changes) {
      if (change.kind === 'insert') {
        if (!ws.rowOf.has(change.pageId)) inserted.add(change.pageId);
      } else if (!inserted.delete(change.pageId)) {
        ws.remove(change.pageId);
      }
    }
    if (inserted.size > 0) {
      for (const page of await pageVectors(this.db, [...inserted])) ws.append(page.id, page.documentId, page.embedding);
    }
    ws.xmin = xmin;
  }

  async close(): Promise<void> {
    for (const ws of this.loaded) this.pool.release(ws.matrix);
    this.loaded.clear();
    this.workspaces.clear();
  }
}
