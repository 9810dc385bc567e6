// The blob store: original file bytes under FOLIO_DATA_DIR/blobs, addressed by key.
// Writes go to a temporary name first, so a reader never sees half a file.
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';

export class BlobTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`blob exceeds ${limitBytes} bytes`);
  }
}

export class BlobStore {
  constructor(private readonly root: string) {}

  /** A fresh key for a file: `files/<uuid>/<safe name>`. */
  static newKey(filename: string | null): string {
    const safe = (filename ?? 'file').normalize('NFC').replace(/[^\p{L}\p{N}._-]+/gu, '_').replace(/^\.+/, '').slice(0, 120) || 'file';
    return `files/${randomUUID()}/${safe}`;
  }

  private pathOf(key: string): string {
    const resolved = path.resolve(this.root, key);
    if (!resolved.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`invalid blob key ${key}`);
    return resolved;
  }

  /**
   * Streams `source` into `key`, failing with BlobTooLargeError past `limitBytes`; returns the size.
   * A failed write leaves nothing behind, not even the key's folder.
   */
  async write(key: string, source: Readable, limitBytes: number): Promise<number> {
    const target = this.pathOf(key);
    const folder = path.dirname(target);
    await fs.mkdir(folder, { recursive: true });
    const temp = `${target}.part-${process.pid}`;
    // Opened before streaming: a write stream opens its file on its own time, so one that fails
    // early could create the file after the clean-up below had removed it.
    const handle = await fs.open(temp, 'w');
    let size = 0;
    try {
      await pipeline(
        source,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            size += chunk.length;
            if (size > limitBytes) throw new BlobTooLargeError(limitBytes);
            yield chunk;
          }
        },
        handle.createWriteStream(),
      );
      await fs.rename(temp, target);
      return size;
    } catch (error) {
      await handle.close().catch(() => undefined);
      await fs.rm(temp, { force: true });
      await fs.rmdir(folder).catch(() => undefined);
      throw error;
    }
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const target = this.pathOf(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.part-${process.pid}`;
    await fs.writeFile(temp, bytes);
    await fs.rename(temp, target);
  }

  async read(key: string): Promise<Buffer> {
    return fs.readFile(this.pathOf(key));
  }

  /** The first `length` bytes, for sniffing a type. */
  async head(key: string, length: number): Promise<Buffer> {
    const handle = await fs.open(this.pathOf(key), 'r');
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  stream(key: string): Readable {
    return createReadStream(this.pathOf(key));
  }

  async exists(key: string): Promise<boolean> {
    return fs.access(this.pathOf(key)).then(
      () => true,
      () => false,
    );
  }

  /** Removes the blob and its now-empty folder; a missing blob is not an error. */
  async delete(key: string): Promise<void> {
    const target = this.pathOf(key);
    await fs.rm(target, { force: true });
    await fs.rmdir(path.dirname(target)).catch(() => undefined);
  }
}
