// The RunExtraction task: read the document (fetch a URL, parse an upload, or take an
// ingested document's pages), extract with the language model when one is configured or
// offline otherwise, check every record against the schema, and store what was read and
// the result in one transaction that completes the task.
import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import { TaskError } from '../errors.js';
import type { LlmProvider } from '../providers/llm/types.js';
import { DocumentFormatSchema, fetchSource, parseSource, readStoredFile, type SourceDeps } from '../sources/index.js';
import { findDocument, pagesOfDocument } from '../store/documents.js';
import { findExtraction, insertExtractionDocument, insertExtractionResult, lockExtraction, type ExtractionRow } from '../store/extractions.js';
import type { Database } from '../store/schema.js';
import { bindTask, defineTask, type BoundTask, type PayloadContext, type TaskContext } from '../tasks/registry.js';
import { throttledProgress, type ProgressReporter } from '../tasks/worker.js';
import { ExtractionFailure, extractWithLlm } from './llm.js';
import { extractOffline, type ExtractedRecord } from './offline.js';
import { validationErrors } from './schema.js';

export interface ExtractionDeps extends SourceDeps {
  db: Kysely<Database>;
  /** The language model; null extracts offline. */
  llm: LlmProvider | null;
}

const RunOn = { extractionId: Type.Integer(), blobKey: Type.String() };
const NullableString = Type.Union([Type.String(), Type.Null()]);

/** What a RunExtraction task carries; `blobKey`: where the bytes are (file, url) or the document's stored file. */
const RunExtractionPayload = Type.Union([
  Type.Object({ ...RunOn, source: Type.Literal('url'), url: Type.String() }),
  Type.Object({
    ...RunOn,
    source: Type.Literal('file'),
    fileName: Type.Optional(NullableString),
    contentType: Type.Optional(NullableString),
    format: Type.Optional(DocumentFormatSchema),
  }),
  Type.Object({ ...RunOn, source: Type.Literal('document'), documentId: Type.Integer() }),
]);
export type RunExtractionPayload = Static<typeof RunExtractionPayload>;

interface ReadDocument {
  pages: string[];
  title: string | null;
  fileName: string | null;
  contentType: string | null;
  fileUrl: string | null;
  documentId: number | null;
}

