// Snapshots of the page index: each loaded workspace's index written at a clean shutdown, and
// read by the next load instead of every page's vector, tsvector and content from the store
// (a million pages: seconds instead of minutes); the catch-up then reads the changes since.
//
// <dir>/<store key>/<workspace id>/ holds a manifest, one file per array (each with its length
// and CRC-32 in the manifest) and copies of the vector and content files. A snapshot is written
// into a temporary directory renamed into place last, so a shutdown cut short leaves none. A load
// claims it by renaming it to a name of its process's own (no other process can take it), reads
// the arrays, and keeps the vector and content files as its own: those are only ever appended to,
// and the manifest covers only the bytes they held, so the claimed snapshot stays valid while the
// index grows. It is removed once the next snapshot is written. A process that dies first (a
// crash, SIGKILL) leaves it claimed: the next start puts it back (cut to its manifest's sizes), so
// that start, too, reads it and catches up on the changes since instead of loading every page.
// Anything amiss (another store or schema, a position ahead of the store, other constants, a short
// or corrupt file) leaves the load to read the store as without a snapshot.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { SUPERSEDED_EMBEDDING_MODEL } from '../store/embedding-models.js';
import type { ReadPosition } from '../store/pages.js';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { storeIdentity, type StoreIdentity } from '../store/store-identity.js';
import { makeDir, writeAll, type ContentState } from './content-file.js';
import { RANK } from './keyword-index.js';
import { vectorStride } from './row-vectors.js';
import { EMBEDDING_DIMENSIONS } from './vectors.js';
import { CODE_SPACE, WorkspacePages } from './workspace-pages.js';

/** Moves whenever what a snapshot holds, or how, changes. */
const FORMAT = 4;

/** What the saved codes, norms and superseded rows depend on: a snapshot made under other constants is not used. */
const FINGERPRINT = JSON.stringify({
  format: FORMAT,
  dims: EMBEDDING_DIMENSIONS,
  rowBytes: CODE_SPACE.rowBytes,
  bitRowBytes: CODE_SPACE.bitRowBytes,
  signs: crc32(new Uint8Array(CODE_SPACE.signs.buffer)),
  rank: RANK,
  superseded: SUPERSEDED_EMBEDDING_MODEL,
});

/** Bytes read or written, and checksummed, at a time. */
const CHUNK = 64 << 20;

const ARRAYS = {
  slotPage: Float64Array,
  slotDocument: Float64Array,
  slotRow: Int32Array,
  slotNumber: Int32Array,
  textOffset: Float64Array,
  textBytes: Int32Array,
  rowSlot: Int32Array,
  rowError: Float32Array,
  rowSuperseded: Uint8Array,
  lexemeChars: Uint16Array,
  lexemeLengths: Int32Array,
  postingLengths: Int32Array,
  postings: Uint8Array,
  norms: Float64Array,
  live: Uint8Array,
  rowPlace: Int32Array,
} as const;

type ArrayName = keyof typeof ARRAYS;
type Arrays = { [name in ArrayName]: InstanceType<(typeof ARRAYS)[name]> };

/** An array file: its elements, and the CRC-32 of its bytes. */
interface ArrayFile {
  length: number;
  crc: number;
}

interface Manifest {
  fingerprint: string;
  store: string;
  migration: string;
  workspace: number;
  position: ReadPosition;
  maxNorm: number;
  maxError: number;
  minAgreement: number;
  vectorPlaces: number;
  contents: ContentState;
  arrays: Record<ArrayName | 'codes' | 'bits', ArrayFile>;
}

/** Where a snapshot's events are told (the service's logger). */
export interface SnapshotLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** Claimed snapshots whose files an index of this process holds: never put back by a sweep. */
const held = new Set<string>();

