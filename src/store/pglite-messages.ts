// What the main thread and the embedded engine's thread say to each other.
import type { PackedBatch, WrittenIds } from './embedded-batch.js';
import type { PackedPages } from './page-batch.js';
import type { PageSelection } from './pages.js';

export interface ThreadStart {
  /** The cluster's directory; null keeps it in memory. */
  dataDir: string | null;
  /** Server settings (`name=value`) given at start. */
  settings: string[];
  /** A dump of a data directory to start from. */
  snapshot: Blob | null;
}

export type ThreadRequest =
  | { type: 'bytes'; id: number; bytes: Uint8Array }
  /**
   * Documents from precomputed embeddings to write, packed by the main thread and joined with
   * the others waiting (embedded-batch.ts).
   */
  | { type: 'embedded'; id: number; batches: PackedBatch[] }
  /** Pages for the page index (page-batch.ts). */
  | { type: 'pages'; id: number; selection: PageSelection }
  | { type: 'close' };

export type ThreadReply =
  | { type: 'ready' }
  | { type: 'failed'; error: { name: string; message: string } }
  | { type: 'bytes'; id: number; blocks: Uint8Array[] }
  /** The documents' ids in order, or null when a webhook watches one of their workspaces (nothing written). */
  | { type: 'embedded'; id: number; ids: number[] | null }
  /**
   * A write of documents from embeddings committed, told before its requests' answers and
   * before anything that ran after it: the workspaces it wrote, its requests (ids, in the order
   * written) and the ids of their documents and pages in their items' order.
   */
  | { type: 'written'; workspaces: number[]; requests: number[]; written: WrittenIds }
  | { type: 'pages'; id: number; pages: PackedPages }
  /** `code`: PostgreSQL's, when a statement failed; without it the thread itself failed. */
  | { type: 'error'; id: number; error: { name: string; message: string; code?: string } }
  | { type: 'closed' };
