// The main thread's side of the embedded engine's thread (pglite-thread.ts): the thread
// itself, and a node-postgres connection that speaks the protocol to it, so Kysely and
// node-postgres work as they do against a server. Statements then run beside the requests
// that wait for them instead of stopping every other request while they run.
import { EventEmitter } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { parse, serialize } from 'pg-protocol';
import { packBatch, type EmbeddedDocument, type PackedBatch, type WrittenIds } from './embedded-batch.js';
import { threadFailure } from './errors.js';
import type { PackedPages } from './page-batch.js';
import type { PageSelection } from './pages.js';
import type { ThreadReply, ThreadRequest, ThreadStart } from './pglite-messages.js';
import { ThreadRequests } from './thread-requests.js';
import { startWorker } from '../worker-entry.js';

/** What a request is answered with: protocol bytes answer blocks, embedded writes ids (or null), a page read its pages. */
type Answer = Uint8Array[] | number[] | PackedPages | null;

/** A committed write of documents from embeddings, as `onWritten` is told of it. */
export interface EmbeddedWrite {
  workspaces: number[];
  /** The items written, in order, with the ids of their documents and pages. */
  items: EmbeddedDocument[];
  written: WrittenIds;
  /** Whether one of the write's requests asked for its pages. */
  pagesWanted: boolean;
}

/** Documents packed at once for the thread: about 5 ms of the main thread's time. */
const PACK_SLICE = 32;

/** PGlite on a thread of its own; `exec` hands it protocol bytes and resolves with its answer, in blocks. */
export class EngineThread {
  readonly #worker: Worker;
  readonly #requests: ThreadRequests<Answer>;
  /** The documents of each write sent and not yet answered, by request id, for `onWritten`. */
  readonly #writes = new Map<number, { items: EmbeddedDocument[]; pagesWanted: boolean }>();
  #failure: Error | null = null;
  #closed: (() => void) | null = null;
  /** Told of each committed write of documents from embeddings, before anything that ran after it is answered. */
  onWritten: (write: EmbeddedWrite) => void = () => {};

  private constructor(worker: Worker) {
    this.#worker = worker;
    this.#requests = new ThreadRequests(worker);
  }

  /** Starts the thread and resolves once PGlite is open (rejects if it cannot open). */
  static start(start: ThreadStart): Promise<EngineThread> {
    // The thread's JavaScript only copies answers out: a small young generation collects their
    // blocks soon rather than letting the process grow (after a 10k-page index load: 10-20 MB less).
    const worker = startWorker(import.meta.url, 'pglite-thread', start, { maxYoungGenerationSizeMb: 2 });
    const thread = new EngineThread(worker);
    return new Promise((resolve, reject) => {
      worker.on('message', (reply: ThreadReply) => {
        if (reply.type === 'ready') {
          worker.unref();
          resolve(thread);
        } else if (reply.type === 'failed') {
          reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
        } else {
          thread.#answer(reply);
        }
      });
      worker.on('error', (error) => {
        thread.#fail(threadFailure(`the embedded database's thread failed: ${error.message}`, error));
        reject(error);
      });
      worker.on('exit', () => {
        thread.#fail(threadFailure("the embedded database's thread has stopped"));
        thread.#closed?.();
        reject(new Error("the embedded database's thread stopped before it opened"));
      });
    });
  }

  exec(bytes: Uint8Array): Promise<Uint8Array[]> {
    return this.#send((id) => ({ type: 'bytes', id, bytes }), [bytes.buffer as ArrayBuffer]);
  }

