// The main thread's side of the server engine's page-read thread (page-copy-thread.ts): started
// at the first read, held by the process only while a read waits, ended with the store.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../worker-entry.js';
import { threadFailure } from './errors.js';
import { unpackPages } from './page-batch.js';
import type { CopyThreadReply, CopyThreadRequest, CopyThreadStart } from './page-copy.js';
import type { IndexedPage, PageSelection } from './pages.js';

interface Waiting {
  resolve: (pages: IndexedPage[]) => void;
  reject: (error: Error) => void;
}

export class CopyThread {
  readonly #start: CopyThreadStart;
  #worker: Worker | null = null;
  readonly #waiting = new Map<number, Waiting>();
  #next = 1;
  #closed = false;
  #stopped: Promise<void> | null = null;

  constructor(start: CopyThreadStart) {
    this.#start = start;
  }

  /** The selected pages, in id order, read on the thread. */
  readPages(selection: PageSelection): Promise<IndexedPage[]> {
    if (this.#closed) return Promise.reject(threadFailure('the store is closed'));
    const worker = (this.#worker ??= this.#spawn());
    const id = this.#next++;
    if (this.#waiting.size === 0) worker.ref();
    const request: CopyThreadRequest = { type: 'pages', id, selection };
    worker.postMessage(request);
    return new Promise((resolve, reject) => this.#waiting.set(id, { resolve, reject }));
  }

  /** Closes the thread's connection and ends the thread, after the reads already asked for. */
  close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    if (!worker) return Promise.resolve();
    worker.ref();
    const request: CopyThreadRequest = { type: 'close' };
    worker.postMessage(request);
    return this.#stopped!;
  }

  #spawn(): Worker {
    const worker = startWorker(import.meta.url, 'page-copy-thread', this.#start);
    let exited!: () => void;
    this.#stopped = new Promise((resolve) => (exited = resolve));
    worker.on('message', (reply: CopyThreadReply) => {
      if (reply.type === 'closed') return void worker.terminate();
      const waiting = this.#waiting.get(reply.id);
      if (!waiting) return;
      this.#waiting.delete(reply.id);
      if (this.#waiting.size === 0) worker.unref();
      if (reply.type === 'pages') waiting.resolve(unpackPages(reply.pages));
      // A statement's failure keeps PostgreSQL's code (toStoreError reads it).
      else waiting.reject(Object.assign(new Error(reply.error.message), reply.error.code ? { code: reply.error.code } : {}));
    });
    worker.on('error', (error) => this.#fail(threadFailure(`the page-read thread failed: ${error.message}`, error)));
    // A thread that ended unasked fails what waits on it; the next read starts another.
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = null;
      this.#fail(threadFailure('the page-read thread has stopped'));
      exited();
    });
    worker.unref();
    return worker;
  }

  #fail(error: Error): void {
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }
}
