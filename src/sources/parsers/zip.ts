// A minimal ZIP reader: the central directory, and stored or deflated entries. Enough to sniff
// OOXML packages and to hand mammoth a DOCX whose document.xml we have edited.

import { inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  size: number;
  offset: number; // of the local file header
}

export class ZipFormatError extends Error {}

/** An entry, or the entries read so far, inflate beyond a limit: a zip bomb, not a document. */
export class ZipLimitError extends ZipFormatError {}

const MIB = 1024 * 1024;

const EOCD = 0x06054b50;
const ZIP64_EOCD = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export function isZip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 3 || bytes[2] === 5) && (bytes[3] === 4 || bytes[3] === 6);
}

export class ZipArchive {
  readonly entries = new Map<string, ZipEntry>();
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  /** What read() may inflate across all entries, and what it has. */
  readonly #maxTotalBytes: number;
  #inflated = 0;

  /** Reads the central directory; throws ZipFormatError when there is none. */
  constructor(bytes: Uint8Array, maxTotalBytes = Infinity) {
    this.#bytes = bytes;
    this.#maxTotalBytes = maxTotalBytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const eocd = this.#findEocd();
    let count = this.#u16(eocd + 10);
    let cdOffset = this.#u32(eocd + 16);
    if ((count === 0xffff || cdOffset === 0xffffffff) && eocd >= 20 && this.#u32(eocd - 20) === ZIP64_LOCATOR) {
      const record = Number(this.#view.getBigUint64(eocd - 20 + 8, true));
      if (record + 56 > bytes.length || this.#u32(record) !== ZIP64_EOCD) throw new ZipFormatError('bad ZIP64 record');
      count = Number(this.#view.getBigUint64(record + 32, true));
      cdOffset = Number(this.#view.getBigUint64(record + 48, true));
    }
    let pos = cdOffset;
    for (let i = 0; i < count; i++) {
      if (pos + 46 > bytes.length || this.#u32(pos) !== CENTRAL) throw new ZipFormatError('truncated central directory');
      const nameLength = this.#u16(pos + 28);
      const extraLength = this.#u16(pos + 30);
      const commentLength = this.#u16(pos + 32);
      const name = new TextDecoder().decode(bytes.subarray(pos + 46, pos + 46 + nameLength));
      const entry: ZipEntry = {
        name,
        flags: this.#u16(pos + 8),
        method: this.#u16(pos + 10),
        compressedSize: this.#u32(pos + 20),
        size: this.#u32(pos + 24),
        offset: this.#u32(pos + 42),
      };
      this.#readZip64Extra(entry, pos + 46 + nameLength, extraLength);
      this.entries.set(name, entry);
      pos += 46 + nameLength + extraLength + commentLength;
    }
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /**
   * The entry's bytes. Inflation stops at maxBytes, or at what the archive's total limit has
   * left, with a ZipLimitError: a bomb never gets more memory than the limit.
   */
  read(name: string, maxBytes = 256 * MIB): Uint8Array {
    const entry = this.entries.get(name);
    if (!entry) throw new ZipFormatError(`no entry ${name}`);
    if (entry.flags & 1) throw new ZipFormatError(`entry ${name} is encrypted`);
    const at = entry.offset;
    if (at + 30 > this.#bytes.length || this.#u32(at) !== LOCAL) throw new ZipFormatError(`bad local header for ${name}`);
    const start = at + 30 + this.#u16(at + 26) + this.#u16(at + 28);
    const data = this.#bytes.subarray(start, start + entry.compressedSize);
    if (data.length < entry.compressedSize) throw new ZipFormatError(`entry ${name} is truncated`);
    if (entry.method !== 0 && entry.method !== 8) throw new ZipFormatError(`entry ${name} uses compression method ${entry.method}`);
    const left = this.#maxTotalBytes - this.#inflated;
    const limit = Math.min(maxBytes, left);
    const overLimit = () =>
      new ZipLimitError(
        left < maxBytes
          ? `its parts inflate to more than ${Math.round(this.#maxTotalBytes / MIB)} MiB in all`
          : `its part ${name} inflates to more than ${Math.round(maxBytes / MIB)} MiB`,
      );
    let out: Uint8Array;
    if (entry.method === 0) {
      if (data.length > limit) throw overLimit();
      out = data;
    } else {
      try {
        out = inflateRawSync(data, { maxOutputLength: Math.max(1, limit) });
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw overLimit();
        throw new ZipFormatError(`entry ${name} cannot be inflated: ${(err as Error).message}`);
      }
    }
    this.#inflated += out.length;
    return out;
  }

  #findEocd(): number {
    const min = Math.max(0, this.#bytes.length - 22 - 0xffff);
    for (let pos = this.#bytes.length - 22; pos >= min; pos--) {
      if (this.#u32(pos) === EOCD) return pos;
    }
    throw new ZipFormatError('no end of central directory');
  }

  #readZip64Extra(entry: ZipEntry, start: number, length: number): void {
    if (entry.size !== 0xffffffff && entry.compressedSize !== 0xffffffff && entry.offset !== 0xffffffff) return;
    for (let pos = start; pos + 4 <= start + length; ) {
      const id = this.#u16(pos);
      const size = this.#u16(pos + 2);
      if (id === 1) {
        let field = pos + 4;
        for (const key of ['size', 'compressedSize', 'offset'] as const) {
          if (entry[key] === 0xffffffff && field + 8 <= pos + 4 + size) {
            entry[key] = Number(this.#view.getBigUint64(field, true));
            field += 8;
          }
        }
        return;
      }
      pos += 4 + size;
    }
  }

  #u16(pos: number): number {
    return this.#view.getUint16(pos, true);
  }

  #u32(pos: number): number {
    return this.#view.getUint32(pos, true);
  }
}
