// Images of known text for OCR tests, drawn with a font from an npm package (pdfjs ships
// Liberation Sans) so that they do not depend on the machine's fonts.
import path from 'node:path';
import { createRequire } from 'node:module';
import { createCanvas, GlobalFonts, type Canvas } from '@napi-rs/canvas';

const FONT = 'FolioOcrTest';
GlobalFonts.registerFromPath(
  path.join(path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts', 'LiberationSans-Regular.ttf'),
  FONT,
);

/** Black text on white, 40 px type (10 pt at about 290 dpi), one line per entry. */
export function textCanvas(lines: string[], size = 40): Canvas {
  const canvas = createCanvas(Math.round(size * 26), Math.round(size * (1.6 * lines.length + 2)));
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = '#000';
  ctx.font = `${size}px ${FONT}`;
  lines.forEach((line, i) => ctx.fillText(line, size, size * (1.6 * i + 2)));
  return canvas;
}
