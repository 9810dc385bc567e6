// The contents of indexed pages, spilled to a file of the index's own: a search reads its
// results' contents with positioned reads, served from the operating system's page cache,
// instead of a statement (on the embedded engine a statement costs about a millisecond), and
// the process keeps only each page's offset and length. The file is a copy of what the store
// holds, unlinked as soon as it is open (nothing is left behind, even by a crash) and written
// anew from the store when the index loads.
import fs from 'node:fs';
import path from 'node:path';

/** Where a text is in the file; `offset` is -1 for a text the file could not take. */
export interface TextEntry {
  offset: number;
  bytes: number;
}

/** What a snapshot keeps of a content file beside its copy (index-snapshot.ts). */
export interface ContentState {
  end: number;
  live: number;
  waste: number;
}

/** Below this many bytes of removed texts the file is not rewritten. */
const MIN_WASTE_BYTES = 16 << 20;

export class ContentFile {
  private end = 0;
  private live = 0;
  private waste = 0;

  private constructor(
    private fd: number | null,
    private readonly dir: string | null,
  ) {}

  /** A file in `dir` (created if need be); without a directory, or when none can be made, one that takes no text. */
  static open(dir: string | null): ContentFile {
    return new ContentFile(dir === null ? null : openUnlinked(dir), dir);
  }

  /** A file a snapshot kept (open and unlinked, checked to hold `state.end` bytes) as the file of `dir`. */
  static adopt(fd: number, dir: string | null, state: ContentState): ContentFile {
    const file = new ContentFile(fd, dir);
    file.end = state.end;
    file.live = state.live;
    file.waste = state.waste;
    return file;
  }

  /** Copies the file to `to` (a snapshot's) and says what it holds; null without a file. */
  copyTo(to: string): ContentState | null {
    if (this.fd === null) return null;
    copyOpenFile(this.fd, to);
    return { end: this.end, live: this.live, waste: this.waste };
  }

  /**
   * Appends the texts (UTF-8, as the store's binary reads give them: no string is made of a
   * text until a search reads it) in one write; on a failed write (a full disk) the file is
   * given up.
   */
  append(texts: readonly Uint8Array[]): TextEntry[] {
    const lengths = texts.map((t) => t.length);
    if (this.fd !== null) {
      try {
        writeAll(this.fd, Buffer.concat(texts), this.end);
        return lengths.map((bytes) => {
          const entry = { offset: this.end, bytes };
          this.end += bytes;
          this.live += bytes;
          return entry;
        });
      } catch {
        this.close();
      }
    }
    return lengths.map((bytes) => ({ offset: -1, bytes }));
  }

  /** The text at `entry`, or null when the file holds none there (or cannot be read). */
  async read(entry: TextEntry): Promise<string | null> {
    if (this.fd === null || entry.offset < 0) return null;
    const buffer = Buffer.allocUnsafe(entry.bytes);
    try {
      return (await readAt(this.fd, buffer, entry.offset)) === entry.bytes ? buffer.toString('utf8') : null;
    } catch {
      return null;
    }
  }

  /** Counts a removed text's bytes as waste; true when rewriting the live texts is due. */
  release(entry: TextEntry): boolean {
    if (entry.offset < 0 || this.fd === null) return false;
    this.live -= entry.bytes;
    this.waste += entry.bytes;
    return this.waste > MIN_WASTE_BYTES && this.waste > this.live;
  }

