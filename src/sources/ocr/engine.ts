// OcrEngine: Tesseract (tesseract.js, WebAssembly) on its own worker threads, fully offline:
// the language data comes from npm packages on disk (languages.ts) and nothing is cached or
// fetched. Workers start on first use, at most `threads` of them, and run one image each at
// a time; requests wait in a queue that an AbortSignal can leave. An aborted running request
// ends its worker (a stuck recognition cannot be interrupted otherwise); the next request
// starts a fresh one. Idle workers do not keep the process alive.

import { createWorker, OEM, type Worker as TessWorker } from 'tesseract.js';
import type { Worker as NodeWorker } from 'node:worker_threads';
import { languageData, parseLanguages, type LanguageData } from './languages.js';
import { UNREADABLE_IMAGE, type OcrResult, type OcrService, type OcrWord, type RecognizeOptions } from './types.js';

export interface OcrEngineOptions {
  /** Tesseract worker threads (default 1). */
  threads?: number;
  /** Language codes, "eng+deu" or a list (default eng). */
  languages?: string | readonly string[];
  /** How long a worker may take to start (load the data) before it counts as failed. Default 120 s. */
  startTimeoutMs?: number;
}

interface Request {
  run: (worker: TessWorker) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Started {
  tess: TessWorker;
  thread: NodeWorker;
}

interface Slot {
  worker: Promise<Started> | null;
  request: Request | null;
  /** Ends the slot's worker and fails the request it runs (abort, crash). */
  kill: ((err: Error) => void) | null;
}

// Automatic page segmentation (columns, blocks) instead of tesseract.js's single-block default.
const PSM_AUTO = '3';
const DEFAULT_START_TIMEOUT_MS = 120_000;


/**
 * Ends a started worker's thread. Not tesseract.js's terminate(): it drops its handle on the
 * thread, and a request still loading its image then posts to null from a call nobody awaits,
 * an unhandled rejection that ends the process; a post to an ended thread is harmless.
 */
function endWorker({ thread }: Started): Promise<number> {
  return thread.terminate();
}

export class OcrEngine implements OcrService {
  readonly threads: number;
  readonly languages: string[];
  get concurrency(): number {
    return this.threads;
  }
  readonly #startTimeoutMs: number;
  readonly #slots: Slot[];
  readonly #queue: Request[] = [];
  readonly #languageData: LanguageData;
  #closed = false;

  constructor(opts: OcrEngineOptions = {}) {
    this.threads = opts.threads ?? 1;
    if (!Number.isInteger(this.threads) || this.threads < 1) {
      throw new RangeError(`OCR threads must be a positive integer, got ${this.threads}`);
    }
    this.languages = parseLanguages(opts.languages ?? 'eng');
    this.#languageData = languageData(this.languages); // a missing language fails here, not on the first scan
    this.#startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    this.#slots = Array.from({ length: this.threads }, () => ({ worker: null, request: null, kill: null }));
  }

