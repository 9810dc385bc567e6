// The requests a store's thread (PGlite's, the server engine's page reads) has been sent and not
// yet answered, matched to its replies by id.
import type { Worker } from 'node:worker_threads';

interface Waiting<A> {
  resolve: (answer: A) => void;
  reject: (error: Error) => void;
}

export class ThreadRequests<A> {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, Waiting<A>>();
  #next = 1;

  constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** Posts the request made with the next id; resolves with the answer to it. */
  send<T extends A>(make: (id: number) => unknown, transfer: ArrayBuffer[] = []): Promise<T> {
    const id = this.#next++;
    // Held by the process only while it waits for an answer: an idle store does not keep it alive.
    if (this.#waiting.size === 0) this.#worker.ref();
    this.#worker.postMessage(make(id), transfer);
    return new Promise((resolve, reject) => this.#waiting.set(id, { resolve: (answer) => resolve(answer as T), reject }));
  }

  /** Settles request `id` with its answer or its error; an id no longer waiting is ignored. */
  settle(id: number, outcome: { answer: A } | { error: Error }): void {
    const waiting = this.#waiting.get(id);
    if (!waiting) return;
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.#worker.unref();
    if ('error' in outcome) waiting.reject(outcome.error);
    else waiting.resolve(outcome.answer);
  }

  /** Fails every request still waiting. */
  failAll(error: Error): void {
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }
}