/** Whether a process of this id runs (this one's id, left by an earlier run in the same container, does not count). */
function running(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/** Writes the array to a new file, flushed to disk; returns its CRC-32. */
function writeArray(file: string, array: ArrayBufferView): number {
  const bytes = bytesOf(array);
  const fd = fs.openSync(file, 'wx', 0o600);
  let crc = 0;
  try {
    for (let at = 0; at < bytes.length; at += CHUNK) {
      const part = bytes.subarray(at, at + CHUNK);
      writeAll(fd, part, at);
      crc = crc32(part, crc);
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return crc;
}

/** Flushes a file or directory to disk. */
function flush(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads the file into `into`, which it must fill exactly, and checks its CRC-32; a turn of the event loop between chunks. */
async function readInto(file: string, into: Uint8Array, expected: ArrayFile): Promise<void> {
  const handle = await fs.promises.open(file, 'r');
  try {
    if ((await handle.stat()).size !== into.length) throw new Error(`${path.basename(file)} is not the size its manifest gives`);
    let crc = 0;
    for (let at = 0; at < into.length; ) {
      const { bytesRead } = await handle.read(into, at, Math.min(CHUNK, into.length - at), at);
      if (bytesRead === 0) throw new Error(`${path.basename(file)} ends early`);
      crc = crc32(into.subarray(at, at + bytesRead), crc);
      at += bytesRead;
    }
    if (crc !== expected.crc) throw new Error(`${path.basename(file)} fails its checksum`);
  } finally {
    await handle.close();
  }
}

/** The snapshots of one store's page index. */
export class IndexSnapshots {
  /** The store's identity as the last restore() read it: what save() keys snapshots by (none before). */
  private identity: StoreIdentity | null = null;
  /** Workspace -> the claimed snapshot it was read from, whose vector and content files its index holds. */
  private readonly bases = new Map<number, string>();

  /** `dir`: where snapshots go (FOLIO_DATA_DIR/index/snapshots); what a process left half written or claimed there is removed. */
  constructor(
    readonly dir: string,
    private readonly log: SnapshotLog | null = null,
  ) {
    this.sweep();
  }

  /**
   * Writes the workspace's snapshot, replacing an older one nobody claimed. Never throws: a
   * snapshot not written only means a full load at the next start. Synchronous: it runs at
   * shutdown, once nothing else does.
   */
  save(workspaceId: number, ws: WorkspacePages): boolean {
    const store = this.identity;
    if (!store) return false;
    const target = path.join(this.dir, store.key, String(workspaceId));
    const temporary = `${target}.writing-${process.pid}-${randomBytes(4).toString('hex')}`;
    const started = performance.now();
    try {
      makeDir(temporary);
      const files = ws.copyFiles(path.join(temporary, 'vectors'), path.join(temporary, 'contents'));
      // Vectors or contents held in memory (no file could be written): nothing worth keeping.
      if (!files) throw new Error('the index holds its vectors or contents in memory, not in files');
      flush(path.join(temporary, 'vectors'));
      flush(path.join(temporary, 'contents'));
      const state = ws.state();
      const arrays: Record<ArrayName | 'codes' | 'bits', ArrayBufferView & { length: number }> = {
        slotPage: state.slotPage,
        slotDocument: state.slotDocument,
        slotRow: state.slotRow,
        slotNumber: state.slotNumber,
        textOffset: state.textOffset,
        textBytes: state.textBytes,
        rowSlot: state.rowSlot,
        rowError: state.rowError,
        rowSuperseded: state.rowSuperseded,
        lexemeChars: state.keyword.lexemes.chars,
        lexemeLengths: state.keyword.lexemes.lengths,
        postingLengths: state.keyword.postings.lengths,
        postings: state.keyword.postings.bytes,
        norms: state.keyword.norms,
        live: state.keyword.live,
        rowPlace: files.vectors.rowPlace,
        codes: state.codes,
        bits: state.bits,
      };
      const written = {} as Manifest['arrays'];
      for (const [name, array] of Object.entries(arrays) as [ArrayName | 'codes' | 'bits', (typeof arrays)[ArrayName]][]) {
        written[name] = { length: array.length, crc: writeArray(path.join(temporary, `${name}.bin`), array) };
      }
      const manifest: Manifest = {
        fingerprint: FINGERPRINT,
        store: store.key,
        migration: store.migration,
        workspace: workspaceId,
        position: state.position,
        maxNorm: state.maxNorm,
        maxError: state.maxError,
        minAgreement: state.minAgreement,
        vectorPlaces: files.vectors.places,
        contents: files.contents,
        arrays: written,
      };
      fs.writeFileSync(path.join(temporary, 'manifest.json'), JSON.stringify(manifest), { flag: 'wx', mode: 0o600 });
      flush(path.join(temporary, 'manifest.json'));
      flush(temporary);
      this.replace(target, temporary);
      flush(path.dirname(target));
      this.drop(workspaceId);
      this.log?.info({ workspaceId, pages: ws.slotOf.size, ms: Math.round(performance.now() - started) }, 'page index snapshot written');
      return true;
    } catch (err) {
      remove(temporary);
      this.log?.warn({ err, workspaceId }, 'page index snapshot not written; the next start loads the workspace from the store');
      return false;
    }
  }

  /**
   * The workspace's index from its snapshot for the store `db` reads, claimed (no other process
   * can use it) and deleted once read; null where there is none, or none usable (then the
   * caller loads from the store).
   */
  async restore(db: Kysely<Database>, workspaceId: number, contentDir: string | null): Promise<WorkspacePages | null> {
    let store: StoreIdentity;
    try {
      store = this.identity = await storeIdentity(db);
    } catch (err) {
      this.log?.warn({ err, workspaceId }, "the store's identity could not be read; the workspace loads from the store");
      return null;
    }
    const target = path.join(this.dir, store.key, String(workspaceId));
    const claimed = this.claim(target);
    if (!claimed) return null;
    const started = performance.now();
    const fds: number[] = [];
    let ws: WorkspacePages | null = null;
    let kept = false;
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(claimed, 'manifest.json'), 'utf8')) as Manifest;
      const refused = refusal(manifest, store, workspaceId);
      if (refused) {
        this.log?.info({ workspaceId, reason: refused }, 'page index snapshot not used; the workspace loads from the store');
        return null;
      }
      const arrays = {} as Arrays;
      for (const name of Object.keys(ARRAYS) as ArrayName[]) {
        const file = manifest.arrays[name];
        const array = new ARRAYS[name](file.length);
        await readInto(path.join(claimed, `${name}.bin`), bytesOf(array), file);
        (arrays as Record<ArrayName, ArrayBufferView>)[name] = array;
      }
      const vectors = openKept(path.join(claimed, 'vectors'), manifest.vectorPlaces * vectorStride(EMBEDDING_DIMENSIONS), fds);
      const contents = openKept(path.join(claimed, 'contents'), manifest.contents.end, fds);
      if (arrays.rowPlace.some((place) => place < 0 || place >= manifest.vectorPlaces)) throw new Error("a row's vector is beyond the vector file");
      ws = new WorkspacePages(contentDir);
      await ws.restore(
        {
          slotPage: arrays.slotPage,
          slotDocument: arrays.slotDocument,
          slotRow: arrays.slotRow,
          slotNumber: arrays.slotNumber,
          textOffset: arrays.textOffset,
          textBytes: arrays.textBytes,
          rowSlot: arrays.rowSlot,
          rowError: arrays.rowError,
          rowSuperseded: arrays.rowSuperseded,
          maxNorm: manifest.maxNorm,
          maxError: manifest.maxError,
          minAgreement: manifest.minAgreement,
          keyword: {
            lexemes: { chars: arrays.lexemeChars, lengths: arrays.lexemeLengths },
            postings: { lengths: arrays.postingLengths, bytes: arrays.postings },
            norms: arrays.norms,
            live: arrays.live,
          },
          position: manifest.position,
        },
        (into) => readInto(path.join(claimed, 'codes.bin'), into, manifest.arrays.codes),
        (into) => readInto(path.join(claimed, 'bits.bin'), into, manifest.arrays.bits),
        {
          vectors: { fd: vectors, state: { rowPlace: arrays.rowPlace, places: manifest.vectorPlaces } },
          contents: { fd: contents, state: manifest.contents },
        },
        contentDir,
      );
      fds.length = 0; // the workspace holds them now
      this.drop(workspaceId);
      this.bases.set(workspaceId, claimed);
      kept = true;
      this.log?.info({ workspaceId, pages: ws.slotOf.size, ms: Math.round(performance.now() - started) }, 'page index read from its snapshot');
      return ws;
    } catch (err) {
      ws?.close();
      for (const fd of fds) fs.closeSync(fd);
      this.log?.warn({ err, workspaceId }, 'page index snapshot unreadable; the workspace loads from the store');
      return null;
    } finally {
      if (!kept) {
        held.delete(claimed);
        remove(claimed);
      }
    }
  }

  /**
   * Lets go of the claimed snapshots this instance's index read (their files closed with the
   * index): the next start in this process, or after it, puts them back.
   */
  close(): void {
    for (const claimed of this.bases.values()) held.delete(claimed);
    this.bases.clear();
  }

  /** Removes the claimed snapshot the workspace's index was read from, if any: a newer one replaces it. */
  private drop(workspaceId: number): void {
    const base = this.bases.get(workspaceId);
    if (base === undefined) return;
    this.bases.delete(workspaceId);
    held.delete(base);
    remove(base);
  }

  /** Renames the snapshot at `target` to a name of this process's own; null when there is none (or another process took it). */
  private claim(target: string): string | null {
    const claimed = `${target}.claimed-${process.pid}-${randomBytes(4).toString('hex')}`;
    held.add(claimed);
    try {
      fs.renameSync(target, claimed);
      return claimed;
    } catch (err) {
      held.delete(claimed);
      const { code } = err as NodeJS.ErrnoException;
      // None there, or no directory for any (the index keeps no files).
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.log?.warn({ err }, 'page index snapshot could not be claimed');
      return null;
    }
  }

  /** Moves the snapshot written in `temporary` to `target`, an older one there first claimed and removed. */
  private replace(target: string, temporary: string): void {
    const older = this.claim(target);
    try {
      fs.renameSync(temporary, target);
    } finally {
      if (older) {
        held.delete(older);
        remove(older);
      }
    }
  }

  /**
   * Removes the snapshots half written by processes no longer running, and puts back those they
   * had claimed (where no newer one took the place): a process that died while its index held one.
   */
  private sweep(): void {
    try {
      if (!fs.existsSync(this.dir)) return;
      for (const key of fs.readdirSync(this.dir)) {
        const dir = path.join(this.dir, key);
        for (const name of fs.readdirSync(dir)) {
          const left = /^(.*)\.(writing|claimed)-(\d+)-[0-9a-f]+$/.exec(name);
          const at = path.join(dir, name);
          if (!left || held.has(at) || running(Number(left[3]))) continue;
          const target = path.join(dir, left[1]);
          if (left[2] === 'claimed' && !fs.existsSync(target)) {
            fs.renameSync(at, target);
            this.log?.info({ workspaceId: Number(left[1]) }, 'page index snapshot of a process that stopped without writing one put back for the next load');
          } else {
            remove(at);
          }
        }
      }
    } catch (err) {
      this.log?.warn({ err }, 'page index snapshots left behind could not be removed');
    }
  }
}

/** Why the snapshot cannot serve this store and workspace, or null when it can. */
function refusal(manifest: Manifest, store: StoreIdentity, workspaceId: number): string | null {
  if (manifest.fingerprint !== FINGERPRINT) return 'made by another version of the index';
  if (manifest.store !== store.key || manifest.workspace !== workspaceId) return 'made for another store or workspace';
  if (manifest.migration !== store.migration) return 'made before the store was migrated';
  // A store behind the snapshot's position (restored from an older backup) lacks changes it holds.
  const xmax = BigInt(manifest.position.snapshot.split(':')[1]);
  if (BigInt(manifest.position.xmin) > store.xmax || xmax > store.xmax) return "its position is ahead of the store's";
  return null;
}

/** Removes a snapshot's directory, if it can: one left behind is removed at a later start. */
function remove(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // Not there, or not removable (a read-only disk): nothing more to do.
  }
}

/**
 * Opens a snapshot's side file for the index to keep, cut to the `bytes` its manifest covers: what
 * lies beyond, a dead process's index appended after it read the snapshot.
 */
function openKept(file: string, bytes: number, fds: number[]): number {
  const fd = fs.openSync(file, 'r+');
  fds.push(fd);
  if (fs.fstatSync(fd).size < bytes) throw new Error('a side file of the snapshot is shorter than its manifest says');
  fs.ftruncateSync(fd, bytes);
  return fd;
}
