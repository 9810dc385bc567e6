// ParserPool: parseDocument on worker threads, so that a 500-page PDF never blocks the event
// loop. The worker entry sits next to this file: worker.js in the compiled build, worker.ts
// under vitest or tsx, where the worker registers tsx's loader before importing it.
//
// OCR: with the ocr option, the pool owns one OcrEngine (Tesseract worker threads, started
// on the first page that needs it, ended by close()). Parser workers render pages and send
// the images here; the engine's threads are shared by all parser workers, so FOLIO_OCR_THREADS
// bounds recognition for the whole pool. Each OCR step (a page prepared, a recognition asked
// for) pushes the parse's time limit out to at least ocr.pageTimeoutMs from then, so a long
// scanned document is not stopped for being long, while a stuck one still is.

import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { EMBEDDING_DIMENSIONS } from '../../providers/embeddings/types.js';
import { unpackTsvectors, type PackedTsvectors } from '../../text/english-tsvector.js';
import { startWorker } from '../../worker-entry.js';
import { OcrEngine } from '../ocr/engine.js';
import { languageData, parseLanguages } from '../ocr/languages.js';
import type { OcrResult, RecognizeOptions } from '../ocr/types.js';
import { ParseError, type DocumentFormat, type PageExtras, type ProgressCallback, type SegmentedDocument } from './types.js';

export interface ParserPoolOptions {
  /** Worker threads (default: one per spare core, 1 to 2). */
  threads?: number;
  /**
   * A parse running longer than this is stopped (its worker is replaced) and fails with a
   * ParseError. Counted from the start of parsing, not from the worker's start-up. Default
   * 300 s; 0 = none.
   */
  timeoutMs?: number;
  /** Heap limit of each worker in MiB; a file that needs more fails. Default: Node's. */
  maxMemoryMb?: number;
  /**
   * The workers' Linux niceness: at the default, 10, a parse gives way to the process's
   * requests when the cores are busy. 0 runs them as any other thread.
   */
  niceness?: number;
  /** OCR of scanned PDF pages and images; absent or null: OCR is off. */
  ocr?: OcrPoolOptions | null;
}

export interface OcrPoolOptions {
  /** Tesseract worker threads shared by the pool (default 1). */
  threads?: number;
  /** Language codes: "eng", "eng+deu" or a list (default eng). Each must be installed. */
  languages?: string | readonly string[];
  /**
   * A parse's time limit is pushed out to at least this long after each OCR step (a page
   * prepared, a recognition asked for). Default 120 s.
   */
  pageTimeoutMs?: number;
}

/** What a worker is started with. */
export interface WorkerStart {
  niceness: number;
}

export interface WorkerJob {
  type: 'job';
  id: number;
  bytes: Uint8Array;
  format: DocumentFormat;
  /** Present when OCR is on: how many recognitions the pool runs at once. */
  ocr: { concurrency: number } | null;
  extras: PageExtras;
}

/** The answer to a worker's OCR request. */
export interface OcrReply {
  type: 'ocr-result';
  req: number;
  result?: OcrResult | Uint8Array;
  error?: string;
}

export type WorkerMessage = WorkerJob | OcrReply;

export type OcrRequest =
  | { op: 'recognize'; image: Uint8Array; options?: RecognizeOptions }
  | { op: 'decode'; image: Uint8Array };

export type WorkerReply =
  | { id: number; type: 'start' }
  | { id: number; type: 'progress'; done: number; total: number }
  | { id: number; type: 'ocr'; req: number; request: OcrRequest }
  | { id: number; type: 'ocr-page' }
  /** With the pages' vectors one after the other and their tsvectors, where the job asked for them. */
  | { id: number; type: 'done'; doc: SegmentedDocument; vectors: Float32Array | null; tsvectors: PackedTsvectors | null }
  | { id: number; type: 'error'; error: { parse: boolean; name: string; message: string; stack?: string } };

interface Job {
  id: number;
  bytes: Uint8Array;
  format: DocumentFormat;
  extras: PageExtras;
  onProgress?: ProgressCallback;
  resolve: (doc: SegmentedDocument) => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
  /** When the parse is stopped (ms since the epoch); 0 before it starts or without a limit. */
  deadline: number;
  /** Ends the job's OCR requests (waiting or running) when the job ends. */
  ocrAbort: AbortController;
}

interface Slot {
  worker: Worker | null;
  job: Job | null;
}

