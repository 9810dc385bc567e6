// The recogniser as the parsers see it: an image in, words out. OcrEngine implements it on
// Tesseract worker threads; a parser worker thread reaches the engine of its ParserPool
// through a proxy of the same shape. Everything here is plain data that crosses threads.

export interface RecognizeOptions {
  /** Resolution of the image, which Tesseract uses to judge text sizes (default 300). */
  dpi?: number;
  /** Straighten a slightly skewed scan before recognition (Tesseract measures the angle). */
  deskew?: boolean;
}

export interface OcrWord {
  text: string;
  /** Tesseract's confidence, 0-100. */
  conf: number;
  /** Block, paragraph and line numbers within the page, from 1. */
  block: number;
  par: number;
  line: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface OcrResult {
  /** Tesseract's own text: blocks and paragraphs separated by blank lines. */
  text: string;
  /** Mean word confidence, 0-100. */
  confidence: number;
  words: OcrWord[];
  /** The skew Tesseract corrected (radians), 0 when it did not. */
  rotateRadians: number;
}

export interface OcrService {
  /** Recognitions that run at once (worker threads); callers keep about this many busy. */
  readonly concurrency?: number;
  /** Recognises one page image (PGM, PNG, JPEG, TIFF...: anything Leptonica reads). */
  recognize(image: Uint8Array, options?: RecognizeOptions): Promise<OcrResult>;
  /** The image as Leptonica reads it, as a PNG (the first page of a TIFF, decoded). */
  decode(image: Uint8Array): Promise<Uint8Array>;
  /**
   * Called before a page is prepared for OCR (rendered, decoded): OCR'd pages are slow, and
   * a caller with a time limit (ParserPool) extends it page by page.
   */
  beginPage?(): void;
}

/** Starts the message of decode()'s failure on a file Leptonica cannot read (errors cross threads as text). */
export const UNREADABLE_IMAGE = 'unreadable image';
