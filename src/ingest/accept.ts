// Accepting file and URL ingests: the upload or URL is checked (by sources/) with the form's
// fields and queued as a task, answered at once; workers do the rest (pipeline.ts).
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { Compile } from 'typebox/compile';
import { ValidationError, errors } from '../errors.js';
import { checkUrl, uploadFormat, type StoredUpload } from '../sources/index.js';
import { BlobStore } from '../store/blobs.js';
import { findStoredFile } from '../store/documents.js';
import type { Database } from '../store/schema.js';
import { findTaskWithPayload } from '../store/tasks.js';
import { enqueueTask } from '../tasks/registry.js';
import { assertStorableText, parseRequestJson } from '../text/json-text.js';
import { ingestFileTask, ingestUrlTask } from './pipeline.js';

export interface AcceptDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  /** Called after a task is queued, so that a worker in this process starts at once. */
  onEnqueue: () => void;
}

export interface IngestReceipt {
  task_identifier: string;
  file_path: string;
  external_id: string | null;
}

function parseExternalId(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw errors.validation(['external_id'], 'Input should be a valid string', 'string_type');
  if (value.length > 255) throw errors.validation(['external_id'], 'String should have at most 255 characters', 'string_too_long');
  assertStorableText(value, ['external_id']);
  return value;
}

function parseMetadataField(value: string | undefined): Record<string, unknown> {
  if (value === undefined || value.trim() === '') return {};
  const parsed = parseRequestJson(value, ['metadata']);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError([{ path: ['metadata'], msg: 'metadata must be a JSON object', type: 'dict_type' }]);
  }
  return parsed as Record<string, unknown>;
}

function titleOf(name: string | null): string {
  return `Ingest ${name ?? 'file'}`;
}

/** Validates an upload already in the blob store and queues its ingest; the blob is removed if refused. */
export async function acceptUpload(
  deps: AcceptDeps,
  workspaceId: number,
  upload: StoredUpload | null,
  fields: Record<string, string>,
): Promise<IngestReceipt> {
  if (!upload) throw errors.validation(['file'], 'Field required', 'missing');
  try {
    const externalId = parseExternalId(fields.external_id);
    const metadata = parseMetadataField(fields.metadata);
    const format = await uploadFormat(deps.blobs, upload, { listSupported: true });
    const identifier = await enqueueTask(deps.db, ingestFileTask, {
      workspaceId,
      title: titleOf(upload.fileName),
      payload: { blobKey: upload.blobKey, fileName: upload.fileName, contentType: upload.contentType, format, externalId, metadata },
    });
    deps.onEnqueue();
    return { task_identifier: identifier, file_path: upload.blobKey, external_id: externalId };
  } catch (error) {
    await deps.blobs.delete(upload.blobKey);
    throw error;
  }
}

const isUploadPayload = Compile(ingestFileTask.payload);

/**
 * Queues a failed upload's ingest again, as a new task on the file it kept (a failed task
 * keeps its file): for a failure that has since been mended, such as a provider that was down.
 */
export async function retryUpload(deps: AcceptDeps, workspaceId: number, identifier: string): Promise<IngestReceipt> {
  const task = await findTaskWithPayload(deps.db, workspaceId, identifier);
  if (!task) throw errors.notFound(`Task ${identifier}`);
  const { payload } = task;
  if (task.kind !== ingestFileTask.kind || task.status !== 'FAILED' || !isUploadPayload.Check(payload)) {
    throw errors.invalidRequest(`Only a FAILED upload (an IngestFile task) can be retried; task ${identifier} is a ${task.status} ${task.kind} task`);
  }
  if (!(await deps.blobs.exists(payload.blobKey))) throw errors.notFound(`Stored file of task ${identifier}`);
  const retried = await enqueueTask(deps.db, ingestFileTask, { workspaceId, title: task.title, payload });
  deps.onEnqueue();
  return { task_identifier: retried, file_path: payload.blobKey, external_id: payload.externalId };
}

export interface UrlIngestInput {
  url: string;
  external_id?: string | null;
  metadata?: Record<string, unknown> | null;
}

export async function acceptUrl(deps: AcceptDeps, workspaceId: number, input: UrlIngestInput): Promise<IngestReceipt> {
  checkUrl(input.url);
  const externalId = parseExternalId(input.external_id);
  assertStorableText(input.metadata ?? null, ['metadata']);
  const lastSegment = new URL(input.url).pathname.split('/').filter(Boolean).pop() ?? null;
  const blobKey = BlobStore.newKey(lastSegment);
  const identifier = await enqueueTask(deps.db, ingestUrlTask, {
    workspaceId,
    title: `Ingest ${input.url}`,
    payload: { url: input.url, blobKey, externalId, metadata: input.metadata ?? {} },
  });
  deps.onEnqueue();
  return { task_identifier: identifier, file_path: blobKey, external_id: externalId };
}

export interface DocumentFile {
  stream: Readable;
  fileName: string;
  contentType: string;
}

/** The original bytes of a file or URL document; 404 for embedding documents. */
export async function openDocumentFile(deps: Pick<AcceptDeps, 'db' | 'blobs'>, workspaceId: number, id: number): Promise<DocumentFile> {
  const stored = await findStoredFile(deps.db, workspaceId, id);
  if (!stored) throw errors.notFound(`Document ${id}`);
  if (stored.source === 'embedding' || !(await deps.blobs.exists(stored.file_path))) {
    throw errors.notFound(`Stored file of document ${id}`);
  }
  return {
    stream: deps.blobs.stream(stored.file_path),
    fileName: stored.file_name ?? stored.file_path.split('/').pop() ?? 'file',
    contentType: stored.content_type ?? 'application/octet-stream',
  };
}
