// The ingest pipeline run by workers: fetch (URL tasks) and parse through sources/, segment,
// embed in batches, then write the document, pages, paragraphs and sentences in one
// transaction that also completes the task.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import { EmbeddingRequestError, type EmbeddingProvider } from '../providers/embeddings/index.js';
import { storeTsvectorRules } from '../search/page-tsvector.js';
import { insertDocument, insertPages, type NewPage } from '../store/documents.js';
import type { Database } from '../store/schema.js';
import { TaskError } from '../errors.js';
import { DocumentFormatSchema, OCR_OFF_HINT, fetchSource, parseSource, readStoredFile, type ParsedDocument, type SourceDeps } from '../sources/index.js';
import { bindTask, defineTask, type BoundTask, type TaskContext } from '../tasks/registry.js';
import { throttledProgress, type ProgressReporter } from '../tasks/worker.js';

export interface IngestDeps extends SourceDeps {
  db: Kysely<Database>;
  embedder: EmbeddingProvider;
  /** Told of the pages each ingested document stored, and in which workspace. */
  onPagesIngested?: (workspaceId: number, pages: number) => void;
}

// What a document ingested from a file or URL carries into the store.
const DocumentSource = {
  externalId: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.Unknown()),
};

const IngestFilePayload = Type.Object({
  ...DocumentSource,
  blobKey: Type.String(),
  fileName: Type.Union([Type.String(), Type.Null()]),
  contentType: Type.Union([Type.String(), Type.Null()]),
  format: DocumentFormatSchema,
});
type IngestFilePayload = Static<typeof IngestFilePayload>;

const IngestUrlPayload = Type.Object({
  ...DocumentSource,
  url: Type.String(),
  blobKey: Type.String(),
});

/** Pages sent to the embedding provider per request. */
const EMBED_BATCH = 32;
/** Characters of a page that are embedded (model input limits; pages are usually shorter). */
export const EMBED_CHARS = 8000;

function embeddingFailure(error: unknown): TaskError {
  if (error instanceof EmbeddingRequestError) {
    const transient = error.status === null || error.status === 429 || error.status >= 500;
    return new TaskError(`The embedding provider failed: ${error.message}`, transient);
  }
  return new TaskError('The embedding provider failed unexpectedly', true);
}

/** An empty page has no direction: it stays out of the vector index. */
const nonZero = (vector: Float32Array): Float32Array | null => (vector.some((x) => x !== 0) ? vector : null);

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
    for (const v of embedded) vectors.push(nonZero(v));
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
  const bytes = await readStoredFile(deps.blobs, file.blobKey, name);
  // The parser's thread computes the offline embedder's vectors and the pages' tsvectors (where
  // text/english-tsvector.ts covers the text) beside the parse, at its lower priority: on the embedded
  // engine the database's text parser would run on the engine's one thread, on the server it
  // took the backends 0.3 ms a page.
  const extras = {
    embed: deps.embedder.offline ? { model: deps.embedder.model, chars: EMBED_CHARS } : null,
    tsvector: await storeTsvectorRules(deps.db),
  };
  const parsed = await parseSource(deps.parsers, bytes, file, name, { report, from: 5, to: 40 }, extras);
  ctx.signal.throwIfAborted();
  const pages = parsed.pages;
  if (pages.every((p) => p.trim() === '')) throw new TaskError(`No text could be extracted from ${name}`);
  await report(40, `Parsed ${pages.length} page${pages.length === 1 ? '' : 's'}`, true);

  // Split by the parser's thread.
  const segmented = parsed.paragraphs;
  await report(45, `Segmented ${pages.length} page${pages.length === 1 ? '' : 's'} into paragraphs and sentences`, true);

  const vectors = parsed.embeddings ? parsed.embeddings.map(nonZero) : await embedPages(deps, ctx, pages, report);
  const newPages: NewPage[] = pages.map((content, i) => ({
    pageNumber: i + 1,
    content,
    tsv: parsed.tsvectors?.[i] ?? null,
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
  deps.onPagesIngested?.(ctx.task.workspace_id, newPages.length);
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

export const ingestFileTask = defineTask({
  kind: 'IngestFile',
  payload: IngestFilePayload,
  run: (ctx, deps: IngestDeps) => processFile(deps, ctx, ctx.payload, { source: 'file', fileUrl: null }),
});

export const ingestUrlTask = defineTask({
  kind: 'IngestUrl',
  payload: IngestUrlPayload,
  run: async (ctx, deps: IngestDeps) => {
    const { payload } = ctx;
    await ctx.progress(1, `Fetching ${payload.url}`);
    const fetched = await fetchSource(deps, payload.url, payload.blobKey, ctx.signal, { listSupported: true });
    await processFile(
      deps,
      ctx,
      { ...payload, fileName: fetched.fileName, contentType: fetched.contentType, format: fetched.format },
      { source: 'url', fileUrl: payload.url },
    );
  },
});

export function ingestTasks(deps: IngestDeps): BoundTask[] {
  return [bindTask(ingestFileTask, deps), bindTask(ingestUrlTask, deps)];
}
