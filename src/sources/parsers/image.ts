// Image files (PNG, JPEG, WebP, TIFF with all its pages): text by OCR only, one page per frame.

import { ImageError, recogniseImage } from '../ocr/image.js';
import type { OcrService } from '../ocr/types.js';
import { OCR_OFF_HINT, ParseError, type ParsedDocument, type ProgressCallback } from './types.js';

export async function parseImage(bytes: Uint8Array, onProgress?: ProgressCallback, ocr?: OcrService | null): Promise<ParsedDocument> {
  if (!ocr) throw new ParseError(`The file is an image, whose text only OCR can read, and ${OCR_OFF_HINT}`);
  let pages: string[];
  try {
    pages = await recogniseImage(bytes, ocr, onProgress);
  } catch (err) {
    if (err instanceof ImageError) throw new ParseError(err.message, { cause: err });
    throw err;
  }
  if (!pages.some((p) => p.trim() !== '')) {
    throw new ParseError(`No text could be extracted: OCR found no text in the image${pages.length > 1 ? `’s ${pages.length} pages` : ''}`);
  }
  return { format: 'image', pages, title: null, ocrPages: pages.flatMap((p, i) => (p ? [i + 1] : [])) };
}
