// Multi-page TIFF: Leptonica (inside the recogniser) decodes every TIFF compression (CCITT
// G3/G4, LZW, Deflate, PackBits, JPEG...) but reads only the first page of a file. So each
// page (each IFD of the main chain) is copied out into a single-page TIFF of its own: the tags,
// the values they point to, and the strips or tiles, with the offsets rewritten. Sub-IFDs,
// EXIF and GPS directories are dropped; the Orientation tag is taken out and returned, so the
// caller applies it the same way for every byte order.

export interface TiffPage {
  /** A valid single-page TIFF holding this page. */
  bytes: Uint8Array;
  /** The TIFF Orientation tag (1-8; 1 = as stored). */
  orientation: number;
  /** Horizontal resolution in dots per inch, when declared and plausible for a scan. */
  dpi?: number;
}

/** Classic TIFF ("II*\0" or "MM\0*") or BigTIFF ("II+\0" / "MM\0+"). */
export function isTiff(bytes: Uint8Array): boolean {
  if (bytes.length < 8) return false;
  const ii = bytes[0] === 0x49 && bytes[1] === 0x49 && (bytes[2] === 0x2a || bytes[2] === 0x2b) && bytes[3] === 0;
  const mm = bytes[0] === 0x4d && bytes[1] === 0x4d && bytes[2] === 0 && (bytes[3] === 0x2a || bytes[3] === 0x2b);
  return ii || mm;
}

const TYPE_SIZES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4 };
const STRIP_OFFSETS = 273;
const STRIP_BYTE_COUNTS = 279;
const TILE_OFFSETS = 324;
const TILE_BYTE_COUNTS = 325;
const JPEG_IF_OFFSET = 513;
const JPEG_IF_LENGTH = 514;
const ORIENTATION = 274;
const NEW_SUBFILE_TYPE = 254;
const X_RESOLUTION = 282;
const RESOLUTION_UNIT = 296;
/** Tags pointing at structures a single page does not need (sub-IFDs, EXIF, GPS, interop, free lists). */
const DROPPED = new Set([288, 289, 330, 34665, 34853, 40965, ORIENTATION]);
const MAX_PAGES = 10_000;

interface Entry {
  tag: number;
  type: number;
  count: number;
  /** The value bytes, in the file's byte order. */
  value: Uint8Array;
}

export class TiffError extends Error {}

/** The pages of a TIFF as single-page TIFFs, skipping reduced-resolution copies (thumbnails). */
export function splitTiff(bytes: Uint8Array): TiffPage[] {
  if (!isTiff(bytes)) throw new TiffError('not a TIFF file');
  const le = bytes[0] === 0x49;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u16 = (o: number) => view.getUint16(o, le);
  const u32 = (o: number) => view.getUint32(o, le);
  if (u16(2) === 43) throw new TiffError('BigTIFF files are not supported');

  const pages: (TiffPage & { reduced: boolean })[] = [];
  const seen = new Set<number>();
  let offset = u32(4);
  while (offset !== 0 && pages.length < MAX_PAGES) {
    if (seen.has(offset) || offset + 2 > bytes.length) break; // a loop or a damaged chain: keep what was read
    seen.add(offset);
    const count = u16(offset);
    if (offset + 2 + count * 12 + 4 > bytes.length) break;
    const entries: Entry[] = [];
    for (let i = 0; i < count; i++) {
      const at = offset + 2 + i * 12;
      const tag = u16(at);
      const type = u16(at + 2);
      const n = u32(at + 4);
      const size = TYPE_SIZES[type];
      if (!size) continue;
      const length = size * n;
      const start = length <= 4 ? at + 8 : u32(at + 8);
      if (start + length > bytes.length) continue; // a value past the end of the file
      entries.push({ tag, type, count: n, value: bytes.subarray(start, start + length) });
    }
    const next = u32(offset + 2 + count * 12);
    try {
      pages.push(buildPage(entries, le, bytes));
    } catch (err) {
      if (pages.length === 0 && next === 0) throw err;
    }
    offset = next;
  }
  if (pages.length === 0) throw new TiffError('the TIFF holds no readable page');
  const full = pages.filter((p) => !p.reduced);
  return (full.length > 0 ? full : pages).map(({ bytes: b, orientation, dpi }) => (dpi ? { bytes: b, orientation, dpi } : { bytes: b, orientation }));
}

function readNumbers(entry: Entry | undefined, le: boolean): number[] {
  if (!entry) return [];
  const view = new DataView(entry.value.buffer, entry.value.byteOffset, entry.value.byteLength);
  const out: number[] = [];
  for (let i = 0; i < entry.count; i++) {
    if (entry.type === 3) out.push(view.getUint16(i * 2, le));
    else if (entry.type === 4 || entry.type === 13) out.push(view.getUint32(i * 4, le));
    else if (entry.type === 1) out.push(view.getUint8(i));
    else return [];
  }
  return out;
}

