// Reading a document for a worker: the stored upload or the fetched URL, its bytes checked
// against the format it declares, parsed into pages on the parser pool. Ingestion and
// extraction runs read through here; failures are TaskErrors, whose messages the task shows.
import { Type } from 'typebox';
import { TaskError } from '../errors.js';
import type { BlobStore } from '../store/blobs.js';
import {
  DOCUMENT_FORMATS,
  ParseError,
  SUPPORTED_FORMATS,
  declaredFormatMismatch,
  detectFormat,
  resolveFormat,
  type DocumentFormat,
  type PageExtras,
  type SegmentedDocument,
  type ParserPool,
} from './parsers/index.js';
import { FetchError, fetchUrl } from './url-fetch.js';

export interface SourceDeps {
  blobs: BlobStore;
  parsers: ParserPool;
  maxFileBytes: number;
  urlAllowlist: string[];
  urlTimeoutMs: number;
}

/** Reports a task's progress; `force` reports at once, anything else may be throttled. */
export type ReportProgress = (percent: number, message: string, force?: boolean) => Promise<void>;

/** A document format in a task's payload. */
export const DocumentFormatSchema = Type.Enum(DOCUMENT_FORMATS);

/** What a file says about itself; `format` null or absent: detected from the bytes. */
export interface SourceFile {
  fileName: string | null;
  contentType: string | null;
  format?: DocumentFormat | null;
}

export interface FetchedFile extends SourceFile {
  bytes: Uint8Array;
  format: DocumentFormat;
}

/** The last segment of a URL's path, decoded: the name of what it points to. */
export function urlFileName(url: string): string | null {
  const last = new URL(url).pathname.split('/').filter(Boolean).pop();
  return last ? decodeURIComponent(last) : null;
}

/** The bytes kept under `blobKey`; `name` says what is missing when they are not there. */
export async function readStoredFile(blobs: BlobStore, blobKey: string, name: string): Promise<Buffer> {
  try {
    return await blobs.read(blobKey);
  } catch {
    throw new TaskError(`The stored copy of ${name} is missing; upload it again`);
  }
}

/**
 * Fetches `url` (guarded, capped) and keeps its bytes under `blobKey`. A body of no supported
 * format fails the task; `listSupported` names the formats that are in the message.
 */
export async function fetchSource(
  deps: SourceDeps,
  url: string,
  blobKey: string,
  signal: AbortSignal,
  options: { listSupported: boolean },
): Promise<FetchedFile> {
  let fetched;
  try {
    fetched = await fetchUrl(url, { allowlist: deps.urlAllowlist, maxBytes: deps.maxFileBytes, totalTimeoutMs: deps.urlTimeoutMs, signal });
  } catch (error) {
    if (error instanceof FetchError) throw new TaskError(error.message, error.transient);
    if (signal.aborted) throw signal.reason;
    throw new TaskError(`Could not fetch ${url}`, true);
  }
  if (fetched.bytes.length === 0) throw new TaskError(`${url} answered an empty body`);
  const fileName = fetched.filename ?? urlFileName(fetched.finalUrl);
  const format = resolveFormat(fetched.bytes, fileName, fetched.contentType);
  if (!format) {
    const supported = options.listSupported ? `; supported: ${SUPPORTED_FORMATS}` : '';
    throw new TaskError(`${url} is not a supported document (${fetched.contentType ?? 'unknown type'})${supported}`);
  }
  await deps.blobs.put(blobKey, fetched.bytes);
  return { bytes: fetched.bytes, fileName, contentType: fetched.contentType, format };
}

/**
 * Parses a file into pages, reporting progress from `progress.from` to `progress.to` percent.
 * A file whose bytes lack the signature of the binary format it declares fails, saying so. The
 * parser thread also computes the `extras` asked for (SegmentedDocument.embeddings, .tsvectors).
 */
export async function parseSource(
  parsers: ParserPool,
  bytes: Uint8Array,
  file: SourceFile,
  name: string,
  progress: { report: ReportProgress; from: number; to: number },
  extras: PageExtras = {},
): Promise<SegmentedDocument> {
  const mismatch = declaredFormatMismatch(bytes, file.fileName, file.contentType);
  if (mismatch) throw new TaskError(`${name} is ${mismatch.reason}`);
  const format = file.format ?? detectFormat(bytes, file.fileName, file.contentType);
  if (!format) throw new TaskError(`${name} is not a supported document (${file.contentType ?? 'unknown type'})`);
  const { report, from, to } = progress;
  await report(from, `Parsing ${name}`, true);
  try {
    return await parsers.parse(bytes, format, (done, total) => {
      void report(from + ((to - from) * done) / Math.max(total, 1), `Parsed page ${done} of ${total}`).catch(() => undefined);
    }, extras);
  } catch (error) {
    if (error instanceof ParseError) throw new TaskError(`Could not read ${name}: ${error.message}`);
    throw error;
  }
}
