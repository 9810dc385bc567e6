// Extractions as the API offers them: definitions (create with a checked schema, list, get,
// delete), runs accepted as tasks (on a URL, an uploaded file or an ingested document) and
// their results. The worker side is run.ts.
import type { Kysely } from 'kysely';
import { AppError, ValidationError, errors } from '../errors.js';
import { checkUrl, uploadFormat, urlFileName, type StoredUpload } from '../sources/index.js';
import { BlobStore } from '../store/blobs.js';
import { findDocument } from '../store/documents.js';
import {
  countExtractions,
  deleteExtraction as deleteExtractionRow,
  findExtraction,
  findExtractionDocument,
  findResult,
  findResultByTask,
  insertExtraction,
  listExtractions as listExtractionRows,
  listResults as listResultRows,
  type ExtractionResultRow,
  type ExtractionRow,
} from '../store/extractions.js';
import type { Database } from '../store/schema.js';
import { findTask } from '../store/tasks.js';
import { enqueueTask } from '../tasks/registry.js';
import { assertStorableText } from '../text/json-text.js';
import { runExtractionTask, type RunExtractionPayload } from './run.js';
import { checkExtractionSchema } from './schema.js';

export interface ExtractionServiceDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  /** Called after a task is queued, so that a worker in this process starts at once. */
  onEnqueue: () => void;
}

export interface ExtractionView {
  id: number;
  name: string;
  description: string | null;
  schema: Record<string, unknown>;
  multiple: boolean;
  created_at: string;
}

export interface ExtractionResultView {
  id: number;
  extraction_id: number;
  extraction_document_id: number;
  task_identifier: string;
  results: Record<string, unknown>[];
  created_at: string;
}

export interface ExtractionDocumentView {
  id: number;
  extraction_id: number;
  task_identifier: string;
  source: string;
  document_id: number | null;
  file_path: string;
  file_url: string | null;
  file_name: string | null;
  title: string | null;
  pages: { page_number: number; content: string }[];
  created_at: string;
}

export interface RunReceipt {
  extraction_id: number;
  file_path: string;
  task_identifier: string;
  document_id?: number;
}

function extractionView(row: ExtractionRow): ExtractionView {
  return { id: row.id, name: row.name, description: row.description, schema: row.schema, multiple: row.multiple, created_at: row.created_at.toISOString() };
}

