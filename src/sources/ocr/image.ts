// Image files as documents: PNG, JPEG, WebP and TIFF, one page per frame (TIFF pages; an
// animated PNG counts its default image; an animated WebP is not read). Uploaded bytes are
// decoded by Leptonica inside the recogniser's WebAssembly, never by @napi-rs/canvas: its
// native decoders crash the whole process (SIGSEGV) on some truncated PNG, JPEG and WebP
// files, where Leptonica fails cleanly. Leptonica hands back a well-formed greyscale PNG,
// which canvas turns into pixels. A TIFF is first cut into single-page TIFFs (tiff.ts), since
// Leptonica reads only the first page of a file. Orientation tags (JPEG EXIF, TIFF) are
// applied here; Leptonica ignores them.

import { createRequire } from 'node:module';
import { recognisePage } from './page.js';
import { applyExifOrientation, rgbaToGray, shrink, type GrayImage } from './raster.js';
import { isTiff, splitTiff, TiffError } from './tiff.js';
import { UNREADABLE_IMAGE, type OcrService } from './types.js';

export type ImageKind = 'png' | 'jpeg' | 'webp' | 'tiff';

/** Images above this many pixels are shrunk before recognition (text in them is large anyway). */
const MAX_PIXELS = 24_000_000;
/** Larger than this is refused: decoding would exhaust the recogniser's WebAssembly memory. */
const MAX_DECODE_PIXELS = 100_000_000;

export class ImageError extends Error {}

/**
 * The kind of image the bytes hold, or null. The header must be complete enough to give the
 * picture's size: 16 bytes of a PNG signature are not an image.
 */
export function imageKind(bytes: Uint8Array): ImageKind | null {
  const size = imageSize(bytes);
  return size && size.width > 0 && size.height > 0 ? size.kind : null;
}

interface ImageInfo {
  kind: ImageKind;
  width: number;
  height: number;
  /** Resolution the file declares, when it is plausible for a scan (100-1200 dpi). */
  dpi?: number;
  /** EXIF orientation of a JPEG (1-8). */
  orientation?: number;
}

function plausibleDpi(dpi: number): number | undefined {
  return dpi >= 100 && dpi <= 1200 ? Math.round(dpi) : undefined;
}