/** XResolution (a RATIONAL) in dots per inch, if it is plausible for a scan (100-1200). */
function resolution(entry: Entry | undefined, unit: number, le: boolean): number | undefined {
  if (!entry || entry.type !== 5 || entry.value.length < 8 || (unit !== 2 && unit !== 3)) return undefined;
  const view = new DataView(entry.value.buffer, entry.value.byteOffset, 8);
  const denominator = view.getUint32(4, le);
  if (denominator === 0) return undefined;
  const dpi = (view.getUint32(0, le) / denominator) * (unit === 3 ? 2.54 : 1);
  return dpi >= 100 && dpi <= 1200 ? Math.round(dpi) : undefined;
}

function buildPage(entries: Entry[], le: boolean, file: Uint8Array): TiffPage & { reduced: boolean } {
  const byTag = new Map(entries.map((e) => [e.tag, e]));
  const orientation = readNumbers(byTag.get(ORIENTATION), le)[0] ?? 1;
  const reduced = ((readNumbers(byTag.get(NEW_SUBFILE_TYPE), le)[0] ?? 0) & 1) === 1;
  const dpi = resolution(byTag.get(X_RESOLUTION), readNumbers(byTag.get(RESOLUTION_UNIT), le)[0] ?? 2, le);

  // Image data: strips or tiles (and the old-style JPEG stream), copied by offset and length.
  const blocks = new Map<number, Uint8Array[]>();
  for (const [offsetsTag, countsTag] of [
    [STRIP_OFFSETS, STRIP_BYTE_COUNTS],
    [TILE_OFFSETS, TILE_BYTE_COUNTS],
  ]) {
    const offsets = readNumbers(byTag.get(offsetsTag), le);
    if (offsets.length === 0) continue;
    const counts = readNumbers(byTag.get(countsTag), le);
    if (counts.length !== offsets.length) throw new TiffError('the TIFF page has no usable strip sizes');
    blocks.set(
      offsetsTag,
      offsets.map((o, i) => {
        if (o + counts[i] > file.length) throw new TiffError('the TIFF file is truncated');
        return file.subarray(o, o + counts[i]);
      }),
    );
  }
  if (blocks.size === 0) throw new TiffError('the TIFF page has no image data');
  const jpegOffset = readNumbers(byTag.get(JPEG_IF_OFFSET), le)[0];
  const jpegLength = readNumbers(byTag.get(JPEG_IF_LENGTH), le)[0];
  const jpeg =
    jpegOffset !== undefined && jpegLength !== undefined && jpegOffset + jpegLength <= file.length
      ? file.subarray(jpegOffset, jpegOffset + jpegLength)
      : null;

  const kept = entries
    .filter((e) => !DROPPED.has(e.tag) && (e.tag !== JPEG_IF_OFFSET || jpeg) && (e.tag !== JPEG_IF_LENGTH || jpeg))
    .sort((a, b) => a.tag - b.tag)
    // Offsets become LONGs (the rewritten file may need them past 64 KiB).
    .map((e) => (blocks.has(e.tag) ? { ...e, type: 4, value: new Uint8Array(4 * e.count) } : e));

  // Layout: header, IFD, then values longer than 4 bytes, then image data.
  const ifdSize = 2 + kept.length * 12 + 4;
  let cursor = 8 + ifdSize;
  const valueAt = new Map<Entry, number>();
  for (const e of kept) {
    if (e.value.length > 4) {
      cursor += cursor & 1; // word alignment
      valueAt.set(e, cursor);
      cursor += e.value.length;
    }
  }
  const dataAt = new Map<number, number[]>();
  for (const [tag, list] of blocks) {
    dataAt.set(
      tag,
      list.map((b) => {
        cursor += cursor & 1;
        const at = cursor;
        cursor += b.length;
        return at;
      }),
    );
  }
  let jpegAt = 0;
  if (jpeg) {
    cursor += cursor & 1;
    jpegAt = cursor;
    cursor += jpeg.length;
  }

  const out = new Uint8Array(cursor);
  const view = new DataView(out.buffer);
  out.set(le ? [0x49, 0x49, 42, 0] : [0x4d, 0x4d, 0, 42]);
  view.setUint32(4, 8, le);
  view.setUint16(8, kept.length, le);
  for (const [i, e] of kept.entries()) {
    const at = 10 + i * 12;
    view.setUint16(at, e.tag, le);
    view.setUint16(at + 2, e.type, le);
    view.setUint32(at + 4, e.count, le);
    const offsets = dataAt.get(e.tag);
    if (offsets) {
      const target = offsets.length === 1 ? at + 8 : valueAt.get(e)!;
      offsets.forEach((o, k) => view.setUint32(target + 4 * k, o, le));
      if (offsets.length > 1) view.setUint32(at + 8, target, le);
    } else if (e.tag === JPEG_IF_OFFSET) {
      view.setUint32(at + 8, jpegAt, le);
    } else if (valueAt.has(e)) {
      view.setUint32(at + 8, valueAt.get(e)!, le);
      out.set(e.value, valueAt.get(e)!);
    } else {
      out.set(e.value, at + 8);
    }
  }
  view.setUint32(10 + kept.length * 12, 0, le); // no next page
  for (const [tag, list] of blocks) list.forEach((b, k) => out.set(b, dataAt.get(tag)![k]));
  if (jpeg) out.set(jpeg, jpegAt);
  return { bytes: out, orientation: orientation >= 1 && orientation <= 8 ? orientation : 1, dpi, reduced };
}
