// OCR without the corpus: rasters, TIFF splitting, image headers and format detection, and
// images rendered here from known text (PNG, JPEG, WebP, multi-page TIFF, turned sideways or
// upside down) that must read back as that text, on this thread and through ParserPool.
import { createCanvas, type Canvas } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { characterErrorRate } from '../../bench/ocr/cer.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { OcrEngine } from '../../src/sources/ocr/engine.js';
import { imageKind, imageSize } from '../../src/sources/ocr/image.js';
import { parseLanguages } from '../../src/sources/ocr/languages.js';
import { recognisePage, wordsToText } from '../../src/sources/ocr/page.js';
import { applyExifOrientation, crop, isBlank, rgbaToGray, rotate, shrink, toPgm, type GrayImage } from '../../src/sources/ocr/raster.js';
import { isTiff, splitTiff } from '../../src/sources/ocr/tiff.js';
import { detectFormat, ParseError, ParserPool, parseDocument } from '../../src/sources/parsers/index.js';
import { textCanvas } from '../helpers/text-image.js';

const TEXT = [
  'The quick brown fox jumps over the lazy dog.',
  'Pack my box with five dozen liquor jugs, then',
  'send 42 invoices to Berlin before 9 March 2024.',
];

function grayOf(canvas: Canvas): GrayImage {
  return rgbaToGray(canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data, canvas.width, canvas.height);
}

/** The canvas turned clockwise by a quarter-turn multiple. */
function turned(canvas: Canvas, degrees: 90 | 180 | 270): Canvas {
  const swap = degrees !== 180;
  const out = createCanvas(swap ? canvas.height : canvas.width, swap ? canvas.width : canvas.height);
  const ctx = out.getContext('2d');
  ctx.translate(out.width / 2, out.height / 2);
  ctx.rotate((degrees * Math.PI) / 180);
  ctx.drawImage(canvas, -canvas.width / 2, -canvas.height / 2);
  return out;
}

interface TiffPageSpec {
  image: GrayImage;
  orientation?: number;
  dpi?: number;
}

/**
 * A minimal uncompressed 8-bit greyscale TIFF (one strip per page), little- or big-endian:
 * what @napi-rs/canvas cannot write. Pages are chained IFDs; values that do not fit an entry
 * (the resolution) follow their IFD.
 */
