// The parsers, keyed by the format detection gives. Adding a format: its name in
// DOCUMENT_FORMATS (types.ts), its rule in detect.ts, a parser file and one line here.
// Parsers are loaded on first use, so that importing the registry stays cheap.

import type { OcrService } from '../ocr/types.js';
import type { DocumentFormat, ParsedDocument, ProgressCallback } from './types.js';

/** Bytes to pages; parsers that do not read images by OCR ignore the last two arguments. */
export type ParseFunction = (
  bytes: Uint8Array,
  onProgress: ProgressCallback | undefined,
  ocr: OcrService | null | undefined,
) => ParsedDocument | Promise<ParsedDocument>;

export interface FormatParser {
  /** Names the format in messages: "The PDF is empty (0 bytes)". */
  label: string;
  /** Named in the list of supported formats a refusal gives; null: left out (images, read only with OCR on). */
  listedAs: string | null;
  /** Whether the parser reports progress page by page; the others report once, when done. */
  reportsProgress: boolean;
  load(): Promise<ParseFunction>;
}

export const PARSERS: Readonly<Record<DocumentFormat, FormatParser>> = {
  pdf: { label: 'PDF', listedAs: 'PDF', reportsProgress: true, load: async () => (await import('./pdf.js')).parsePdf },
  docx: { label: 'DOCX', listedAs: 'DOCX', reportsProgress: false, load: async () => (await import('./docx.js')).parseDocx },
  html: { label: 'HTML page', listedAs: 'HTML', reportsProgress: false, load: async () => (await import('./html.js')).parseHtml },
  markdown: { label: 'Markdown file', listedAs: 'Markdown', reportsProgress: false, load: async () => (await import('./text.js')).parseMarkdown },
  text: { label: 'text file', listedAs: 'plain text', reportsProgress: false, load: async () => (await import('./text.js')).parseText },
  image: { label: 'image', listedAs: null, reportsProgress: true, load: async () => (await import('./image.js')).parseImage },
};

/** "PDF, DOCX, HTML, Markdown, plain text": what refusals of an unsupported file list. */
export const SUPPORTED_FORMATS = Object.values(PARSERS)
  .flatMap((parser) => parser.listedAs ?? [])
  .join(', ');
