// A multipart upload form: the part named `file` streams into the blob store, other file
// parts are drained, text fields are kept. A failure part-way (a field over its limit, a
// broken stream) deletes the file already stored, so nothing is left behind unreferenced.
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { AppError, ValidationError, errors } from '../errors.js';
import type { StoredUpload } from '../sources/index.js';

/** Where uploaded files go (the blob store, through the ingest service). */
export interface UploadStore {
  store(stream: Readable, fileName: string | null, contentType: string | null): Promise<StoredUpload>;
  discard(upload: StoredUpload): Promise<void>;
}

/** The limits of a form of one file and short text fields. */
export interface FormLimits {
  fileBytes: number;
  fields: number;
  fieldBytes: number;
  parts: number;
}

// A part's boundary and headers (its name, file name, type) beside its content.
const PART_HEADER_BYTES = 8 * 1024;

/**
 * busboy's limits for the form. One byte over the file limit lets the blob store see the file
 * is too large (busboy would otherwise truncate it silently at the limit).
 */
export function multipartLimits(form: FormLimits) {
  return { fileSize: form.fileBytes + 1, files: 1, fields: form.fields, fieldSize: form.fieldBytes, parts: form.parts };
}

/** The most a whole form can take: the file, every field at its limit, and each part's headers. */
export function formBodyLimit(form: FormLimits): number {
  return form.fileBytes + form.fields * form.fieldBytes + form.parts * PART_HEADER_BYTES;
}

export interface UploadForm {
  upload: StoredUpload | null;
  fields: Record<string, string>;
}

export async function readUploadForm(request: FastifyRequest, uploads: UploadStore): Promise<UploadForm> {
  let upload: StoredUpload | null = null;
  const fields: Record<string, string> = {};
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname === 'file' && !upload) upload = await uploads.store(part.file, part.filename || null, part.mimetype || null);
        else part.file.resume();
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value;
      }
    }
  } catch (error) {
    if (upload) await uploads.discard(upload);
    throw asFormError(error);
  }
  return { upload, fields };
}

// The multipart parser reports a body that does not match its boundary, or ends early, with
// plain Errors (no code); those are the client's fault. Errors with a code (a full disk) are not.
function asFormError(error: unknown): unknown {
  if (error instanceof AppError || error instanceof ValidationError) return error;
  if (error instanceof Error && !('code' in error)) return errors.invalidRequest(`The multipart body is malformed: ${error.message}`);
  return error;
}