function encodeTiff(pages: TiffPageSpec[], byteOrder: 'II' | 'MM' = 'II'): Uint8Array {
  const le = byteOrder === 'II';
  const chunks: Uint8Array[] = [];
  let size = 8;
  const ifdOffsets: number[] = [];
  const header = new Uint8Array(8);
  const hv = new DataView(header.buffer);
  header.set(le ? [0x49, 0x49] : [0x4d, 0x4d]);
  hv.setUint16(2, 42, le);
  chunks.push(header);
  const patches: { at: number; value: number }[] = [];
  for (const page of pages) {
    const pixels = page.image.data;
    const dataAt = size;
    chunks.push(pixels);
    size += pixels.length + (pixels.length & 1);
    if (pixels.length & 1) chunks.push(new Uint8Array(1));
    // tag, type (3 SHORT, 4 LONG, 5 RATIONAL), value
    const entries: [number, number, number][] = [
      [256, 4, page.image.width],
      [257, 4, page.image.height],
      [258, 3, 8],
      [259, 3, 1],
      [262, 3, 1],
      [273, 4, dataAt],
      [274, 3, page.orientation ?? 1],
      [277, 3, 1],
      [278, 4, page.image.height],
      [279, 4, pixels.length],
      ...(page.dpi ? ([[282, 5, 0], [296, 3, 2]] as [number, number, number][]) : []),
    ];
    const ifdAt = size;
    ifdOffsets.push(ifdAt);
    const ifd = new Uint8Array(2 + entries.length * 12 + 4 + (page.dpi ? 8 : 0));
    const v = new DataView(ifd.buffer);
    v.setUint16(0, entries.length, le);
    entries.forEach(([tag, type, value], i) => {
      const at = 2 + i * 12;
      v.setUint16(at, tag, le);
      v.setUint16(at + 2, type, le);
      v.setUint32(at + 4, 1, le);
      if (type === 3) v.setUint16(at + 8, value, le);
      else if (type === 4) v.setUint32(at + 8, value, le);
      else {
        const rational = 2 + entries.length * 12 + 4;
        v.setUint32(at + 8, ifdAt + rational, le);
        v.setUint32(rational, page.dpi!, le);
        v.setUint32(rational + 4, 1, le);
      }
    });
    patches.push({ at: ifdAt + 2 + entries.length * 12, value: 0 });
    chunks.push(ifd);
    size += ifd.length;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  const view = new DataView(out.buffer);
  view.setUint32(4, ifdOffsets[0], le);
  patches.forEach((p, i) => view.setUint32(p.at, ifdOffsets[i + 1] ?? 0, le));
  return out;
}

/** A JPEG with an EXIF block (APP1) holding just the Orientation tag, after its SOI marker. */
function withExifOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  const tiff = new Uint8Array(8 + 2 + 12 + 4);
  const v = new DataView(tiff.buffer);
  tiff.set([0x4d, 0x4d]);
  v.setUint16(2, 42);
  v.setUint32(4, 8);
  v.setUint16(8, 1);
  v.setUint16(10, 0x0112);
  v.setUint16(12, 3);
  v.setUint32(14, 1);
  v.setUint16(18, orientation);
  const payload = new Uint8Array([...Buffer.from('Exif\0\0', 'latin1'), ...tiff]);
  const segment = new Uint8Array([0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload]);
  return new Uint8Array([...jpeg.subarray(0, 2), ...segment, ...jpeg.subarray(2)]);
}

const norm = (text: string) => text.replace(/\s+/g, ' ').trim();
const FULL = TEXT.join(' ');

describe('rasters', () => {
  const img: GrayImage = { width: 3, height: 2, data: new Uint8Array([1, 2, 3, 4, 5, 6]) };

  it('turns by quarter turns, clockwise', () => {
    expect(rotate(img, 90)).toEqual({ width: 2, height: 3, data: new Uint8Array([4, 1, 5, 2, 6, 3]) });
    expect(rotate(img, 180)).toEqual({ width: 3, height: 2, data: new Uint8Array([6, 5, 4, 3, 2, 1]) });
    expect(rotate(img, 270)).toEqual({ width: 2, height: 3, data: new Uint8Array([3, 6, 2, 5, 1, 4]) });
    expect(rotate(rotate(img, 90), 270)).toEqual(img);
  });

  it('applies EXIF orientations 1-8', () => {
    expect(applyExifOrientation(img, 1)).toBe(img);
    expect(applyExifOrientation(img, 2).data).toEqual(new Uint8Array([3, 2, 1, 6, 5, 4]));
    expect(applyExifOrientation(img, 3)).toEqual(rotate(img, 180));
    expect(applyExifOrientation(img, 4).data).toEqual(new Uint8Array([4, 5, 6, 1, 2, 3]));
    expect(applyExifOrientation(img, 5)).toEqual({ width: 2, height: 3, data: new Uint8Array([1, 4, 2, 5, 3, 6]) }); // transpose
    expect(applyExifOrientation(img, 6)).toEqual(rotate(img, 90));
    expect(applyExifOrientation(img, 7)).toEqual({ width: 2, height: 3, data: new Uint8Array([6, 3, 5, 2, 4, 1]) }); // transverse
    expect(applyExifOrientation(img, 8)).toEqual(rotate(img, 270));
  });

  it('crops, shrinks, encodes PGM and tells blank pages', () => {
    expect(crop(img, 1, 0, 2, 2).data).toEqual(new Uint8Array([2, 3, 5, 6]));
    expect(shrink({ width: 4, height: 2, data: new Uint8Array([0, 2, 10, 10, 4, 6, 20, 20]) }, 2).data).toEqual(new Uint8Array([3, 15]));
    expect(Buffer.from(toPgm(img)).toString('latin1')).toBe('P5\n3 2\n255\n\x01\x02\x03\x04\x05\x06');
    const white: GrayImage = { width: 1000, height: 1000, data: new Uint8Array(1_000_000).fill(250) };
    expect(isBlank(white)).toBe(true);
    expect(isBlank({ ...white, data: white.data.map((v, i) => (i % 99_991 === 0 ? 0 : v)) })).toBe(true); // specks
    expect(isBlank({ ...white, data: white.data.map((v, i) => (i % 997 === 0 ? 0 : v)) })).toBe(false); // a dust storm: left to Tesseract
    expect(isBlank(grayOf(textCanvas(['Some text'])))).toBe(false);
    expect(isBlank({ width: 4, height: 4, data: new Uint8Array(16) })).toBe(true); // too small for text
  });

  it('reads RGBA as luminance over white paper', () => {
    const rgba = new Uint8Array([255, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0, 128]);
    expect([...rgbaToGray(rgba, 3, 1).data]).toEqual([76, 255, 127]);
  });
});

