// Accepting file and URL ingests: the upload is stored, checked (size, emptiness, type,
// fields) and queued as a task, answered at once; workers do the rest (pipeline.ts).
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { assertStorableText, parseRequestJson } from '../documents/json-text.js';
import { ValidationError, errors } from '../errors.js';
import { BlobStore, BlobTooLargeError } from '../store/blobs.js';
import { findStoredFile } from '../store/documents.js';
import type { Database } from '../store/schema.js';
import { insertTask } from '../store/tasks.js';
import { resolveFormat } from './parsers/index.js';
import type { IngestFilePayload, IngestUrlPayload } from './pipeline.js';
import { checkUrlSyntax } from './url-fetch.js';

export interface AcceptDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  maxFileBytes: number;
  /** Called after a task is queued, so that a worker in this process starts at once. */
  onEnqueue: () => void;
}

export interface IngestReceipt {
  task_identifier: string;
  file_path: string;
  external_id: string | null;
}

export interface StoredUpload {
  blobKey: string;
  fileName: string | null;
  contentType: string | null;
  size: number;
}

/** Streams an uploaded file into the blob store; 413 past the size limit. */
export async function storeUpload(deps: AcceptDeps, stream: Readable, fileName: string | null, contentType: string | null): Promise<StoredUpload> {
  const blobKey = BlobStore.newKey(fileName);
  try {
    const size = await deps.blobs.write(blobKey, stream, deps.maxFileBytes);
    return { blobKey, fileName, contentType, size };
  } catch (error) {
    if (error instanceof BlobTooLargeError) throw errors.payloadTooLarge(deps.maxFileBytes);
    throw error;
  }
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
    if (upload.size === 0) throw errors.validation(['file'], 'The file is empty', 'value_error');
    const format = resolveFormat(await deps.blobs.read(upload.blobKey), upload.fileName, upload.contentType);
    if (!format) {
      throw errors.unsupportedMediaType(
        `${upload.fileName ?? 'The file'} is not a supported document type; supported: PDF, DOCX, HTML, Markdown, plain text`,
      );
    }
    const identifier = `IngestFile:${randomUUID()}`;
    const payload: IngestFilePayload = { blobKey: upload.blobKey, fileName: upload.fileName, contentType: upload.contentType, format, externalId, metadata };
    await insertTask(deps.db, {
      identifier,
      workspaceId,
      kind: 'IngestFile',
      status: 'PENDING',
      progress: 0,
      title: titleOf(upload.fileName),
      message: 'Waiting for a worker',
      payload: payload as unknown as Record<string, unknown>,
    });
    deps.onEnqueue();
    return { task_identifier: identifier, file_path: upload.blobKey, external_id: externalId };
  } catch (error) {
    await deps.blobs.delete(upload.blobKey);
    throw error;
  }
}

export interface UrlIngestInput {
  url: string;
  external_id?: string | null;
  metadata?: Record<string, unknown> | null;
}

export async function acceptUrl(deps: AcceptDeps, workspaceId: number, input: UrlIngestInput): Promise<IngestReceipt> {
  const problem = checkUrlSyntax(input.url);
  if (problem) throw errors.validation(['url'], problem, 'url_parsing');
  const externalId = parseExternalId(input.external_id);
  assertStorableText(input.metadata ?? null, ['metadata']);
  const lastSegment = new URL(input.url).pathname.split('/').filter(Boolean).pop() ?? null;
  const blobKey = BlobStore.newKey(lastSegment);
  const identifier = `IngestUrl:${randomUUID()}`;
  const payload: IngestUrlPayload = { url: input.url, blobKey, externalId, metadata: input.metadata ?? {} };
  await insertTask(deps.db, {
    identifier,
    workspaceId,
    kind: 'IngestUrl',
    status: 'PENDING',
    progress: 0,
    title: `Ingest ${input.url}`,
    message: 'Waiting for a worker',
    payload: payload as unknown as Record<string, unknown>,
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
