// The server engine's reads of pages for the page index, in binary through COPY: node-postgres
// decodes every field of a row as text (an embedding as 8 KB of base64, a tsvector as its text
// form), but hands over COPY's data as bytes. They run on a thread of their own
// (page-copy-thread.ts), which the main thread talks to through page-copy-client.ts.
import type pg from 'pg';
import { COPIES, firstBlockAfter, readPageCopy, statementOf, type PackedPages } from './page-batch.js';
import type { PageSelection } from './pages.js';

export interface CopyThreadStart {
  connectionString: string;
  /** Statements run on the thread's connection when it opens (the store's session settings). */
  settings: string;
}

export type CopyThreadRequest = { type: 'pages'; id: number; selection: PageSelection } | { type: 'close' };

export type CopyThreadReply =
  | { type: 'pages'; id: number; pages: PackedPages }
  /** `code`: PostgreSQL's, when a statement failed. */
  | { type: 'error'; id: number; error: { message: string; code?: string } }
  | { type: 'closed' };

/** What the first read sets aside for its answer (later ones: firstBlockAfter). */
const FIRST_BLOCK = 64 * 1024;

/** What node-postgres's connection offers a query it runs (the parts used here). */
interface Connection {
  query(text: string): void;
  sendCopyFail(message: string): void;
}

/**
 * A `COPY ... TO STDOUT` run through node-postgres as a custom query (the driver calls these
 * handlers; pg-cursor is built the same way), its data gathered into one buffer as it comes:
 * the driver's chunks are views of its read buffer, which it reuses.
 */
class CopyOut {
  readonly done: Promise<Uint8Array>;
  #block: Uint8Array;
  #used = 0;
  #settle!: (error: Error | null) => void;

  constructor(
    readonly text: string,
    expected: number,
  ) {
    this.#block = new Uint8Array(expected);
    this.done = new Promise((resolve, reject) => {
      this.#settle = (error) => (error ? reject(error) : resolve(this.#block.subarray(0, this.#used)));
    });
  }

  submit(connection: Connection): void {
    connection.query(this.text);
  }

  handleCopyData(message: { chunk: Uint8Array }): void {
    const { chunk } = message;
    if (this.#used + chunk.length > this.#block.length) {
      const grown = new Uint8Array(Math.max(this.#block.length * 2, this.#used + chunk.length));
      grown.set(this.#block.subarray(0, this.#used));
      this.#block = grown;
    }
    this.#block.set(chunk, this.#used);
    this.#used += chunk.length;
  }

  /** Settles at once: a server's error comes before a ReadyForQuery, a lost connection's with none to follow. */
  handleError(error: Error): void {
    this.#settle(error);
  }

  handleReadyForQuery(): void {
    this.#settle(null);
  }

  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFail('a COPY to the server was not asked for');
  }

  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
}

/** Reads the selected pages through COPY's binary format on a connection of `pool`, packed. */
export function copyPageReader(pool: pg.Pool): (selection: PageSelection) => Promise<PackedPages> {
  let lastRead = FIRST_BLOCK;
  return async (selection) => {
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      await client.query(`SELECT set_config('folio.page_selection', $1, false)`, [JSON.stringify(selection)]);
      const copy = new CopyOut(COPIES[statementOf(selection)], firstBlockAfter(lastRead));
      void client.query(copy as unknown as pg.Submittable);
      const bytes = await copy.done;
      lastRead = Math.max(FIRST_BLOCK, bytes.length);
      return readPageCopy(bytes);
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      // A connection whose read failed is not trusted again: its state is not known.
      client.release(failure);
    }
  };
}