describe('image headers and format detection', () => {
  const canvas = textCanvas(['Header test']);
  let png: Uint8Array, jpeg: Uint8Array, webp: Uint8Array;
  beforeAll(async () => {
    png = new Uint8Array(await canvas.encode('png'));
    jpeg = new Uint8Array(await canvas.encode('jpeg'));
    webp = new Uint8Array(await canvas.encode('webp'));
  });

  it('knows PNG, JPEG, WebP and TIFF with their sizes', () => {
    const tiff = encodeTiff([{ image: grayOf(canvas), dpi: 300 }], 'MM');
    for (const [bytes, kind] of [
      [png, 'png'],
      [jpeg, 'jpeg'],
      [webp, 'webp'],
      [tiff, 'tiff'],
    ] as const) {
      expect(imageSize(bytes), kind).toMatchObject({ kind, width: canvas.width, height: canvas.height });
      expect(detectFormat(bytes, 'upload.bin'), kind).toBe('image');
      expect(detectFormat(bytes, 'notes.txt', 'text/plain'), kind).toBe('image');
    }
  });

  it('answers null for headers that stop before the picture size, and for other images', () => {
    expect(imageKind(png.subarray(0, 16))).toBeNull();
    expect(imageKind(jpeg.subarray(0, 12))).toBeNull();
    expect(imageKind(webp.subarray(0, 16))).toBeNull();
    expect(detectFormat(png.subarray(0, 20))).toBeNull();
    const gif = new Uint8Array([...Buffer.from('GIF89a'), 10, 0, 10, 0, 0, 0, 0]);
    expect(detectFormat(gif, 'a.gif', 'image/gif')).toBeNull();
    const bmp = new Uint8Array([0x42, 0x4d, ...new Uint8Array(60)]);
    expect(detectFormat(bmp, 'a.bmp')).toBeNull();
  });
});

