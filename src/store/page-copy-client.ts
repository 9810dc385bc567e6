// The main thread's side of the server engine's page-read thread (page-copy-thread.ts): started
// at the first read, held by the process only while a read waits, ended with the store.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../worker-entry.js';
import { threadFailure } from './errors.js';
import { unpackPages } from './page-batch.js';
import type { CopyThreadReply, CopyThreadRequest, CopyThreadStart } from './page-copy.js';
import type { IndexedPage, PageSelection } from './pages.js';
import { ThreadRequests } from './thread-requests.js';

/** A started thread and the reads it has been sent. */
interface Running {
  worker: Worker;
  requests: ThreadRequests<IndexedPage[]>;
}

export class CopyThread {
  readonly #start: CopyThreadStart;
  /** The thread and its requests; after it ends unasked, the next read starts another. */
  #running: Running | null = null;
  #closed = false;
  #stopped: Promise<void> | null = null;

  constructor(start: CopyThreadStart) {
    this.#start = start;
  }

  /** The selected pages, in id order, read on the thread. */
  readPages(selection: PageSelection): Promise<IndexedPage[]> {
    if (this.#closed) return Promise.reject(threadFailure('the store is closed'));
    this.#running ??= this.#spawn();
    return this.#running.requests.send((id): CopyThreadRequest => ({ type: 'pages', id, selection }));
  }

  /** Closes the thread's connection and ends the thread, after the reads already asked for. */
  close(): Promise<void> {
    this.#closed = true;
    if (!this.#running) return Promise.resolve();
    const { worker } = this.#running;
    worker.ref();
    const request: CopyThreadRequest = { type: 'close' };
    worker.postMessage(request);
    return this.#stopped!;
  }

  #spawn(): Running {
    const worker = startWorker(import.meta.url, 'page-copy-thread', this.#start);
    const requests = new ThreadRequests<IndexedPage[]>(worker);
    const running: Running = { worker, requests };
    let exited!: () => void;
    this.#stopped = new Promise((resolve) => (exited = resolve));
    worker.on('message', (reply: CopyThreadReply) => {
      if (reply.type === 'closed') return void worker.terminate();
      if (reply.type === 'pages') return requests.settle(reply.id, { answer: unpackPages(reply.pages) });
      // A statement's failure keeps PostgreSQL's code (toStoreError reads it).
      const error = Object.assign(new Error(reply.error.message), reply.error.code ? { code: reply.error.code } : {});
      requests.settle(reply.id, { error });
    });
    worker.on('error', (error) => requests.failAll(threadFailure(`the page-read thread failed: ${error.message}`, error)));
    // A thread that ended unasked fails what waits on it; the next read starts another.
    worker.on('exit', () => {
      if (this.#running === running) this.#running = null;
      requests.failAll(threadFailure('the page-read thread has stopped'));
      exited();
    });
    worker.unref();
    return running;
  }
}