  recognize(image: Uint8Array, options: RecognizeOptions = {}, signal?: AbortSignal): Promise<OcrResult> {
    const params: Record<string, unknown> = { rotateAuto: options.deskew ?? false };
    // Without a resolution Tesseract estimates one from the text sizes.
    if (options.dpi) params.user_defined_dpi = String(Math.round(Math.min(2400, Math.max(50, options.dpi))));
    return this.#submit(async (worker) => {
      const { data } = await worker.recognize(
        Buffer.from(image.buffer, image.byteOffset, image.byteLength),
        params as Parameters<TessWorker['recognize']>[1],
        { text: true, tsv: true },
      );
      return {
        text: data.text ?? '',
        confidence: data.confidence ?? 0,
        words: parseTsv(data.tsv ?? ''),
        rotateRadians: data.rotateRadians ?? 0,
      } satisfies OcrResult;
    }, signal) as Promise<OcrResult>;
  }

  decode(image: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    return this.#submit(async (worker) => {
      let data;
      try {
        ({ data } = await worker.recognize(
          Buffer.from(image.buffer, image.byteOffset, image.byteLength),
          {},
          { text: false, imageGrey: true } as Parameters<TessWorker['recognize']>[2],
        ));
      } catch (err) {
        throw new Error(`${UNREADABLE_IMAGE}: ${String(err).replace(/^Error: /, '')}`);
      }
      const url = data.imageGrey ?? '';
      const comma = url.indexOf(',');
      if (comma < 0) throw new Error(`${UNREADABLE_IMAGE}: no image came back`);
      return new Uint8Array(Buffer.from(url.slice(comma + 1), 'base64'));
    }, signal) as Promise<Uint8Array>;
  }

  /** Fails waiting and running requests and ends the workers. */
  async close(): Promise<void> {
    this.#closed = true;
    const err = new Error('OCR engine is closed');
    for (const req of this.#queue.splice(0)) this.#settle(req, err);
    const ending: Promise<unknown>[] = [];
    for (const slot of this.#slots) {
      if (slot.worker) ending.push(slot.worker.then(endWorker).catch(() => undefined));
      if (slot.kill) slot.kill(err);
      slot.worker = null;
    }
    await Promise.all(ending);
  }

  #submit(run: (worker: TessWorker) => Promise<unknown>, signal?: AbortSignal): Promise<unknown> {
    if (this.#closed) return Promise.reject(new Error('OCR engine is closed'));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const req: Request = { run, resolve, reject, signal };
      if (signal) {
        req.onAbort = () => {
          const queued = this.#queue.indexOf(req);
          if (queued >= 0) {
            this.#queue.splice(queued, 1);
            this.#settle(req, abortError(signal));
          } else {
            this.#slots.find((s) => s.request === req)?.kill?.(abortError(signal));
          }
        };
        signal.addEventListener('abort', req.onAbort, { once: true });
      }
      this.#queue.push(req);
      this.#dispatch();
    });
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (this.#queue.length === 0 || this.#closed) return;
      if (slot.request) continue;
      const req = this.#queue.shift()!;
      slot.request = req;
      void this.#run(slot, req);
    }
  }

  async #run(slot: Slot, req: Request): Promise<void> {
    // Settles once: when the request ends, or earlier when its worker is killed.
    const outcome = await new Promise<{ value?: unknown; error?: Error }>((resolve) => {
      slot.kill = (error) => {
        slot.kill = null;
        const worker = slot.worker;
        slot.worker = null;
        void worker?.then(endWorker).catch(() => undefined);
        resolve({ error });
      };
      const starting: Promise<Started> =
        slot.worker ??
        (slot.worker = this.#start().then((started) => {
          // A worker that dies between requests is replaced by the next request.
          started.thread.once('exit', () => {
            if (slot.worker === starting) slot.worker = null;
          });
          return started;
        }));
      starting
        .then(
          async ({ tess, thread }) => {
            // A worker that crashes mid-request fails the request instead of leaving it waiting.
            const onExit = (code: number) => slot.kill?.(new Error(`OCR worker exited with code ${code}`));
            const onError = (err: Error) => slot.kill?.(new Error(`OCR worker failed: ${err.message}`));
            thread.once('exit', onExit).once('error', onError);
            thread.ref();
            try {
              return { value: await req.run(tess) };
            } finally {
              thread.off('exit', onExit).off('error', onError);
              thread.unref();
            }
          },
          (err: unknown) => {
            if (slot.worker === starting) slot.worker = null; // the next request tries a fresh worker
            throw err;
          },
        )
        .then(resolve, (err: unknown) => resolve({ error: err instanceof Error ? err : new Error(String(err)) }));
    });
    slot.kill = null;
    slot.request = null;
    if (outcome.error) this.#settle(req, outcome.error);
    else this.#settle(req, null, outcome.value);
    if (!this.#closed) this.#dispatch();
  }

  #settle(req: Request, err: Error | null, value?: unknown): void {
    if (req.onAbort) req.signal?.removeEventListener('abort', req.onAbort);
    if (err) req.reject(err);
    else req.resolve(value);
  }

  async #start(): Promise<Started> {
    const { langs, langPath } = this.#languageData;
    let failStart: (err: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => (failStart = reject));
    const timer = setTimeout(
      () => failStart(new Error(`the OCR worker did not start within ${Math.round(this.#startTimeoutMs / 1000)} s`)),
      this.#startTimeoutMs,
    );
    const creating = createWorker(langs, OEM.LSTM_ONLY, {
      langPath,
      cacheMethod: 'none',
      gzip: true,
      logger: () => undefined,
      // Without a handler tesseract.js throws failures from its message listener (a crash).
      // Failures of requests also reject the request itself; this one matters while starting.
      errorHandler: (err: unknown) => failStart(new Error(`the OCR worker failed to start: ${String(err)}`)),
    });
    try {
      const tess = await Promise.race([creating, failed]);
      const thread = (tess as unknown as { worker: NodeWorker }).worker;
      // An idle worker must not keep the process alive; a crash between requests must not
      // be an unhandled 'error' event.
      thread.unref();
      thread.on('error', () => undefined);
      quiet(thread);
      await Promise.race([tess.setParameters({ tessedit_pageseg_mode: PSM_AUTO as never }), failed]);
      return { tess, thread };
    } catch (err) {
      void creating.then((w) => w.terminate()).catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Tesseract and Leptonica write progress and warnings to stdout and stderr ("Estimating
 * resolution as 331", "Error in boxClipToRectangle: box outside rectangle") for conditions
 * they handle themselves. Kept out of the service's output; the worker thread's stdio is
 * otherwise piped to the process's.
 */
function quiet(thread: NodeWorker): void {
  for (const [stream, target] of [
    [thread.stdout, process.stdout],
    [thread.stderr, process.stderr],
  ] as const) {
    if (!stream) continue;
    stream.unpipe(target);
    stream.resume();
  }
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error('OCR was cancelled');
}

/** Words from Tesseract's TSV output (level 5 rows), in reading order. */
export function parseTsv(tsv: string): OcrWord[] {
  const words: OcrWord[] = [];
  for (const row of tsv.split('\n')) {
    const cells = row.split('\t');
    if (cells.length < 12 || cells[0] !== '5') continue;
    const text = cells.slice(11).join('\t').trim();
    if (!text) continue;
    words.push({
      text,
      conf: Number(cells[10]),
      block: Number(cells[2]),
      par: Number(cells[3]),
      line: Number(cells[4]),
      left: Number(cells[6]),
      top: Number(cells[7]),
      width: Number(cells[8]),
      height: Number(cells[9]),
    });
  }
  return words;
}
