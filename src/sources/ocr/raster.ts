// 8-bit greyscale rasters: what every page becomes before recognition (a rendered PDF page, a
// decoded image frame), with the few operations OCR needs: turning by quarter turns, cropping,
// shrinking, a blank-page test, and PGM encoding (the cheapest format the recogniser reads).

export interface GrayImage {
  width: number;
  height: number;
  /** Luminance, one byte per pixel, row by row; 0 is black. */
  data: Uint8Array;
}

/** Clockwise quarter turns, in degrees. */
export type Rotation = 0 | 90 | 180 | 270;

/** Luminance of RGBA pixels (premultiplied or not); transparent pixels count as white paper. */
export function rgbaToGray(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number): GrayImage {
  const data = new Uint8Array(width * height);
  for (let i = 0, p = 0; i < data.length; i++, p += 4) {
    const a = rgba[p + 3];
    const y = (rgba[p] * 77 + rgba[p + 1] * 150 + rgba[p + 2] * 29) >> 8;
    // Blend over white: y * a/255 + 255 * (1 - a/255).
    data[i] = a === 255 ? y : 255 - (((255 - y) * a) / 255) | 0;
  }
  return { width, height, data };
}

/** The image turned clockwise by a multiple of 90 degrees. */
export function rotate(img: GrayImage, rotation: Rotation): GrayImage {
  if (rotation === 0) return img;
  const { width: w, height: h, data: src } = img;
  const out = new Uint8Array(w * h);
  if (rotation === 180) {
    for (let i = 0, n = w * h; i < n; i++) out[n - 1 - i] = src[i];
    return { width: w, height: h, data: out };
  }
  // 90 clockwise: source (x, y) goes to (h - 1 - y, x) in a w-tall, h-wide image.
  // 270 clockwise: source (x, y) goes to (y, w - 1 - x).
  for (let y = 0; y < h; y++) {
    const row = y * w;
    if (rotation === 90) {
      const col = h - 1 - y;
      for (let x = 0; x < w; x++) out[x * h + col] = src[row + x];
    } else {
      for (let x = 0; x < w; x++) out[(w - 1 - x) * h + y] = src[row + x];
    }
  }
  return { width: h, height: w, data: out };
}

/** Mirrored left to right. */
export function flipHorizontal(img: GrayImage): GrayImage {
  const { width: w, height: h, data: src } = img;
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) out[row + x] = src[row + w - 1 - x];
  }
  return { width: w, height: h, data: out };
}

/**
 * Undoes an EXIF orientation (1-8): the image as the camera meant it to be seen. Cameras store
 * the sensor's pixels and say how to turn them; decoders do not always apply it.
 */
export function applyExifOrientation(img: GrayImage, orientation: number): GrayImage {
  switch (orientation) {
    case 2:
      return flipHorizontal(img);
    case 3:
      return rotate(img, 180);
    case 4:
      return flipHorizontal(rotate(img, 180));
    case 5:
      return flipHorizontal(rotate(img, 90));
    case 6:
      return rotate(img, 90);
    case 7:
      return flipHorizontal(rotate(img, 270));
    case 8:
      return rotate(img, 270);
    default:
      return img;
  }
}

export function crop(img: GrayImage, left: number, top: number, width: number, height: number): GrayImage {
  const x0 = Math.max(0, Math.min(img.width, Math.round(left)));
  const y0 = Math.max(0, Math.min(img.height, Math.round(top)));
  const w = Math.max(0, Math.min(img.width - x0, Math.round(width)));
  const h = Math.max(0, Math.min(img.height - y0, Math.round(height)));
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) out.set(img.data.subarray((y0 + y) * img.width + x0, (y0 + y) * img.width + x0 + w), y * w);
  return { width: w, height: h, data: out };
}

/** The image shrunk by an integer factor (mean of each factor x factor block). */
export function shrink(img: GrayImage, factor: number): GrayImage {
  const f = Math.max(1, Math.floor(factor));
  if (f === 1) return img;
  const w = Math.max(1, Math.floor(img.width / f));
  const h = Math.max(1, Math.floor(img.height / f));
  const out = new Uint8Array(w * h);
  const area = f * f;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let sum = 0;
      for (let dy = 0; dy < f; dy++) {
        const row = (y * f + dy) * img.width + x * f;
        for (let dx = 0; dx < f; dx++) sum += img.data[row + dx];
      }
      out[y * w + x] = Math.round(sum / area);
    }
  }
  return { width: w, height: h, data: out };
}

/**
 * Whether a page holds nothing worth recognising: (almost) no dark pixels, or too small to
 * hold a line of text. Sampled on a grid, so a 3000 x 4000 page costs well under a millisecond.
 */
export function isBlank(img: GrayImage): boolean {
  if (img.width < 8 || img.height < 8) return true;
  const step = Math.max(1, Math.floor(Math.sqrt((img.width * img.height) / 250_000)));
  let dark = 0;
  let total = 0;
  let min = 255;
  let max = 0;
  for (let y = 0; y < img.height; y += step) {
    const row = y * img.width;
    for (let x = 0; x < img.width; x += step) {
      const v = img.data[row + x];
      if (v < min) min = v;
      if (v > max) max = v;
      total++;
      if (v < 128) dark++;
    }
  }
  // A uniform page (white, black or grey) has no text; neither has one with a few specks
  // (one short word on a 300 dpi page is about 0.01% dark pixels: five times this).
  return max - min < 48 || dark < Math.max(4, total * 0.00002);
}

/** Binary PGM (P5): a header and the bytes, which Leptonica reads without decoding work. */
export function toPgm(img: GrayImage): Uint8Array {
  const header = new TextEncoder().encode(`P5\n${img.width} ${img.height}\n255\n`);
  const out = new Uint8Array(header.length + img.data.length);
  out.set(header, 0);
  out.set(img.data, header.length);
  return out;
}