function resultView(row: ExtractionResultRow): ExtractionResultView {
  return {
    id: row.id,
    extraction_id: row.extraction_id,
    extraction_document_id: row.extraction_document_id,
    task_identifier: row.task_identifier,
    results: row.results,
    created_at: row.created_at.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Definitions

export interface NewExtractionInput {
  name: string;
  description?: string | null;
  schema: unknown;
  multiple?: boolean;
}

export async function createExtraction(db: Kysely<Database>, workspaceId: number, input: NewExtractionInput): Promise<ExtractionView> {
  const name = input.name.trim();
  if (name === '') throw errors.validation(['name'], 'String should have at least 1 character', 'string_too_short');
  const issues = checkExtractionSchema(input.schema);
  if (issues.length > 0) throw new ValidationError(issues);
  assertStorableText({ name, description: input.description ?? null, schema: input.schema }, []);
  const row = await insertExtraction(db, {
    workspaceId,
    name,
    description: input.description?.trim() || null,
    schema: input.schema as Record<string, unknown>,
    multiple: input.multiple ?? false,
  });
  return extractionView(row);
}

export async function getExtraction(db: Kysely<Database>, workspaceId: number, id: number): Promise<ExtractionView> {
  const row = await findExtraction(db, workspaceId, id);
  if (!row) throw errors.notFound(`Extraction ${id}`);
  return extractionView(row);
}

export async function listExtractions(db: Kysely<Database>, workspaceId: number, limit: number, offset: number): Promise<{ extractions: ExtractionView[]; total: number }> {
  const [rows, total] = await Promise.all([listExtractionRows(db, workspaceId, limit, offset), countExtractions(db, workspaceId)]);
  return { extractions: rows.map(extractionView), total };
}

/** Deletes a definition, its results and the files its runs fetched or received; runs still queued fail. */
export async function deleteExtraction(deps: Pick<ExtractionServiceDeps, 'db' | 'blobs'>, workspaceId: number, id: number): Promise<{ deleted_count: number; deleted_ids: number[]; deleted_results: number }> {
  const deleted = await deleteExtractionRow(deps.db, workspaceId, id);
  if (!deleted) throw errors.notFound(`Extraction ${id}`);
  for (const file of deleted.ownedFiles) await deps.blobs.delete(file).catch(() => undefined);
  return { deleted_count: 1, deleted_ids: [deleted.id], deleted_results: deleted.results };
}

// ---------------------------------------------------------------------------------------------
// Runs

async function requireExtraction(db: Kysely<Database>, workspaceId: number, id: number): Promise<ExtractionRow> {
  const row = await findExtraction(db, workspaceId, id);
  if (!row) throw errors.notFound(`Extraction ${id}`);
  return row;
}

async function enqueue(deps: ExtractionServiceDeps, workspaceId: number, extraction: ExtractionRow, payload: RunExtractionPayload, what: string): Promise<string> {
  const identifier = await enqueueTask(deps.db, runExtractionTask, {
    workspaceId,
    title: `Extract "${extraction.name.slice(0, 80)}" from ${what}`,
    payload,
  });
  deps.onEnqueue();
  return identifier;
}

export async function runOnUrl(deps: ExtractionServiceDeps, workspaceId: number, input: { extraction_id: number; url: string }): Promise<RunReceipt> {
  checkUrl(input.url);
  const extraction = await requireExtraction(deps.db, workspaceId, input.extraction_id);
  const blobKey = BlobStore.newKey(urlFileName(input.url));
  const identifier = await enqueue(deps, workspaceId, extraction, { extractionId: extraction.id, source: 'url', blobKey, url: input.url }, input.url);
  return { extraction_id: extraction.id, file_path: blobKey, task_identifier: identifier };
}

function parseIdField(value: string | undefined, field: string): number {
  if (value === undefined || value.trim() === '') throw errors.validation([field], 'Field required', 'missing');
  if (!/^\d{1,16}$/.test(value.trim())) throw errors.validation([field], 'Input should be a valid integer', 'int_parsing');
  const id = Number(value.trim());
  if (!Number.isSafeInteger(id) || id < 1) throw errors.validation([field], 'Input should be greater than or equal to 1', 'greater_than_equal');
  return id;
}

/** Queues a run on an upload already in the blob store; the blob is removed if the run is refused. */
export async function runOnUpload(deps: ExtractionServiceDeps, workspaceId: number, upload: StoredUpload | null, fields: Record<string, string>): Promise<RunReceipt> {
  try {
    const extractionId = parseIdField(fields.extraction_id, 'extraction_id');
    if (!upload) throw errors.validation(['file'], 'Field required', 'missing');
    const extraction = await requireExtraction(deps.db, workspaceId, extractionId);
    const format = await uploadFormat(deps.blobs, upload, { listSupported: false });
    const payload: RunExtractionPayload = {
      extractionId,
      source: 'file',
      blobKey: upload.blobKey,
      fileName: upload.fileName,
      contentType: upload.contentType,
      format,
    };
    const identifier = await enqueue(deps, workspaceId, extraction, payload, upload.fileName ?? 'an uploaded file');
    return { extraction_id: extractionId, file_path: upload.blobKey, task_identifier: identifier };
  } catch (error) {
    if (upload) await deps.blobs.delete(upload.blobKey);
    throw error;
  }
}

export async function runOnDocument(deps: ExtractionServiceDeps, workspaceId: number, input: { extraction_id: number; document_id: number }): Promise<RunReceipt> {
  const extraction = await requireExtraction(deps.db, workspaceId, input.extraction_id);
  const document = await findDocument(deps.db, workspaceId, input.document_id);
  if (!document) throw errors.notFound(`Document ${input.document_id}`);
  const payload: RunExtractionPayload = { extractionId: extraction.id, source: 'document', blobKey: document.file_path, documentId: document.id };
  const identifier = await enqueue(deps, workspaceId, extraction, payload, `document ${document.id}`);
  return { extraction_id: extraction.id, document_id: document.id, file_path: document.file_path, task_identifier: identifier };
}

// ---------------------------------------------------------------------------------------------
// Results

export async function getResult(db: Kysely<Database>, workspaceId: number, id: number): Promise<ExtractionResultView> {
  const row = await findResult(db, workspaceId, id);
  if (!row) throw errors.notFound(`Extraction result ${id}`);
  return resultView(row);
}

/** The result of a run; while the run is not done, a 404 that says where it is. */
export async function getResultByTask(db: Kysely<Database>, workspaceId: number, taskIdentifier: string): Promise<ExtractionResultView> {
  const row = await findResultByTask(db, workspaceId, taskIdentifier);
  if (row) return resultView(row);
  const task = await findTask(db, workspaceId, taskIdentifier);
  if (!task) throw errors.notFound(`Extraction result for task ${taskIdentifier}`);
  if (task.kind !== runExtractionTask.kind) throw errors.notFound(`Extraction result for task ${taskIdentifier} (it is not an extraction run)`);
  const where =
    task.status === 'FAILED'
      ? `the task FAILED: ${task.message}`
      : task.status === 'COMPLETED'
        ? 'the task COMPLETED but its result was deleted with its extraction'
        : `the task is ${task.status} (${task.progress}%: ${task.message})`;
  throw new AppError('RESOURCE_NOT_FOUND', `No result for task ${taskIdentifier}: ${where}`);
}

export async function listResults(db: Kysely<Database>, workspaceId: number, extractionId: number, limit: number, offset: number): Promise<ExtractionResultView[]> {
  await requireExtraction(db, workspaceId, extractionId);
  return (await listResultRows(db, workspaceId, extractionId, limit, offset)).map(resultView);
}

export async function getExtractionDocument(db: Kysely<Database>, workspaceId: number, id: number): Promise<ExtractionDocumentView> {
  const row = await findExtractionDocument(db, workspaceId, id);
  if (!row) throw errors.notFound(`Extraction document ${id}`);
  return {
    id: row.id,
    extraction_id: row.extraction_id,
    task_identifier: row.task_identifier,
    source: row.source,
    document_id: row.document_id,
    file_path: row.file_path,
    file_url: row.file_url,
    file_name: row.file_name,
    title: row.title,
    pages: row.pages.map((content, i) => ({ page_number: i + 1, content })),
    created_at: row.created_at.toISOString(),
  };
}
