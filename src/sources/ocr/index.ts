// OCR: Tesseract on worker threads (engine.ts), page images to text (page.ts), PDF page
// rendering (pdf-render.ts), image files and multi-page TIFF (image.ts, tiff.ts).

export { OcrEngine, type OcrEngineOptions } from './engine.js';
export { imageKind, recogniseImage, type ImageKind } from './image.js';
export { parseLanguages } from './languages.js';
export { recognisePage, type PageText } from './page.js';
export type { OcrResult, OcrService, OcrWord, RecognizeOptions } from './types.js';
