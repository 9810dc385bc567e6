// Byte-level sniffing: whether bytes are text, and in which encoding.

export type TextEncodingName = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

export interface DecodedText {
  text: string;
  encoding: TextEncodingName | string;
}

const SAMPLE = 64 * 1024;

/** The encoding named by a byte order mark, with the mark's length. */
export function bomEncoding(bytes: Uint8Array): { encoding: TextEncodingName; length: number } | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return null;
}

/** UTF-16 without a BOM, told by NULs in every other byte of mostly-ASCII text. */
export function sniffUtf16(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  const n = Math.min(bytes.length, SAMPLE) & ~1;
  if (n < 4) return null;
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) evenNul++;
    if (bytes[i + 1] === 0) oddNul++;
  }
  const pairs = n / 2;
  if (oddNul > 0.4 * pairs && evenNul < 0.05 * pairs) return 'utf-16le';
  if (evenNul > 0.4 * pairs && oddNul < 0.05 * pairs) return 'utf-16be';
  return null;
}

/**
 * Whether the bytes look like text in some encoding we read: a BOM or UTF-16 pattern, or few
 * NULs and control characters. Checked on a sample from the start.
 */
export function looksLikeText(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return true;
  if (bomEncoding(bytes) || sniffUtf16(bytes)) return true;
  const n = Math.min(bytes.length, SAMPLE);
  let nul = 0;
  let control = 0;
  for (let i = 0; i < n; i++) {
    const b = bytes[i];
    if (b === 0) nul++;
    // Tab, LF, VT, FF, CR and ESC (ANSI colours in logs) occur in text; other controls do not.
    else if (b < 0x20 && b !== 9 && b !== 10 && b !== 11 && b !== 12 && b !== 13 && b !== 27) control++;
  }
  return nul <= n / 1000 && nul + control <= n / 50;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isUtf8(bytes: Uint8Array): boolean {
  try {
    fatalUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Bytes minus an incomplete UTF-8 sequence at the end (a file cut mid-character). */
function withoutTornTail(bytes: Uint8Array): Uint8Array {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const b = bytes[bytes.length - back];
    if ((b & 0xc0) !== 0x80) {
      // b starts the last sequence: how long should it be?
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      return need > back ? bytes.subarray(0, bytes.length - back) : bytes;
    }
  }
  return bytes;
}

/**
 * Decodes text: a BOM wins, then a declared encoding (when TextDecoder knows it), then
 * BOM-less UTF-16, then UTF-8 if the bytes are valid UTF-8 (a torn last character is
 * forgiven), else windows-1252, the usual single-byte encoding of legacy Western text.
 */
export function decodeText(bytes: Uint8Array, declared?: string | null): DecodedText {
  const bom = bomEncoding(bytes);
  if (bom) return { text: new TextDecoder(bom.encoding).decode(bytes.subarray(bom.length)), encoding: bom.encoding };
  if (declared) {
    const decoder = decoderFor(declared);
    if (decoder && !(decoder.encoding === 'utf-8' && !isUtf8(withoutTornTail(bytes)))) {
      return { text: decoder.decode(bytes), encoding: decoder.encoding };
    }
  }
  const utf16 = sniffUtf16(bytes);
  if (utf16) return { text: new TextDecoder(utf16).decode(bytes), encoding: utf16 };
  if (isUtf8(bytes)) return { text: fatalUtf8.decode(bytes), encoding: 'utf-8' };
  const trimmed = withoutTornTail(bytes);
  if (trimmed.length < bytes.length && isUtf8(trimmed)) return { text: fatalUtf8.decode(trimmed), encoding: 'utf-8' };
  return { text: decodeWindows1252(bytes), encoding: 'windows-1252' };
}

// windows-1252 at 0x80-0x9F (the rest is Latin-1). Node 20's TextDecoder('windows-1252')
// decodes those bytes as C1 controls, like Latin-1, so the table is applied here.
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

export function decodeWindows1252(bytes: Uint8Array): string {
  const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return latin1.replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]);
}

/** A decoder for an encoding label, or null when the label is unknown. */
export function decoderFor(label: string): { encoding: string; decode(bytes: Uint8Array): string } | null {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label.trim().toLowerCase());
  } catch {
    return null;
  }
  // Every label of windows-1252 (latin1, iso-8859-1, ascii...) means windows-1252 on the web.
  if (decoder.encoding === 'windows-1252') return { encoding: 'windows-1252', decode: decodeWindows1252 };
  return decoder;
}