export function imageSize(bytes: Uint8Array): ImageInfo | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ascii = (at: number, length: number) => String.fromCharCode(...bytes.subarray(at, at + length));
  // PNG: signature, then the IHDR chunk with width and height; pHYs gives the resolution.
  if (bytes.length >= 24 && ascii(1, 3) === 'PNG' && bytes[0] === 0x89 && ascii(12, 4) === 'IHDR') {
    const info: ImageInfo = { kind: 'png', width: view.getUint32(16), height: view.getUint32(20) };
    for (let at = 8; at + 8 <= bytes.length && at < 1 << 20; ) {
      const length = view.getUint32(at);
      const type = ascii(at + 4, 4);
      if (type === 'pHYs' && length >= 9 && at + 17 <= bytes.length && bytes[at + 16] === 1) {
        info.dpi = plausibleDpi(view.getUint32(at + 8) * 0.0254);
      }
      if (type === 'IDAT' || type === 'IEND') break;
      at += 12 + length;
    }
    return info;
  }
  // JPEG: markers up to the frame header (SOFn) with the size; JFIF's density gives the resolution.
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    let dpi: number | undefined;
    let orientation: number | undefined;
    for (let at = 2; at + 4 <= bytes.length; ) {
      if (bytes[at] !== 0xff) return null;
      const marker = bytes[at + 1];
      if (marker === 0xff) {
        at++;
        continue;
      }
      if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
        at += 2;
        continue;
      }
      if (marker === 0xd9 || marker === 0xda) return null; // image data before any frame header
      const length = view.getUint16(at + 2);
      if (marker === 0xe0 && ascii(at + 4, 5) === 'JFIF\0' && at + 16 <= bytes.length) {
        const unit = bytes[at + 11];
        const density = view.getUint16(at + 12);
        if (unit === 1) dpi = plausibleDpi(density);
        else if (unit === 2) dpi = plausibleDpi(density * 2.54);
      }
      if (marker === 0xe1 && ascii(at + 4, 6) === 'Exif\0\0') {
        orientation = exifOrientation(bytes.subarray(at + 10, Math.min(bytes.length, at + 2 + length)));
      }
      const sof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (sof) {
        if (at + 9 > bytes.length) return null;
        return { kind: 'jpeg', height: view.getUint16(at + 5), width: view.getUint16(at + 7), dpi, orientation };
      }
      at += 2 + length;
    }
    return null;
  }
  // WebP: RIFF container, then a lossy (VP8), lossless (VP8L) or extended (VP8X) first chunk.
  if (bytes.length >= 30 && ascii(0, 4) === 'RIFF' && ascii(8, 4) === 'WEBP') {
    const chunk = ascii(12, 4);
    if (chunk === 'VP8 ' && bytes[23] === 0x9d && bytes[24] === 0x01 && bytes[25] === 0x2a) {
      return { kind: 'webp', width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
    }
    if (chunk === 'VP8L' && bytes[20] === 0x2f) {
      const bits = view.getUint32(21, true);
      return { kind: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    if (chunk === 'VP8X') {
      const w = 1 + (bytes[24] | (bytes[25] << 8) | (bytes[26] << 16));
      const h = 1 + (bytes[27] | (bytes[28] << 8) | (bytes[29] << 16));
      return { kind: 'webp', width: w, height: h };
    }
    return null;
  }
  // TIFF: the first page's ImageWidth and ImageLength tags.
  if (isTiff(bytes) && bytes.length >= 8) {
    const le = bytes[0] === 0x49;
    if (view.getUint16(2, le) !== 42) return null; // BigTIFF: not supported
    const ifd = view.getUint32(4, le);
    if (ifd < 8 || ifd + 2 > bytes.length) return null;
    const count = view.getUint16(ifd, le);
    let width = 0;
    let height = 0;
    for (let i = 0; i < count && ifd + 2 + i * 12 + 12 <= bytes.length; i++) {
      const at = ifd + 2 + i * 12;
      const tag = view.getUint16(at, le);
      const type = view.getUint16(at + 2, le);
      const value = type === 3 ? view.getUint16(at + 8, le) : view.getUint32(at + 8, le);
      if (tag === 256) width = value;
      if (tag === 257) height = value;
    }
    return width > 0 && height > 0 ? { kind: 'tiff', width, height } : null;
  }
  return null;
}

/** The Orientation tag (0x0112) of IFD0 in an EXIF block (a TIFF structure), if present. */
function exifOrientation(tiff: Uint8Array): number | undefined {
  if (tiff.length < 8 || !isTiff(tiff)) return undefined;
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const le = tiff[0] === 0x49;
  const ifd = view.getUint32(4, le);
  if (ifd + 2 > tiff.length) return undefined;
  const count = view.getUint16(ifd, le);
  for (let i = 0; i < count && ifd + 2 + i * 12 + 12 <= tiff.length; i++) {
    const at = ifd + 2 + i * 12;
    if (view.getUint16(at, le) === 0x0112 && view.getUint16(at + 2, le) === 3) {
      const value = view.getUint16(at + 8, le);
      return value >= 1 && value <= 8 ? value : undefined;
    }
  }
  return undefined;
}

/** One frame ready for recognition. */
interface Frame {
  image: GrayImage;
  dpi?: number;
}

/** The frames of an image file, each decoded when its turn comes. */
function frames(bytes: Uint8Array, ocr: OcrService): (() => Promise<Frame>)[] {
  const info = imageSize(bytes);
  if (!info) throw new ImageError('The image is damaged or not a supported image (PNG, JPEG, WebP, TIFF)');
  if (info.width * info.height > MAX_DECODE_PIXELS) {
    throw new ImageError(`The image is too large to read (${info.width} x ${info.height} pixels)`);
  }
  if (info.kind !== 'tiff') {
    return [async () => ({ image: applyExifOrientation(await decode(ocr, bytes, 'The image'), info.orientation ?? 1), dpi: info.dpi })];
  }
  let pages;
  try {
    pages = splitTiff(bytes);
  } catch (err) {
    if (err instanceof TiffError) throw new ImageError(`The TIFF image could not be read: ${err.message}`);
    throw err;
  }
  return pages.map((page, i) => async () => ({
    image: applyExifOrientation(await decode(ocr, page.bytes, pages.length > 1 ? `Page ${i + 1} of the TIFF image` : 'The TIFF image'), page.orientation),
    dpi: page.dpi,
  }));
}

/** Pixels of an encoded image, decoded by Leptonica (see the top of this file). */
async function decode(ocr: OcrService, bytes: Uint8Array, what: string): Promise<GrayImage> {
  let png: Uint8Array;
  try {
    png = await ocr.decode(bytes);
  } catch (err) {
    if (!(err instanceof Error && err.message.startsWith(UNREADABLE_IMAGE))) throw err; // the engine, not the file
    throw new ImageError(`${what} could not be decoded: the file is damaged or uses an encoding that cannot be read`);
  }
  return decodeWithCanvas(png);
}

type NapiCanvas = typeof import('@napi-rs/canvas');
const require = createRequire(import.meta.url);

/** Pixels of a PNG written by Leptonica (trusted input: see the top of this file). */
async function decodeWithCanvas(bytes: Uint8Array): Promise<GrayImage> {
  // Loaded on first use (require keeps it).
  const canvasModule = require('@napi-rs/canvas') as NapiCanvas;
  let img;
  try {
    img = await canvasModule.loadImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (err) {
    throw new ImageError(`The image could not be decoded: ${(err as Error).message}`);
  }
  const { width, height } = img;
  if (!(width > 0 && height > 0)) throw new ImageError('The image could not be decoded');
  const canvas = canvasModule.createCanvas(width, height);
  try {
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, width, height);
    context.drawImage(img, 0, 0);
    return rgbaToGray(context.getImageData(0, 0, width, height).data, width, height);
  } finally {
    canvas.width = 0;
    canvas.height = 0;
  }
}

/** Text of each frame of an image file, recognised in order, with progress frame by frame. */
export async function recogniseImage(
  bytes: Uint8Array,
  ocr: OcrService,
  onProgress?: (done: number, total: number) => void,
): Promise<string[]> {
  const list = frames(bytes, ocr);
  const pages: string[] = [];
  for (const load of list) {
    ocr.beginPage?.();
    let { image, dpi } = await load();
    const pixels = image.width * image.height;
    if (pixels > MAX_PIXELS) {
      const factor = Math.ceil(Math.sqrt(pixels / MAX_PIXELS));
      image = shrink(image, factor);
      if (dpi) dpi /= factor;
    }
    const page = await recognisePage(ocr, image, { dpi });
    pages.push(page.text);
    onProgress?.(pages.length, list.length);
  }
  return pages;
}
