// The ingest pipeline run by workers: fetch (URL tasks), parse in a worker thread, segment,
// embed in batches, then write the document, pages, paragraphs and sentences in one
// transaction that also completes the task.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { EmbeddingRequestError, type EmbeddingProvider } from '../providers/embeddings/index.js';
import type { BlobStore } from '../store/blobs.js';
import { insertDocument, insertPages, type NewPage } from '../store/documents.js';
import type { Database } from '../store/schema.js';
import { TaskError, throttledProgress, type ProgressReporter, type TaskContext, type TaskHandler } from '../tasks/worker.js';
import { OCR_OFF_HINT, ParseError, declaredFormatMismatch, resolveFormat, type DocumentFormat, type ParsedDocument, type ParserPool } from './parsers/index.js';
import { segmentPage } from './segmentation.js';
import { FetchError, fetchUrl } from './url-fetch.js';

export interface IngestDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  parsers: ParserPool;
  embedder: EmbeddingProvider;
  maxFileBytes: number;
  urlAllowlist: string[];
  urlTimeoutMs: number;
}

interface DocumentSource {
  externalId: string | null;
  metadata: Record<string, unknown>;
}

export interface IngestFilePayload extends DocumentSource {
  blobKey: string;
  fileName: string | null;
  contentType: string | null;
  format: DocumentFormat;
}

export interface IngestUrlPayload extends DocumentSource {
  url: string;
  blobKey: string;
}

/** Pages sent to the embedding provider per request. */
const EMBED_BATCH = 32;
/** Characters of a page that are embedded (model input limits; pages are usually shorter). */
const EMBED_CHARS = 8000;

function embeddingFailure(error: unknown): TaskError {
  if (error instanceof EmbeddingRequestError) {
    const transient = error.status === null || error.status === 429 || error.status >= 500;
    return new TaskError(`The embedding provider failed: ${error.message}`, transient);
  }
  return new TaskError('The embedding provider failed unexpectedly', true);
}

/**
 * `items.map(fn)`, with a turn of the event loop whenever a slice has run 10 ms: segmenting
 * thousands of pages in one go would hold every request (/health included) for as long.
 */
async function mapInSlices<T, R>(items: readonly T[], fn: (item: T) => R): Promise<R[]> {
  const out: R[] = [];
  let sliceStart = performance.now();
  for (const item of items) {
    out.push(fn(item));
    if (performance.now() - sliceStart > 10) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  return out;
}

async function embedPages(deps: IngestDeps, ctx: TaskContext, pages: string[], report: ProgressReporter): Promise<(Float32Array | null)[]> {
  const vectors: (Float32Array | null)[] = [];
  for (let i = 0; i < pages.length; i += EMBED_BATCH) {
    ctx.signal.throwIfAborted();
    const batch = pages.slice(i, i + EMBED_BATCH);
    let embedded: Float32Array[];
    try {
      embedded = await deps.embedder.embed(
        batch.map((p) => p.slice(0, EMBED_CHARS)),
        ctx.signal,
      );
    } catch (error) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      throw embeddingFailure(error);
    }
    // An empty page has no direction; it stays out of the vector index.
    for (const v of embedded) vectors.push(v.some((x) => x !== 0) ? v : null);
    const done = Math.min(i + EMBED_BATCH, pages.length);
    await report(45 + (45 * done) / pages.length, `Embedding page ${done} of ${pages.length}`, done === pages.length);
    // The offline embedder computes on this thread and resolves at once: without a turn
    // here, thousands of pages would embed in one stretch and hold every request.
    await nextTurn();
  }
  return vectors;
}