async function readSource(deps: ExtractionDeps, ctx: TaskContext, payload: RunExtractionPayload, report: ProgressReporter): Promise<ReadDocument> {
  const workspaceId = ctx.task.workspace_id;
  const parsing = { report, from: 10, to: 35 };
  if (payload.source === 'document') {
    const documentId = payload.documentId;
    const document = await findDocument(deps.db, workspaceId, documentId);
    if (!document) throw new TaskError(`Document ${documentId} was deleted before the extraction could read it`);
    const pages = (await pagesOfDocument(deps.db, documentId)).map((p) => p.content);
    const title = typeof document.metadata.title === 'string' ? document.metadata.title : null;
    await report(35, `Read ${pages.length} page${pages.length === 1 ? '' : 's'} of document ${documentId}`, true);
    return { pages, title, fileName: null, contentType: null, fileUrl: document.file_url, documentId };
  }
  if (payload.source === 'url') {
    const url = payload.url;
    await report(2, `Fetching ${url}`, true);
    const fetched = await fetchSource(deps, url, payload.blobKey, ctx.signal, { listSupported: false });
    const parsed = await parseSource(deps.parsers, fetched.bytes, fetched, url, parsing);
    return { pages: parsed.pages, title: parsed.title, fileName: fetched.fileName, contentType: fetched.contentType, fileUrl: url, documentId: null };
  }
  const name = payload.fileName ?? 'the file';
  const file = { fileName: payload.fileName ?? null, contentType: payload.contentType ?? null, format: payload.format };
  const bytes = await readStoredFile(deps.blobs, payload.blobKey, name);
  const parsed = await parseSource(deps.parsers, bytes, file, name, parsing);
  return { pages: parsed.pages, title: parsed.title, fileName: file.fileName, contentType: file.contentType, fileUrl: null, documentId: null };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Records that pass the schema; a single record that does not fails the run, saying why. */
function checked(extraction: ExtractionRow, records: ExtractedRecord[]): { records: ExtractedRecord[]; dropped: number } {
  const valid: ExtractedRecord[] = [];
  let dropped = 0;
  let firstProblem: string | null = null;
  for (const record of records) {
    const problems = validationErrors(extraction.schema, record);
    if (problems.length === 0) valid.push(record);
    else {
      dropped++;
      firstProblem ??= problems[0];
    }
  }
  if (!extraction.multiple && valid.length !== 1) {
    throw new TaskError(`The document does not give a record that satisfies the schema: ${firstProblem ?? 'nothing was extracted'}`);
  }
  return { records: valid, dropped };
}

async function runExtraction(deps: ExtractionDeps, ctx: PayloadContext<RunExtractionPayload>): Promise<void> {
  const { payload } = ctx;
  const workspaceId = ctx.task.workspace_id;
  const report = throttledProgress(ctx);
  const extraction = await findExtraction(deps.db, workspaceId, payload.extractionId);
  if (!extraction) {
    if (payload.source !== 'document') await deps.blobs.delete(payload.blobKey).catch(() => undefined);
    throw new TaskError(`Extraction ${payload.extractionId} was deleted before the run started`);
  }
  const read = await readSource(deps, ctx, payload, report);
  ctx.signal.throwIfAborted();
  if (read.pages.every((p) => p.trim() === '')) throw new TaskError('No text could be extracted from the document');

  const input = { pages: read.pages, title: read.title };
  const engine = deps.llm ? `language model ${deps.llm.model}` : 'offline extractor';
  let records: ExtractedRecord[];
  if (deps.llm) {
    await report(40, `Extracting with the ${engine}`, true);
    try {
      records = await extractWithLlm(deps.llm, extraction.schema, extraction.multiple, input, {
        name: extraction.name,
        description: extraction.description,
        signal: ctx.signal,
        onProgress: (done, total) => report(40 + (50 * done) / total, `Extracted part ${done} of ${total}`, done === total),
      });
    } catch (error) {
      if (error instanceof ExtractionFailure) throw new TaskError(error.message, error.transient);
      throw error;
    }
  } else {
    await report(40, `Extracting with the ${engine}`, true);
    records = extractOffline(extraction.schema, extraction.multiple, input);
  }
  const { records: results, dropped } = checked(extraction, records);
  await report(92, `Storing ${plural(results.length, 'record')}`, true);

  await ctx.commit(async (trx) => {
    // The definition may have been deleted meanwhile: then nothing is stored.
    if (!(await lockExtraction(trx, workspaceId, extraction.id))) {
      throw new TaskError(`Extraction ${extraction.id} was deleted while the run was going on`);
    }
    const extractionDocumentId = await insertExtractionDocument(trx, {
      workspaceId,
      extractionId: extraction.id,
      taskIdentifier: ctx.task.identifier,
      source: payload.source,
      documentId: read.documentId,
      filePath: payload.blobKey,
      fileUrl: read.fileUrl,
      fileName: read.fileName,
      contentType: read.contentType,
      title: read.title,
      pages: read.pages,
    });
    const result = await insertExtractionResult(trx, {
      workspaceId,
      extractionId: extraction.id,
      extractionDocumentId,
      taskIdentifier: ctx.task.identifier,
      results,
      engine: deps.llm ? `llm:${deps.llm.model}` : 'offline',
    });
    const droppedNote = dropped > 0 ? `; ${plural(dropped, 'incomplete record')} left out` : '';
    return { documentId: null, message: `Completed: ${plural(results.length, 'record')} extracted by the ${engine}${droppedNote}`, result: result.id };
  });
}

export const runExtractionTask = defineTask({
  kind: 'RunExtraction',
  payload: RunExtractionPayload,
  run: (ctx, deps: ExtractionDeps) => runExtraction(deps, ctx),
});

export function extractionTasks(deps: ExtractionDeps): BoundTask[] {
  return [bindTask(runExtractionTask, deps)];
}
