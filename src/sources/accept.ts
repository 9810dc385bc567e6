// Accepting a document at the door, before any task is queued: an upload streamed into the
// blob store under the size limit, then refused if empty or of no supported format; a URL
// refused if malformed. File ingests and extraction runs accept their input through here.
import type { Readable } from 'node:stream';
import { errors } from '../errors.js';
import { BlobStore, BlobTooLargeError } from '../store/blobs.js';
import { SUPPORTED_FORMATS, resolveFormat, type DocumentFormat } from './parsers/index.js';
import { checkUrlSyntax } from './url-fetch.js';

export interface UploadDeps {
  blobs: BlobStore;
  maxFileBytes: number;
}

export interface StoredUpload {
  blobKey: string;
  fileName: string | null;
  contentType: string | null;
  size: number;
}

/** Streams an uploaded file into the blob store; 413 past the size limit. */
export async function storeUpload(deps: UploadDeps, stream: Readable, fileName: string | null, contentType: string | null): Promise<StoredUpload> {
  const blobKey = BlobStore.newKey(fileName);
  try {
    const size = await deps.blobs.write(blobKey, stream, deps.maxFileBytes);
    return { blobKey, fileName, contentType, size };
  } catch (error) {
    if (error instanceof BlobTooLargeError) throw errors.payloadTooLarge(deps.maxFileBytes);
    throw error;
  }
}

/**
 * The format a stored upload is queued as: 422 when it is empty, 415 when no supported format
 * fits (`listSupported` names the formats that do).
 */
export async function uploadFormat(blobs: BlobStore, upload: StoredUpload, options: { listSupported: boolean }): Promise<DocumentFormat> {
  if (upload.size === 0) throw errors.validation(['file'], 'The file is empty', 'value_error');
  const format = resolveFormat(await blobs.read(upload.blobKey), upload.fileName, upload.contentType);
  if (!format) {
    const supported = options.listSupported ? `; supported: ${SUPPORTED_FORMATS}` : '';
    throw errors.unsupportedMediaType(`${upload.fileName ?? 'The file'} is not a supported document type${supported}`);
  }
  return format;
}

/** 422 for a URL that cannot be fetched as written. */
export function checkUrl(url: string): void {
  const problem = checkUrlSyntax(url);
  if (problem) throw errors.validation(['url'], problem, 'url_parsing');
}