  /**
   * Copies the live texts into a new file, in the given order, and returns their new entries
   * (null when that failed: the old file stays as it was).
   */
  rewrite(entries: readonly TextEntry[]): TextEntry[] | null {
    if (this.fd === null || this.dir === null) return null;
    const fd = openUnlinked(this.dir);
    if (fd === null) return null;
    const moved: TextEntry[] = [];
    let end = 0;
    try {
      const batch: Buffer[] = [];
      let batchBytes = 0;
      const flush = () => {
        writeAll(fd, Buffer.concat(batch), end - batchBytes);
        batch.length = 0;
        batchBytes = 0;
      };
      for (const entry of entries) {
        if (entry.offset < 0) {
          moved.push(entry);
          continue;
        }
        const buffer = Buffer.allocUnsafe(entry.bytes);
        if (fs.readSync(this.fd, buffer, 0, entry.bytes, entry.offset) !== entry.bytes) throw new Error('short read');
        moved.push({ offset: end, bytes: entry.bytes });
        batch.push(buffer);
        end += entry.bytes;
        batchBytes += entry.bytes;
        if (batchBytes >= 1 << 20) flush();
      }
      flush();
    } catch {
      fs.closeSync(fd);
      return null;
    }
    closeFile(this.fd);
    this.fd = fd;
    this.end = end;
    this.live = end;
    this.waste = 0;
    return moved;
  }

  close(): void {
    if (this.fd === null) return;
    closeFile(this.fd);
    this.fd = null;
  }
}

/** Reads in flight by descriptor, and the descriptors to close once theirs are done. */
const reading = new Map<number, number>();
const closing = new Set<number>();

/**
 * Reads `into.length` bytes at `position` on libuv's threads and resolves how many were read
 * (fewer only at the file's end). A search's rows and texts are read so, all at once: where the
 * page cache lacks them, the disk serves them together rather than one after another (100
 * random 6 KB reads of a cold file: 3-5 ms against 10-15 read in turn; cached, 0.13 ms against 0.11).
 */
export function readAt(fd: number, into: Uint8Array, position: number): Promise<number> {
  reading.set(fd, (reading.get(fd) ?? 0) + 1);
  return new Promise((resolve, reject) => {
    fs.read(fd, into, 0, into.length, position, (error, bytes) => {
      const left = reading.get(fd)! - 1;
      if (left > 0) reading.set(fd, left);
      else {
        reading.delete(fd);
        if (closing.delete(fd)) fs.close(fd, () => undefined);
      }
      if (error) reject(error);
      else resolve(bytes);
    });
  });
}

/**
 * Closes `fd`, at once or when the reads in flight on it are done: closed under them, its
 * number could be given to the next file opened, and they would read that file instead.
 */
export function closeFile(fd: number): void {
  if (reading.has(fd)) closing.add(fd);
  else fs.closeSync(fd);
}

/**
 * Copies the file open as `fd`, unlinked or not, to `to`: through its /proc link (Linux), which
 * copyFileSync copies in the kernel, without reading it into the process.
 */
export function copyOpenFile(fd: number, to: string): void {
  fs.copyFileSync(`/proc/self/fd/${fd}`, to, fs.constants.COPYFILE_EXCL);
}

/** Makes `dir` and its missing parents one by one: Node's recursive mkdirSync never returns for some paths (under /proc). */
export function makeDir(dir: string): void {
  const parent = path.dirname(dir);
  if (parent !== dir && !fs.existsSync(parent)) makeDir(parent);
  try {
    fs.mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** A new file in `dir`, named `<kind>-<pid>-<random>`, open for reading and writing and already unlinked; null when none can be made. */
export function openUnlinked(dir: string, kind = 'contents'): number | null {
  try {
    makeDir(dir);
    const file = path.join(dir, `${kind}-${process.pid}-${Math.random().toString(36).slice(2)}`);
    const fd = fs.openSync(file, 'wx+', 0o600);
    try {
      fs.unlinkSync(file);
    } catch {
      // A system that cannot unlink an open file (Windows) leaves it in the directory.
    }
    return fd;
  } catch {
    return null;
  }
}

/** Writes all of `buffer` at `position` (a write may take fewer bytes than asked). */
export function writeAll(fd: number, buffer: Uint8Array, position: number): void {
  for (let done = 0; done < buffer.length; ) done += fs.writeSync(fd, buffer, done, buffer.length - done, position + done);
}
