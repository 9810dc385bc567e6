// @folio/client: a typed client for Folio's HTTP API.
export { FolioClient, unwrap } from './client.js';
export type { EmbeddingDocument, EmbeddingIngest, FolioClientOptions, IngestOptions, PageOptions, RequestOptions, UploadSource, WaitOptions } from './client.js';
export { FolioError, FolioTaskFailedError, FolioTaskTimeoutError } from './errors.js';
export type { ValidationIssue } from './errors.js';
export type { paths } from './schema.js';
export type * from './types.js';
