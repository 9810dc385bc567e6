// parseDocument: bytes of a known format to pages of text, on the calling thread. The format
// parsers are loaded on first use, so importing this module stays cheap. OCR (scanned PDF
// pages, images) needs a recogniser in the options; without one, OCR is off.

import type { OcrService } from '../ocr/types.js';
import { DOCUMENT_FORMATS, ParseError, type DocumentFormat, type ParsedDocument, type ProgressCallback } from './types.js';

const LABELS: Record<DocumentFormat, string> = {
  pdf: 'PDF',
  docx: 'DOCX',
  html: 'HTML page',
  markdown: 'Markdown file',
  text: 'text file',
  image: 'image',
};

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
  if (bytes.length === 0) throw new ParseError(`The ${LABELS[format]} is empty (0 bytes)`);
  let doc: ParsedDocument;
  switch (format) {
    case 'pdf':
      doc = await (await import('./pdf.js')).parsePdf(bytes, onProgress, options.ocr);
      break;
    case 'docx':
      doc = await (await import('./docx.js')).parseDocx(bytes);
      break;
    case 'html':
      doc = (await import('./html.js')).parseHtml(bytes);
      break;
    case 'markdown':
      doc = (await import('./text.js')).parseMarkdown(bytes);
      break;
    case 'text':
      doc = (await import('./text.js')).parseText(bytes);
      break;
    case 'image':
      doc = await (await import('./image.js')).parseImage(bytes, onProgress, options.ocr);
      break;
  }
  if (!doc.pages.some((page) => page.trim().length > 0)) {
    throw new ParseError(`No text could be extracted: the ${LABELS[format]} contains no text`);
  }
  if (format !== 'pdf' && format !== 'image') onProgress?.(1, 1);
  return doc;
}
