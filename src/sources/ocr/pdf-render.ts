// PDF pages as images for OCR: rendered by pdfjs onto @napi-rs/canvas (a prebuilt Skia
// binding, no system libraries), and the share of a page that images cover, which tells a
// scanned page with a stamped line of text from a page of real text.

import { createRequire } from 'node:module';
import { rgbaToGray, type GrayImage } from './raster.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
type PdfDocument = Awaited<ReturnType<PdfJs['getDocument']>['promise']>;
type PdfPage = Awaited<ReturnType<PdfDocument['getPage']>>;
type NapiCanvas = typeof import('@napi-rs/canvas');

/** Resolution pages are rendered at for recognition. */
export const RENDER_DPI = 300;
/** A page larger than this (in pixels at RENDER_DPI) is rendered at a lower resolution. */
const MAX_PIXELS = 24_000_000;
const MAX_SIDE = 10_000;

const require = createRequire(import.meta.url);
/** @napi-rs/canvas, loaded on first use (synchronously: pdfjs's factory interface is; require keeps it). */
function napiCanvas(): NapiCanvas {
  return require('@napi-rs/canvas') as NapiCanvas;
}

interface CanvasAndContext {
  canvas: unknown;
  context: unknown;
}

/**
 * pdfjs's canvas factory (getDocument's CanvasFactory option) on @napi-rs/canvas, for the
 * scratch canvases pdfjs makes while rendering (patterns, soft masks, image smoothing).
 */
export class NapiCanvasFactory {
  constructor(_options?: unknown) {}

  create(width: number, height: number): CanvasAndContext {
    if (width <= 0 || height <= 0) throw new Error('Invalid canvas size');
    const canvas = napiCanvas().createCanvas(Math.ceil(width), Math.ceil(height));
    return { canvas, context: canvas.getContext('2d') };
  }

  reset(target: CanvasAndContext, width: number, height: number): void {
    if (!target.canvas) throw new Error('Canvas is not specified');
    if (width <= 0 || height <= 0) throw new Error('Invalid canvas size');
    const canvas = target.canvas as { width: number; height: number };
    canvas.width = Math.ceil(width);
    canvas.height = Math.ceil(height);
  }

  destroy(target: CanvasAndContext): void {
    if (!target.canvas) throw new Error('Canvas is not specified');
    const canvas = target.canvas as { width: number; height: number };
    canvas.width = 0;
    canvas.height = 0;
    target.canvas = null;
    target.context = null;
  }
}

/** The scale (pixels per PDF point) a page is rendered at: RENDER_DPI within the pixel limits. */
export function renderScale(widthPt: number, heightPt: number): number {
  let scale = RENDER_DPI / 72;
  const pixels = widthPt * heightPt * scale * scale;
  if (pixels > MAX_PIXELS) scale *= Math.sqrt(MAX_PIXELS / pixels);
  const side = Math.max(widthPt, heightPt) * scale;
  if (side > MAX_SIDE) scale *= MAX_SIDE / side;
  return scale;
}

/** The page rendered in grey on white, and the resolution it was rendered at. */
export async function renderPage(page: PdfPage): Promise<{ image: GrayImage; dpi: number }> {
  const base = page.getViewport({ scale: 1 });
  const scale = renderScale(base.width, base.height);
  const viewport = page.getViewport({ scale });
  const width = Math.max(1, Math.round(viewport.width));
  const height = Math.max(1, Math.round(viewport.height));
  const canvas = napiCanvas().createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  try {
    await page.render({
      canvas: canvas as unknown as HTMLCanvasElement,
      canvasContext: context as unknown as CanvasRenderingContext2D,
      viewport,
    }).promise;
    const rgba = context.getImageData(0, 0, width, height).data;
    return { image: rgbaToGray(rgba, width, height), dpi: scale * 72 };
  } finally {
    canvas.width = 0; // the native pixel buffer goes now, not at the next garbage collection
    canvas.height = 0;
  }
}