async function processFile(
  deps: IngestDeps,
  ctx: TaskContext,
  file: IngestFilePayload,
  origin: { source: 'file' | 'url'; fileUrl: string | null },
): Promise<void> {
  const name = file.fileName ?? 'the file';
  const report = throttledProgress(ctx);
  let bytes: Buffer;
  try {
    bytes = await deps.blobs.read(file.blobKey);
  } catch {
    throw new TaskError(`The stored copy of ${name} is missing; upload it again`);
  }
  const mismatch = declaredFormatMismatch(bytes, file.fileName, file.contentType);
  if (mismatch) throw new TaskError(`${name} is ${mismatch.reason}`);
  await report(5, `Parsing ${name}`, true);
  let parsed;
  try {
    parsed = await deps.parsers.parse(bytes, file.format, (done, total) => {
      void report(5 + (35 * done) / Math.max(total, 1), `Parsed page ${done} of ${total}`).catch(() => undefined);
    });
  } catch (error) {
    if (error instanceof ParseError) throw new TaskError(`Could not read ${name}: ${error.message}`);
    throw error;
  }
  ctx.signal.throwIfAborted();
  const pages = parsed.pages;
  if (pages.every((p) => p.trim() === '')) throw new TaskError(`No text could be extracted from ${name}`);
  await report(40, `Parsed ${pages.length} page${pages.length === 1 ? '' : 's'}`, true);

  const segmented = await mapInSlices(pages, segmentPage);
  await report(45, `Segmented ${pages.length} page${pages.length === 1 ? '' : 's'} into paragraphs and sentences`, true);

  const vectors = await embedPages(deps, ctx, pages, report);
  const newPages: NewPage[] = pages.map((content, i) => ({
    pageNumber: i + 1,
    content,
    embedding: vectors[i],
    embeddingModel: vectors[i] ? deps.embedder.model : null,
    paragraphs: segmented[i],
  }));
  const metadata = { ...file.metadata };
  if (parsed.title && metadata.title === undefined) metadata.title = parsed.title;

  await ctx.commit(async (trx) => {
    const doc = await insertDocument(trx, {
      workspaceId: ctx.task.workspace_id,
      externalId: file.externalId,
      filePath: file.blobKey,
      fileUrl: origin.fileUrl,
      metadata,
      source: origin.source,
      taskIdentifier: ctx.task.identifier,
      fileName: file.fileName,
      contentType: file.contentType,
    });
    await insertPages(trx, ctx.task.workspace_id, doc.id, newPages);
    return { documentId: doc.id, message: completionMessage(parsed), result: doc.id };
  });
}

/** What the task says when done: how many pages, and which came from OCR or were left unread. */
function completionMessage(parsed: ParsedDocument): string {
  const count = parsed.pages.length;
  let message = `Completed: ${count} page${count === 1 ? '' : 's'} stored and searchable`;
  const ocr = parsed.ocrPages ?? [];
  if (ocr.length > 0) message += `; ${ocr.length} read by OCR`;
  const unread = parsed.unreadPages ?? [];
  if (unread.length > 0) {
    message += `; ${unread.length === 1 ? 'page' : 'pages'} ${listPages(unread)} ${unread.length === 1 ? 'is an image' : 'are images'} without a text layer, left empty because ${OCR_OFF_HINT}`;
  }
  return message;
}

function listPages(pages: readonly number[]): string {
  if (pages.length === 1) return String(pages[0]);
  return `${pages.slice(0, -1).join(', ')} and ${pages[pages.length - 1]}`;
}

async function ingestFile(deps: IngestDeps, ctx: TaskContext): Promise<void> {
  const payload = ctx.task.payload as unknown as IngestFilePayload;
  await processFile(deps, ctx, payload, { source: 'file', fileUrl: null });
}

function fileNameFromUrl(url: string): string | null {
  const last = new URL(url).pathname.split('/').filter(Boolean).pop();
  return last ? decodeURIComponent(last) : null;
}

async function ingestUrl(deps: IngestDeps, ctx: TaskContext): Promise<void> {
  const payload = ctx.task.payload as unknown as IngestUrlPayload;
  await ctx.progress(1, `Fetching ${payload.url}`);
  let fetched;
  try {
    fetched = await fetchUrl(payload.url, {
      allowlist: deps.urlAllowlist,
      maxBytes: deps.maxFileBytes,
      totalTimeoutMs: deps.urlTimeoutMs,
      signal: ctx.signal,
    });
  } catch (error) {
    if (error instanceof FetchError) throw new TaskError(error.message, error.transient);
    if (ctx.signal.aborted) throw ctx.signal.reason;
    throw new TaskError(`Could not fetch ${payload.url}`, true);
  }
  if (fetched.bytes.length === 0) throw new TaskError(`${payload.url} answered an empty body`);
  const fileName = fetched.filename ?? fileNameFromUrl(fetched.finalUrl);
  const format = resolveFormat(fetched.bytes, fileName, fetched.contentType);
  if (!format) {
    throw new TaskError(`${payload.url} is not a supported document (${fetched.contentType ?? 'unknown type'}); supported: PDF, DOCX, HTML, Markdown, plain text`);
  }
  await deps.blobs.put(payload.blobKey, fetched.bytes);
  await processFile(
    deps,
    ctx,
    { ...payload, fileName, contentType: fetched.contentType, format },
    { source: 'url', fileUrl: payload.url },
  );
}

export function ingestHandlers(deps: IngestDeps): Record<string, TaskHandler> {
  return {
    IngestFile: (ctx) => ingestFile(deps, ctx),
    IngestUrl: (ctx) => ingestUrl(deps, ctx),
  };
}