  /**
   * Writes documents from precomputed embeddings on the thread, joined with the others waiting
   * there (pglite-thread.ts): their ids in order, or null when a webhook watches one of their
   * workspaces and nothing was written. `pagesWanted`: `onWritten` makes the write's pages.
   */
  async writeEmbedded(items: EmbeddedDocument[], pagesWanted: boolean): Promise<number[] | null> {
    // Packed here, not on the thread, whose time is the engine's: PostgreSQL's own work is the rest
    // of it. In slices with a turn between them, as the other requests' work, the way a batch is prepared.
    const batches: PackedBatch[] = [];
    for (let from = 0; from < items.length; from += PACK_SLICE) {
      if (from > 0) await nextTurn();
      batches.push(packBatch(items.slice(from, from + PACK_SLICE)));
    }
    return this.#send(
      (id) => {
        this.#writes.set(id, { items, pagesWanted });
        return { type: 'embedded', id, batches };
      },
      batches.flatMap((batch) => [batch.embeddings.buffer as ArrayBuffer, batch.tsvectors.buffer as ArrayBuffer]),
    );
  }

  /** The selected pages, in id order, read on the thread (page-batch.ts). */
  readPages(selection: PageSelection): Promise<PackedPages> {
    return this.#send((id) => ({ type: 'pages', id, selection }));
  }

  /** Sends the request made with the next id; resolves with the answer to it. */
  #send<T extends Answer>(make: (id: number) => ThreadRequest, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.#failure) return Promise.reject(this.#failure);
    return this.#requests.send<T>(make, transfer);
  }

  /** Closes PGlite (after every statement sent before) and ends the thread. */
  close(): Promise<void> {
    if (this.#failure) return Promise.resolve();
    this.#worker.ref();
    const closed = new Promise<void>((resolve) => (this.#closed = resolve));
    const request: ThreadRequest = { type: 'close' };
    this.#worker.postMessage(request);
    return closed;
  }

  #answer(reply: ThreadReply): void {
    if (reply.type === 'bytes') this.#requests.settle(reply.id, { answer: reply.blocks });
    else if (reply.type === 'embedded') {
      this.#writes.delete(reply.id);
      this.#requests.settle(reply.id, { answer: reply.ids });
    } else if (reply.type === 'pages') this.#requests.settle(reply.id, { answer: reply.pages });
    else if (reply.type === 'written') this.#written(reply);
    else if (reply.type === 'error') {
      this.#writes.delete(reply.id);
      // A statement's failure keeps PostgreSQL's code (toStoreError reads it).
      const error = reply.error.code
        ? Object.assign(new Error(reply.error.message), { code: reply.error.code })
        : threadFailure(`the embedded database failed: ${reply.error.name}: ${reply.error.message}`);
      this.#requests.settle(reply.id, { error });
    }
  }

  #written({ workspaces, requests, written }: Extract<ThreadReply, { type: 'written' }>): void {
    const writes = requests.map((id) => this.#writes.get(id)!);
    this.onWritten({ workspaces, items: writes.flatMap((w) => w.items), written, pagesWanted: writes.some((w) => w.pagesWanted) });
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    this.#writes.clear();
    this.#requests.failAll(error);
  }
}

/**
 * What node-postgres needs of a connection (it takes one through its `connection` option),
 * over the engine's thread: no socket, no startup or authentication (PGlite is one open
 * session), the messages of one call sent together and the answers parsed as they come back.
 * The pool keeps one connection and hands it to each new client in turn, as PGlite is one session.
 */
export class ThreadConnection extends EventEmitter {
  /** Read by node-postgres's `Client.end()`. */
  _connecting = false;
  /** Named statements this session has parsed, kept by node-postgres across its clients. */
  parsedStatements: Record<string, string> = {};
  /** Named statements sent and not yet confirmed parsed. */
  submittedNamedStatements: Record<string, string> = {};
  /** node-postgres destroys the stream to end a client whose query is still running. */
  readonly stream = { destroy: () => this.end() };

  readonly #thread: EngineThread;
  /** The server's answers, read by one protocol parser for the whole session. */
  readonly #answers = new EventEmitter();
  /** Messages as node-postgres serialised them, not yet sent. */
  #pending: Buffer[] = [];
  #last: Promise<unknown> = Promise.resolve();

  constructor(thread: EngineThread) {
    super();
    this.#thread = thread;
    void parse(this.#answers as unknown as NodeJS.ReadableStream, (message) => {
      // node-postgres listens for an ErrorResponse as 'errorMessage'.
      this.emit(message.name === 'error' ? 'errorMessage' : message.name, message);
    });
  }

  connect(): void {
    this._connecting = true;
    process.nextTick(() => this.emit('readyForQuery'));
  }

  end(): void {
    const answered = this.#last;
    // The pool gives this connection to its next client: the ended one's listeners must go.
    for (const event of this.eventNames()) this.removeAllListeners(event);
    const ended = () => this.emit('end');
    void answered.then(ended, ended);
  }

  query(text: string): void {
    this.#send(serialize.query(text));
  }

  parse(query: Parameters<typeof serialize.parse>[0]): void {
    this.#send(serialize.parse(query));
  }

  bind(config: Parameters<typeof serialize.bind>[0]): void {
    this.#send(serialize.bind(config));
  }

  describe(message: Parameters<typeof serialize.describe>[0]): void {
    this.#send(serialize.describe(message));
  }

  execute(config: Parameters<typeof serialize.execute>[0]): void {
    this.#send(serialize.execute(config));
  }

  close(message: Parameters<typeof serialize.close>[0]): void {
    this.#send(serialize.close(message));
  }

  flush(): void {
    this.#send(serialize.flush());
  }

  sync(): void {
    this.#send(serialize.sync());
  }

  sendCopyFromChunk(chunk: Buffer): void {
    this.#send(serialize.copyData(chunk));
  }

  endCopyFrom(): void {
    this.#send(serialize.copyDone());
  }

  sendCopyFail(message: string): void {
    this.#send(serialize.copyFail(message));
  }

  // Socket and authentication steps node-postgres may call: an open session has none.
  requestSsl(): void {}
  startup(): void {}
  password(): void {}
  cancel(): void {}
  ref(): void {}
  unref(): void {}

  /** Queues the message; what one call of node-postgres sends (parse, bind, ..., sync) goes over together. */
  #send(message: Buffer): void {
    if (this.#pending.length === 0) queueMicrotask(() => this.#flush());
    this.#pending.push(message);
  }

  #flush(): void {
    const messages = this.#pending;
    this.#pending = [];
    // A buffer of its own, handed to the thread without a copy (node-postgres's may share Node's pool).
    const bytes = new Uint8Array(messages.reduce((sum, m) => sum + m.byteLength, 0));
    let offset = 0;
    for (const m of messages) {
      bytes.set(m, offset);
      offset += m.byteLength;
    }
    this.#last = this.#thread.exec(bytes).then(
      (blocks) => {
        for (const b of blocks) this.#answers.emit('data', Buffer.from(b.buffer, b.byteOffset, b.byteLength));
      },
      (error: Error) => {
        // As a socket's failure: the client fails its queries and leaves the pool. An ended client listens no more.
        if (this.listenerCount('error') > 0) this.emit('error', error);
      },
    );
  }
}
