// Worker-thread entry of ParserPool: parses one job at a time and reports progress, the result
// or the error (with its kind, so ParseError survives the thread boundary). With OCR on, page
// images go to the pool's OCR engine on the parent thread and their text comes back here.

import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { OcrResult, OcrService, RecognizeOptions } from '../ocr/types.js';
import { offlineEmbedder } from '../../providers/embeddings/offline.js';
import { EMBEDDING_DIMENSIONS } from '../../providers/embeddings/types.js';
import { cachedEnglishLexeme, packTsvectors, type PackedTsvectors, type WordLexeme } from '../../text/english-tsvector.js';
import type { EnglishRules } from '../../text/english-lexeme.js';
import { segmentPage } from '../../text/segmentation.js';
import { parseDocument } from './parse.js';
import { PARSERS } from './registry.js';
import { ParseError, type PageEmbedding } from './types.js';
import type { OcrReply, OcrRequest, WorkerJob, WorkerMessage, WorkerReply, WorkerStart } from './pool.js';

const port = parentPort;
if (!port) throw new Error('worker.ts runs only as a worker thread');

// On Linux each thread has a niceness of its own: at the pool's (10 by default) a parse gives way
// to the process's requests when the cores are busy instead of taking an equal share.
try {
  os.setPriority((workerData as WorkerStart).niceness);
} catch {
  // Refused (some sandboxes): the thread runs at the process's priority.
}

// Load every parser before taking jobs, so that a job's time limit counts parsing only. Jobs
// posted meanwhile wait in the port's queue.
await Promise.all(Object.values(PARSERS).map((parser) => parser.load()));

const pending = new Map<number, { resolve: (value: OcrResult | Uint8Array) => void; reject: (err: Error) => void }>();
let nextRequest = 1;

/** The pool's OCR engine, seen from this thread: images are handed over (transferred), not copied. */
function ocrProxy(jobId: number, concurrency: number): OcrService {
  const call = (request: OcrRequest) =>
    new Promise<OcrResult | Uint8Array>((resolve, reject) => {
      const req = nextRequest++;
      pending.set(req, { resolve, reject });
      let image = request.image;
      if (image.byteOffset !== 0 || image.byteLength !== image.buffer.byteLength) image = image.slice();
      const message: WorkerReply = { id: jobId, type: 'ocr', req, request: { ...request, image } };
      port!.postMessage(message, [image.buffer as ArrayBuffer]);
    });
  return {
    concurrency,
    beginPage: () => port!.postMessage({ id: jobId, type: 'ocr-page' } satisfies WorkerReply),
    recognize: (image: Uint8Array, options?: RecognizeOptions) => call({ op: 'recognize', image, options }) as Promise<OcrResult>,
    decode: (image: Uint8Array) => call({ op: 'decode', image }) as Promise<Uint8Array>,
  };
}

function answered(reply: OcrReply): void {
  const waiting = pending.get(reply.req);
  if (!waiting) return;
  pending.delete(reply.req);
  if (reply.error !== undefined || reply.result === undefined) waiting.reject(new Error(reply.error ?? 'OCR failed'));
  else waiting.resolve(reply.result);
}

/**
 * The pages' vectors one after the other, by the offline embedder `embed` names: computed here,
 * at the thread's lower priority, they cost the thread answering requests nothing.
 */
function embedPages(pages: string[], embed: PageEmbedding): Float32Array {
  const embedOne = offlineEmbedder(embed.model);
  if (!embedOne) throw new Error(`${embed.model} is not an offline embedder`);
  const vectors = new Float32Array(pages.length * EMBEDDING_DIMENSIONS);
  pages.forEach((page, i) => vectors.set(embedOne(page.slice(0, embed.chars)), i * EMBEDDING_DIMENSIONS));
  return vectors;
}

/** The thread's word lexemes, kept from job to job while the rules stay the same (a store's pages repeat their words). */
let lexemes: { rules: string; lexemeOf: WordLexeme } | null = null;

/** The pages' tsvectors under the store's stemmer `rules`, packed. */
function pageTsvectors(pages: string[], rules: EnglishRules): PackedTsvectors {
  const key = JSON.stringify(rules);
  if (lexemes?.rules !== key) lexemes = { rules: key, lexemeOf: cachedEnglishLexeme(rules) };
  return packTsvectors(pages, lexemes.lexemeOf);
}

function run(job: WorkerJob): void {
  const reply = (message: WorkerReply) => port!.postMessage(message);
  reply({ id: job.id, type: 'start' });
  const ocr = job.ocr ? ocrProxy(job.id, job.ocr.concurrency) : null;
  parseDocument(job.bytes, job.format, (done, total) => reply({ id: job.id, type: 'progress', done, total }), { ocr })
    .then((doc) => {
      const segmented = { ...doc, paragraphs: doc.pages.map(segmentPage) };
      const { embed, tsvector } = job.extras;
      const vectors = embed ? embedPages(doc.pages, embed) : null;
      const tsvectors = tsvector ? pageTsvectors(doc.pages, tsvector) : null;
      const message: WorkerReply = { id: job.id, type: 'done', doc: segmented, vectors, tsvectors };
      const transfer = [vectors?.buffer, tsvectors?.bytes.buffer, tsvectors?.ends.buffer].filter((b) => b !== undefined);
      port!.postMessage(message, transfer as ArrayBuffer[]);
    })
    .catch((err: unknown) => {
      const e = err instanceof Error ? err : new Error(String(err));
      reply({
        id: job.id,
        type: 'error',
        error: { parse: e instanceof ParseError, name: e.name, message: e.message, stack: e.stack },
      });
    });
}

port.on('message', (message: WorkerMessage) => {
  if (message.type === 'ocr-result') answered(message);
  else run(message);
});