describe('TIFF pages', () => {
  const a = grayOf(textCanvas(['Page one']));
  const b = grayOf(textCanvas(['Page two', 'has two lines']));

  for (const order of ['II', 'MM'] as const) {
    it(`splits a ${order} multi-page TIFF into single-page TIFFs with their own tags`, () => {
      const file = encodeTiff([{ image: a, dpi: 300 }, { image: b, orientation: 3 }], order);
      expect(isTiff(file)).toBe(true);
      const pages = splitTiff(file);
      expect(pages.map((p) => [p.orientation, p.dpi])).toEqual([
        [1, 300],
        [3, undefined],
      ]);
      for (const [i, page] of pages.entries()) {
        const expected = i === 0 ? a : b;
        expect(imageSize(page.bytes)).toMatchObject({ kind: 'tiff', width: expected.width, height: expected.height });
        // One page: the first IFD ends the chain, and the strip holds the page's pixels.
        const le = order === 'II';
        const view = new DataView(page.bytes.buffer, page.bytes.byteOffset);
        const ifd = view.getUint32(4, le);
        const count = view.getUint16(ifd, le);
        expect(view.getUint32(ifd + 2 + count * 12, le)).toBe(0);
        const tags = new Map<number, number>();
        for (let k = 0; k < count; k++) tags.set(view.getUint16(ifd + 2 + k * 12, le), view.getUint32(ifd + 2 + k * 12 + 8, le));
        expect(tags.has(274)).toBe(false); // the orientation is applied by the reader, not left to Leptonica
        const strip = tags.get(273)!;
        expect(page.bytes.subarray(strip, strip + 64)).toEqual(expected.data.subarray(0, 64));
      }
    });
  }

  it('refuses what is not a TIFF, and keeps the readable pages of a damaged chain', () => {
    expect(() => splitTiff(new Uint8Array(16))).toThrow(/not a TIFF/);
    const file = encodeTiff([{ image: a }, { image: b }]);
    const view = new DataView(file.buffer);
    const first = view.getUint32(4, true);
    const count = view.getUint16(first, true);
    view.setUint32(first + 2 + count * 12, file.length + 100, true); // next IFD past the end
    expect(splitTiff(file)).toHaveLength(1);
  });
});

describe('configuration', () => {
  it('reads FOLIO_OCR, FOLIO_OCR_LANGS and FOLIO_OCR_THREADS', () => {
    expect(loadConfig({})).toMatchObject({ ocr: true, ocrLangs: 'eng', ocrThreads: 1 });
    expect(loadConfig({ FOLIO_OCR: 'off', FOLIO_OCR_LANGS: 'eng, deu', FOLIO_OCR_THREADS: '3' })).toMatchObject({ ocr: false, ocrLangs: 'eng+deu', ocrThreads: 3 });
    expect(loadConfig({ FOLIO_OCR: 'ON' }).ocr).toBe(true);
    expect(() => loadConfig({ FOLIO_OCR: 'maybe' })).toThrow(ConfigError);
    expect(() => loadConfig({ FOLIO_OCR_LANGS: 'english!' })).toThrow(ConfigError);
    expect(() => loadConfig({ FOLIO_OCR_THREADS: '0' })).toThrow(ConfigError);
    expect(parseLanguages('eng+deu+eng')).toEqual(['eng', 'deu']);
  });

  it('fails at start-up, naming the package, when a language is not installed', () => {
    expect(() => new OcrEngine({ languages: 'eng+xyz' })).toThrow(/@tesseract\.js-data\/xyz/);
    expect(() => new ParserPool({ ocr: { languages: 'xyz' } })).toThrow(/not installed/);
    expect(() => new ParserPool({ ocr: { threads: 0 } })).toThrow(RangeError);
  });
});

describe('OCR off', () => {
  it('refuses images with a message that says OCR is switched off', async () => {
    const png = new Uint8Array(await textCanvas(['Hello']).encode('png'));
    const err = await parseDocument(png, 'image').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParseError);
    expect((err as Error).message).toBe('The file is an image, whose text only OCR can read, and OCR is switched off (FOLIO_OCR=off)');
  });
});