const DEFAULT_TIMEOUT_MS = 300_000;
/** Parsing is background work beside the requests the process answers (searches, /health). */
const BACKGROUND_NICENESS = 10;
const DEFAULT_OCR_PAGE_TIMEOUT_MS = 120_000;

export class ParserPool {
  readonly threads: number;
  readonly #timeoutMs: number;
  readonly #maxMemoryMb: number | undefined;
  readonly #niceness: number;
  readonly #ocr: { threads: number; languages: string[]; pageTimeoutMs: number } | null;
  #ocrEngine: OcrEngine | null = null;
  readonly #slots: Slot[];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(opts: ParserPoolOptions = {}) {
    this.threads = opts.threads ?? Math.min(2, Math.max(1, availableParallelism() - 1));
    if (!Number.isInteger(this.threads) || this.threads < 1) {
      throw new RangeError(`threads must be a positive integer, got ${this.threads}`);
    }
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxMemoryMb = opts.maxMemoryMb;
    this.#niceness = opts.niceness ?? BACKGROUND_NICENESS;
    if (opts.ocr) {
      const threads = opts.ocr.threads ?? 1;
      if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`OCR threads must be a positive integer, got ${threads}`);
      const languages = parseLanguages(opts.ocr.languages ?? 'eng');
      languageData(languages); // a language that is not installed fails at start-up
      this.#ocr = { threads, languages, pageTimeoutMs: opts.ocr.pageTimeoutMs ?? DEFAULT_OCR_PAGE_TIMEOUT_MS };
    } else {
      this.#ocr = null;
    }
    this.#slots = Array.from({ length: this.threads }, () => ({ worker: null, job: null }));
  }

  /**
   * Parses on a worker, which also splits the pages into paragraphs and sentences, and computes
   * the `extras` asked for (each page's offline embedding, its tsvector); progress callbacks run
   * on this thread. Rejects with ParseError for unreadable files.
   */
  parse(bytes: Uint8Array, format: DocumentFormat, onProgress?: ProgressCallback, extras: PageExtras = {}): Promise<SegmentedDocument> {
    if (this.#closed) return Promise.reject(new Error('ParserPool is closed'));
    return new Promise((resolve, reject) => {
      // A copy the worker can take over: the caller's buffer stays usable.
      this.#queue.push({
        id: this.#nextId++,
        bytes: bytes.slice(),
        format,
        extras,
        onProgress,
        resolve,
        reject,
        deadline: 0,
        ocrAbort: new AbortController(),
      });
      this.#dispatch();
    });
  }

  /** Fails queued and running parses and ends the workers. */
  async close(): Promise<void> {
    this.#closed = true;
    const err = new Error('ParserPool is closed');
    for (const job of this.#queue.splice(0)) job.reject(err);
    const workers: Worker[] = [];
    for (const slot of this.#slots) {
      if (slot.job) this.#finish(slot, err);
      if (slot.worker) workers.push(slot.worker);
      slot.worker = null;
    }
    const engine = this.#ocrEngine;
    this.#ocrEngine = null;
    await Promise.all([...workers.map((w) => w.terminate()), engine?.close()]);
  }

  /** Whether scanned PDF pages and images are read by OCR. */
  get ocr(): boolean {
    return this.#ocr !== null;
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (this.#queue.length === 0) return;
      if (slot.job) continue;
      const job = this.#queue.shift()!;
      slot.job = job;
      slot.worker ??= this.#spawn(slot);
      slot.worker.ref();
      const message: WorkerJob = {
        type: 'job',
        id: job.id,
        bytes: job.bytes,
        format: job.format,
        ocr: this.#ocr ? { concurrency: this.#ocr.threads } : null,
        extras: job.extras,
      };
      slot.worker.postMessage(message, [job.bytes.buffer as ArrayBuffer]);
    }
  }

  #spawn(slot: Slot): Worker {
    const start: WorkerStart = { niceness: this.#niceness };
    const worker = startWorker(import.meta.url, 'worker', start, this.#maxMemoryMb ? { maxOldGenerationSizeMb: this.#maxMemoryMb } : undefined);
    worker.on('message', (reply: WorkerReply) => {
      const job = slot.job;
      if (slot.worker !== worker || !job || reply.id !== job.id) return;
      if (reply.type === 'start') {
        this.#startTimer(slot, job);
      } else if (reply.type === 'progress') {
        try {
          job.onProgress?.(reply.done, reply.total);
        } catch {
          // a failing progress callback must not break the parse
        }
      } else if (reply.type === 'ocr-page') {
        this.#extendForOcr(job);
      } else if (reply.type === 'ocr') {
        this.#recognize(slot, job, worker, reply.req, reply.request);
      } else if (reply.type === 'done') {
        const { doc, vectors, tsvectors } = reply;
        if (vectors) doc.embeddings = doc.pages.map((_, i) => vectors.subarray(i * EMBEDDING_DIMENSIONS, (i + 1) * EMBEDDING_DIMENSIONS));
        if (tsvectors) doc.tsvectors = unpackTsvectors(tsvectors);
        this.#finish(slot, null, doc);
      } else {
        const { parse, name, message, stack } = reply.error;
        const err = parse ? new ParseError(message) : Object.assign(new Error(message), { name });
        if (!parse && stack) err.stack = stack;
        this.#finish(slot, err);
      }
    });
    worker.on('error', (err: Error & { code?: string }) => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      const failure =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ParseError('The file needs more memory to parse than a parser thread may use (FOLIO_PARSER_MEMORY_MB)')
          : new Error(`parser worker failed: ${err.message}`, { cause: err });
      if (slot.job) this.#finish(slot, failure);
    });
    worker.on('exit', (code) => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      if (slot.job) this.#finish(slot, new Error(`parser worker exited with code ${code}`));
    });
    worker.unref();
    return worker;
  }

  #startTimer(slot: Slot, job: Job): void {
    if (this.#timeoutMs <= 0) return;
    job.deadline = Date.now() + this.#timeoutMs;
    this.#armTimer(slot, job);
  }

  #armTimer(slot: Slot, job: Job): void {
    clearTimeout(job.timer);
    job.timer = setTimeout(() => {
      if (slot.job !== job) return;
      if (Date.now() < job.deadline) return this.#armTimer(slot, job); // pushed out meanwhile
      this.#replace(slot);
      this.#finish(
        slot,
        new ParseError(`Parsing was stopped after ${duration(this.#timeoutMs)}: the file is too complex or damaged`),
      );
    }, Math.max(0, job.deadline - Date.now()));
  }

  /** Pushes a parse's time limit out to at least ocrPageTimeoutMs from now (a page goes to OCR). */
  #extendForOcr(job: Job): void {
    if (this.#ocr && this.#timeoutMs > 0 && job.deadline > 0) {
      job.deadline = Math.max(job.deadline, Date.now() + this.#ocr.pageTimeoutMs);
    }
  }

  /** Runs a worker's OCR request on the pool's engine and answers the worker. */
  #recognize(slot: Slot, job: Job, worker: Worker, req: number, request: OcrRequest): void {
    const answer = (reply: OcrReply) => {
      if (slot.job !== job || slot.worker !== worker) return; // the job ended meanwhile
      const transfer = reply.result instanceof Uint8Array ? [reply.result.buffer as ArrayBuffer] : [];
      worker.postMessage(reply, transfer);
    };
    if (!this.#ocr) return answer({ type: 'ocr-result', req, error: 'OCR is off' });
    this.#extendForOcr(job);
    this.#ocrEngine ??= new OcrEngine({ threads: this.#ocr.threads, languages: this.#ocr.languages });
    const signal = job.ocrAbort.signal;
    const running =
      request.op === 'recognize'
        ? this.#ocrEngine.recognize(request.image, request.options, signal)
        : this.#ocrEngine.decode(request.image, signal);
    (running as Promise<OcrResult | Uint8Array>).then(
      (result) => answer({ type: 'ocr-result', req, result }),
      (err: unknown) => answer({ type: 'ocr-result', req, error: err instanceof Error ? err.message : String(err) }),
    );
  }

  /** Ends a slot's worker (a stuck parse); a new one starts with the next job. */
  #replace(slot: Slot): void {
    const worker = slot.worker;
    slot.worker = null;
    void worker?.terminate();
  }

  #finish(slot: Slot, err: Error | null, doc?: SegmentedDocument): void {
    const job = slot.job;
    if (!job) return;
    slot.job = null;
    clearTimeout(job.timer);
    job.ocrAbort.abort(new Error('the parse ended'));
    slot.worker?.unref();
    if (err) job.reject(err);
    else job.resolve(doc!);
    if (!this.#closed) this.#dispatch();
  }
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
