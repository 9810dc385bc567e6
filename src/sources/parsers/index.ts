// Document parsers: format detection, the registry of parsers by format, and bytes to pages
// of text on this thread (parseDocument) or on a worker pool (ParserPool).

export { declaredFormatMismatch, detectFormat, resolveFormat } from './detect.js';
export { parseDocument, type ParseOptions } from './parse.js';
export { ParserPool, type OcrPoolOptions, type ParserPoolOptions } from './pool.js';
export { SUPPORTED_FORMATS } from './registry.js';
export { DOCUMENT_FORMATS, OCR_OFF_HINT, ParseError, type DocumentFormat, type PageExtras, type ParsedDocument, type ProgressCallback, type SegmentedDocument } from './types.js';