describe('recognition', { timeout: 180_000 }, () => {
  const engine = new OcrEngine({ threads: 2 });
  afterAll(() => engine.close());

  async function read(bytes: Uint8Array, progress?: [number, number][]): Promise<string[]> {
    const format = detectFormat(bytes);
    expect(format).toBe('image');
    const doc = await parseDocument(bytes, format!, (d, t) => progress?.push([d, t]), { ocr: engine });
    expect(doc.format).toBe('image');
    return doc.pages;
  }

  it('reads back text rendered into a PNG, a JPEG and a WebP', async () => {
    const canvas = textCanvas(TEXT);
    for (const format of ['png', 'jpeg', 'webp'] as const) {
      const bytes = new Uint8Array(format === 'png' ? await canvas.encode('png') : await canvas.encode(format, 90));
      const progress: [number, number][] = [];
      const pages = await read(bytes, progress);
      expect(pages).toHaveLength(1);
      expect(norm(pages[0]), format).toBe(FULL);
      expect(progress).toEqual([[1, 1]]);
    }
  });

  it('reads every page of a multi-page TIFF, one document page per frame, with the orientation tag applied', async () => {
    const one = textCanvas(['First page of the fax.', 'It has two lines.']);
    const two = textCanvas(['Second page, stored upside down.']);
    const three = textCanvas(['Third and last page.']);
    for (const order of ['II', 'MM'] as const) {
      const file = encodeTiff(
        [{ image: grayOf(one), dpi: 290 }, { image: rotate(grayOf(two), 180), orientation: 3 }, { image: grayOf(three) }],
        order,
      );
      const progress: [number, number][] = [];
      const pages = await read(file, progress);
      expect(pages.map(norm), order).toEqual(['First page of the fax. It has two lines.', 'Second page, stored upside down.', 'Third and last page.']);
      expect(progress).toEqual([
        [1, 3],
        [2, 3],
        [3, 3],
      ]);
    }
  });

  it('turns pages scanned sideways or upside down before reading them', async () => {
    const canvas = textCanvas(TEXT);
    for (const degrees of [90, 180, 270] as const) {
      const page = await recognisePage(engine, grayOf(turned(canvas, degrees)));
      expect(norm(page.text), `${degrees}`).toBe(FULL);
      // Tesseract reads text lying a quarter turn clockwise itself; a page upside down is
      // turned back here, and one lying anticlockwise is turned by half a turn into one
      // Tesseract reads.
      if (degrees === 180) expect(page.rotation).toBe(180);
      if (degrees === 270) expect([90, 180]).toContain(page.rotation);
    }
  });

  it('skips blank pages without recognising them, and fails an image without text', async () => {
    const blank = createCanvas(800, 600);
    const ctx = blank.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, 800, 600);
    expect(await recognisePage(engine, grayOf(blank))).toEqual({ text: '', confidence: 0, rotation: 0, recognised: false });
    const err = await parseDocument(new Uint8Array(await blank.encode('png')), 'image', undefined, { ocr: engine }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParseError);
    expect((err as Error).message).toMatch(/OCR found no text in the image/);
  });

  it('fails damaged images with a ParseError (and never crashes the process)', async () => {
    // These bytes make @napi-rs/canvas's decoders crash the process (SIGSEGV): images are
    // decoded by Leptonica, which fails cleanly.
    const canvas = textCanvas(['x']);
    const png = new Uint8Array(await canvas.encode('png'));
    const jpeg = new Uint8Array(await canvas.encode('jpeg'));
    const decodeFailed = 'The image could not be decoded: the file is damaged or uses an encoding that cannot be read';
    for (const [bytes, message] of [
      [png.subarray(0, 33), decodeFailed],
      [new Uint8Array([...png.subarray(0, 41), ...new Uint8Array(500).fill(7)]), decodeFailed],
      [jpeg.subarray(0, 300), 'The image is damaged or not a supported image (PNG, JPEG, WebP, TIFF)'], // no frame header
    ] as const) {
      const err = await parseDocument(bytes, 'image', undefined, { ocr: engine }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ParseError);
      expect((err as Error).message).toBe(message);
    }
  });

  it('applies a JPEG’s EXIF orientation', async () => {
    // Stored a quarter turn anticlockwise, with orientation 6: "turn 90 degrees clockwise to view".
    const jpeg = withExifOrientation(new Uint8Array(await turned(textCanvas(TEXT), 270).encode('jpeg', 95)), 6);
    expect(imageSize(jpeg)).toMatchObject({ kind: 'jpeg', orientation: 6 });
    expect((await read(jpeg)).map(norm)).toEqual([FULL]);
  });

  it('leaves out lines of noise but keeps every word of a line with text', () => {
    const w = (text: string, conf: number, line: number, par = 1) => ({ text, conf, block: 1, par, line, left: 0, top: 0, width: 1, height: 1 });
    expect(wordsToText([w('~', 10, 1), w('i|', 5, 1), w('Who', 3, 2), w('goes', 95, 2), w('there?', 90, 2), w('Next', 96, 1, 2)])).toBe(
      'Who goes there?\n\nNext',
    );
  });

  it('drops waiting requests when their signal aborts, and refuses work once closed', async () => {
    const small = new OcrEngine({ threads: 1 });
    const png = new Uint8Array(await textCanvas(['Abort me']).encode('png'));
    const controller = new AbortController();
    const first = small.recognize(png);
    const second = small.recognize(png, {}, controller.signal);
    controller.abort(new Error('no longer needed'));
    await expect(second).rejects.toThrow('no longer needed');
    expect(norm((await first).text)).toBe('Abort me');
    await small.close();
    await expect(small.recognize(png)).rejects.toThrow(/closed/);
  });

  it('closes with a request just handed to its worker, failing it without an unhandled rejection', async () => {
    const small = new OcrEngine({ threads: 1 });
    const png = new Uint8Array(await textCanvas(['Close me']).encode('png'));
    expect(norm((await small.recognize(png)).text)).toBe('Close me');
    // The worker has started: this request reaches it while it loads the image, as close() ends it.
    const late = expect(small.recognize(png)).rejects.toThrow(/closed/);
    await small.close();
    await late;
    // A post to a worker already ended would surface here, as an unhandled rejection.
    await new Promise((r) => setTimeout(r, 200));
  });
});

