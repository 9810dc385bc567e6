// parseDocument: bytes of a known format to pages of text, on the calling thread, by the
// format's parser from the registry. OCR (scanned PDF pages, images) needs a recogniser in
// the options; without one, OCR is off.

import type { OcrService } from '../ocr/types.js';
import { PARSERS } from './registry.js';
import { DOCUMENT_FORMATS, isStackOverflow, ParseError, type DocumentFormat, type ParsedDocument, type ProgressCallback } from './types.js';

export interface ParseOptions {
  /** Recognises text in scanned PDF pages and images; null or absent: OCR is off. */
  ocr?: OcrService | null;
}

export async function parseDocument(
  bytes: Uint8Array,
  format: DocumentFormat,
  onProgress?: ProgressCallback,
  options: ParseOptions = {},
): Promise<ParsedDocument> {
  if (!DOCUMENT_FORMATS.includes(format)) throw new TypeError(`unknown document format: ${String(format)}`);
  const parser = PARSERS[format];
  if (bytes.length === 0) throw new ParseError(`The ${parser.label} is empty (0 bytes)`);
  let doc: ParsedDocument;
  try {
    doc = await (await parser.load())(bytes, onProgress, options.ocr);
  } catch (err) {
    // The file's nesting decides how deep a parser recurses: a parse that ran out of stack
    // fails the same way each time, so it is the file's fault, not a failure to retry.
    if (isStackOverflow(err)) throw new ParseError(`The ${parser.label} nests its content too deeply to read`, { cause: err });
    throw err;
  }
  if (!doc.pages.some((page) => page.trim().length > 0)) {
    throw new ParseError(`No text could be extracted: the ${parser.label} contains no text`);
  }
  if (!parser.reportsProgress) onProgress?.(1, 1);
  return doc;
}
