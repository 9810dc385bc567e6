// What the main thread and the embedded engine's thread say to each other.

export interface ThreadStart {
  /** The cluster's directory; null keeps it in memory. */
  dataDir: string | null;
  /** Server settings (`name=value`) given at start. */
  settings: string[];
  /** A dump of a data directory to start from. */
  snapshot: Blob | null;
}

export type ThreadRequest = { type: 'bytes'; id: number; bytes: Uint8Array } | { type: 'close' };

export type ThreadReply =
  | { type: 'ready' }
  | { type: 'failed'; error: { name: string; message: string } }
  | { type: 'bytes'; id: number; blocks: Uint8Array[] }
  | { type: 'error'; id: number; error: { name: string; message: string } }
  | { type: 'closed' };