describe('ParserPool with OCR', { timeout: 180_000 }, () => {
  it('reads images on its workers through the pool’s OCR threads, and ends them on close', async () => {
    const pool = new ParserPool({ threads: 2, ocr: { threads: 1 } });
    expect(pool.ocr).toBe(true);
    try {
      const png = new Uint8Array(await textCanvas(TEXT).encode('png'));
      const tiff = encodeTiff([{ image: grayOf(textCanvas(['Pool page one.'])) }, { image: grayOf(textCanvas(['Pool page two.'])) }]);
      const progress: [number, number][] = [];
      const [a, b] = await Promise.all([pool.parse(png, 'image'), pool.parse(tiff, 'image', (d, t) => progress.push([d, t]))]);
      expect(norm(a.pages[0])).toBe(FULL);
      expect(b.pages.map(norm)).toEqual(['Pool page one.', 'Pool page two.']);
      expect(b.ocrPages).toEqual([1, 2]);
      expect(progress).toEqual([
        [1, 2],
        [2, 2],
      ]);
    } finally {
      await pool.close();
    }
    await expect(pool.parse(new Uint8Array([1]), 'image')).rejects.toThrow(/closed/);
  });

  it('answers images with the OCR-off message when the pool has no OCR', async () => {
    const pool = new ParserPool({ threads: 1 });
    try {
      const err = await pool.parse(new Uint8Array(await textCanvas(['x']).encode('png')), 'image').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ParseError);
      expect((err as Error).message).toMatch(/FOLIO_OCR=off/);
    } finally {
      await pool.close();
    }
  });

  it('still measures CER the way the benchmark does', () => {
    expect(characterErrorRate('abc  def', 'abc def')).toBe(0);
    expect(characterErrorRate('abd', 'abc')).toBeCloseTo(1 / 3);
  });
});