// The transform and image-painting operators of pdfjs's operator list.
interface Ops {
  save: number;
  restore: number;
  transform: number;
  paintFormXObjectBegin: number;
  paintFormXObjectEnd: number;
  images: Set<number>;
}

function opsOf(pdfjs: PdfJs): Ops {
  const o = pdfjs.OPS as Record<string, number>;
  return {
    save: o.save,
    restore: o.restore,
    transform: o.transform,
    paintFormXObjectBegin: o.paintFormXObjectBegin,
    paintFormXObjectEnd: o.paintFormXObjectEnd,
    images: new Set(
      [
        'paintImageXObject',
        'paintInlineImageXObject',
        'paintImageMaskXObject',
        'paintJpegXObject',
        'paintImageXObjectRepeat',
        'paintInlineImageXObjectGroup',
        'paintImageMaskXObjectGroup',
        'paintSolidColorImageMask',
      ]
        .map((name) => o[name])
        .filter((op) => op !== undefined),
    ),
  };
}

type Matrix = [number, number, number, number, number, number];

function multiply(m: Matrix, n: readonly number[]): Matrix {
  return [
    m[0] * n[0] + m[2] * n[1],
    m[1] * n[0] + m[3] * n[1],
    m[0] * n[2] + m[2] * n[3],
    m[1] * n[2] + m[3] * n[3],
    m[0] * n[4] + m[2] * n[5] + m[4],
    m[1] * n[4] + m[3] * n[5] + m[5],
  ];
}

const GRID = 32;

/**
 * The share of the page (0-1) that images cover: each image is the unit square under the
 * current transform, its bounding box marked on a 32 x 32 grid over the page (so overlapping
 * images count once).
 */
export async function imageCoverage(pdfjs: PdfJs, page: PdfPage): Promise<number> {
  const ops = opsOf(pdfjs);
  const list = await page.getOperatorList();
  const view = page.view; // [x0, y0, x1, y1] in PDF space
  const width = view[2] - view[0];
  const height = view[3] - view[1];
  if (!(width > 0 && height > 0)) return 0;
  const grid = new Uint8Array(GRID * GRID);
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const stack: Matrix[] = [];
  for (let i = 0; i < list.fnArray.length; i++) {
    const fn = list.fnArray[i];
    const args = list.argsArray[i] as unknown[] | null;
    if (fn === ops.save) stack.push(ctm);
    else if (fn === ops.restore) ctm = stack.pop() ?? ctm;
    else if (fn === ops.transform && args) ctm = multiply(ctm, args as number[]);
    else if (fn === ops.paintFormXObjectBegin) {
      stack.push(ctm);
      const matrix = args?.[0];
      if (Array.isArray(matrix) || ArrayBuffer.isView(matrix)) ctm = multiply(ctm, Array.from(matrix as ArrayLike<number>));
    } else if (fn === ops.paintFormXObjectEnd) ctm = stack.pop() ?? ctm;
    else if (ops.images.has(fn)) {
      const corners = [
        [0, 0],
        [1, 0],
        [0, 1],
        [1, 1],
      ].map(([x, y]) => [ctm[0] * x + ctm[2] * y + ctm[4], ctm[1] * x + ctm[3] * y + ctm[5]]);
      const xs = corners.map((c) => (c[0] - view[0]) / width);
      const ys = corners.map((c) => (c[1] - view[1]) / height);
      const gx0 = Math.max(0, Math.floor(Math.min(...xs) * GRID));
      const gx1 = Math.min(GRID, Math.ceil(Math.max(...xs) * GRID));
      const gy0 = Math.max(0, Math.floor(Math.min(...ys) * GRID));
      const gy1 = Math.min(GRID, Math.ceil(Math.max(...ys) * GRID));
      for (let y = gy0; y < gy1; y++) for (let x = gx0; x < gx1; x++) grid[y * GRID + x] = 1;
    }
  }
  let covered = 0;
  for (const cell of grid) covered += cell;
  return covered / grid.length;
}
