// The shapes shared by every parser: the formats Folio ingests, a parsed document, and the
// error that marks a file as unreadable (its message is shown to users as is).
import type { EnglishRules } from '../../text/english-lexeme.js';
import type { SegmentedParagraph } from '../../text/segmentation.js';

/** 'image': PNG, JPEG, WebP or TIFF, read by OCR (one page per frame). */
export type DocumentFormat = 'pdf' | 'docx' | 'html' | 'markdown' | 'text' | 'image';

export const DOCUMENT_FORMATS: readonly DocumentFormat[] = ['pdf', 'docx', 'html', 'markdown', 'text', 'image'];

export interface ParsedDocument {
  format: DocumentFormat;
  /** Text of each page, in order; a page may be empty (an image-only page of a PDF). */
  pages: string[];
  title: string | null;
  /** Pages (from 1) whose text came from OCR; absent when none did. */
  ocrPages?: number[];
  /** Pages (from 1) left empty because they are images and OCR is off; absent when none are. */
  unreadPages?: number[];
}

/**
 * A parsed document with each page split into paragraphs and each paragraph into sentences
 * (text/segmentation.ts), as the parser pool answers: the split runs on the parser's thread, at
 * its lower priority, not on the thread that answers requests.
 */
export interface SegmentedDocument extends ParsedDocument {
  /** Per page, in order, its paragraphs (segmentPage). */
  paragraphs: SegmentedParagraph[][];
  /** Per page, in order, its vector by the offline embedder the parse was asked for (PageExtras.embed). */
  embeddings?: Float32Array[];
  /**
   * Per page, in order, its tsvector in binary form (text/english-tsvector.ts), or null where the database
   * computes it; when asked for (PageExtras.tsvector).
   */
  tsvectors?: (Buffer | null)[];
}

/** An offline embedder (providers/embeddings/offline.ts) to embed the pages with: its model, and how much of a page it reads. */
export interface PageEmbedding {
  model: string;
  chars: number;
}

/** What a parser thread computes for each page beside its paragraphs, at its lower priority. */
export interface PageExtras {
  embed?: PageEmbedding | null;
  /** The stemmer's rules of the store's tsvectors (engineTsvectorRules). */
  tsvector?: EnglishRules | null;
}

/** Ends the message of a file that needs OCR when OCR is off. */
export const OCR_OFF_HINT = 'OCR is switched off (FOLIO_OCR=off)';

/** Reports progress in pages (PDF) or steps (other formats). */
export type ProgressCallback = (done: number, total: number) => void;

/**
 * A file that cannot be turned into text. The message is shown to users as the task's failure
 * reason, so it says what is wrong and, where possible, what to do about it.
 */
export class ParseError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ParseError';
  }
}

/** Whether `err` is V8's "Maximum call stack size exceeded". */
export function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /call stack/i.test(err.message);
}
