// Acquiring a document: accepting it at the door (accept.ts), then, on a worker, fetching or
// reading it and parsing it into pages (acquire.ts) with the parser registered for its format;
// and sending to a URL under the same address guard (url-post.ts, webhook deliveries).

export { checkUrl, storeUpload, uploadFormat, type StoredUpload, type UploadDeps } from './accept.js';
export { DocumentFormatSchema, fetchSource, parseSource, readStoredFile, urlFileName, type FetchedFile, type ReportProgress, type SourceDeps, type SourceFile } from './acquire.js';
export { OCR_OFF_HINT, ParserPool, type DocumentFormat, type ParsedDocument, type SegmentedDocument } from './parsers/index.js';
export { postGuarded, refusalOf, type PostOptions } from './url-post.js';
