// The keyword index's posting lists, compressed in one byte arena. At a million pages a page
// holds about 137 postings; as 32-bit words they took 550 MB, here about a third of that.
//
// A list is a run of blocks of up to BLOCK postings in increasing slot order. A block is its
// body's length in bytes (2 bytes, little-endian), then its postings, each a LEB128 varint of
// (gap << 1 | tf > 1), then tf - 2 in a byte when tf > 1. The gap of a block's first posting is
// its slot, of the others the slot less the previous one less 1: pages holding a common lexeme
// are close, so most postings take one byte. Lists grow only at their end (slots are added in
// increasing order), into the block left open; a slot is found by hopping from block to block
// on their first slots, then reading one block.
import { grown } from './lexeme-table.js';

/** The slot that ends a list decodeInto() wrote: above every slot. */
export const END = 2 ** 31 - 1;

/** Postings per block: a search for one slot reads at most this many. */
const BLOCK = 128;
/** The most bytes one append writes: a block's header, a 4-byte varint and a tf byte. */
const MAX_APPEND = 7;
/** The largest term frequency kept (PostgreSQL keeps at most 256 positions per lexeme). */
const MAX_TF = 256;
/** Per list, at FIELDS x id: its start in the arena, bytes used, bytes of room, postings, last slot, open block's offset in the list, postings in it. */
const FIELDS = 7;
const START = 0;
const BYTES = 1;
const ROOM = 2;
const COUNT = 3;
const LAST = 4;
const OPEN_AT = 5;
const OPEN_COUNT = 6;

/** The room a list of `bytes` is given when the arena is packed: an eighth more, and room for one append. */
function spareFor(bytes: number): number {
  return bytes + (bytes >> 3) + MAX_APPEND;
}

/** What a snapshot keeps of the lists: each one's bytes, one list after another, and their lengths in bytes by id. */
export interface PostingState {
  lengths: Int32Array<ArrayBuffer>;
  bytes: Uint8Array<ArrayBuffer>;
}

/** A list decoded: its slots and term frequencies, views of scratch valid until the next decode. */
export interface DecodedList {
  slots: Int32Array;
  tfs: Uint16Array;
  length: number;
}

export class PostingLists {
  private arena = new Uint8Array(64 * 1024);
  private arenaUsed = 0;
  private spans = new Int32Array(FIELDS * 1024);
  private count = 0;
  private slotScratch = new Int32Array(1024);
  private tfScratch = new Uint16Array(1024);

  /** Lists held; their ids are 0 to size - 1. */
  get size(): number {
    return this.count;
  }

  /** Adds an empty list; its id is the previous size. */
  addList(): number {
    const id = this.count++;
    if (FIELDS * this.count > this.spans.length) this.spans = grown(this.spans, this.spans.length * 2);
    this.spans.fill(0, FIELDS * id, FIELDS * id + FIELDS);
    this.spans[FIELDS * id + LAST] = -1;
    return id;
  }

  /** Postings in list `id`. */
  lengthOf(id: number): number {
    return this.spans[FIELDS * id + COUNT];
  }

  /** Appends the posting of `slot` with `tf` occurrences to list `id`, whose slots are all below `slot`. */
  append(id: number, slot: number, tf: number): void {
    const span = FIELDS * id;
    if (slot <= this.spans[span + LAST]) throw new RangeError(`posting of slot ${slot} out of order`);
    const bytes = this.spans[span + BYTES];
    if (bytes + MAX_APPEND > this.spans[span + ROOM]) this.move(id, Math.max(2 * bytes, bytes + MAX_APPEND));
    const start = this.spans[span + START];
    const arena = this.arena;
    let at = start + bytes;
    let gap: number;
    if (this.spans[span + COUNT] === 0 || this.spans[span + OPEN_COUNT] >= BLOCK) {
      this.spans[span + OPEN_AT] = bytes;
      this.spans[span + OPEN_COUNT] = 0;
      arena[at] = 0;
      arena[at + 1] = 0;
      at += 2;
      gap = slot;
    } else {
      gap = slot - this.spans[span + LAST] - 1;
    }
    const from = at;
    const many = tf > 1;
    let code = gap * 2 + (many ? 1 : 0);
    while (code >= 0x80) {
      arena[at++] = (code & 0x7f) | 0x80;
      code >>>= 7;
    }
    arena[at++] = code;
    if (many) arena[at++] = Math.min(tf, MAX_TF) - 2;
    const header = start + this.spans[span + OPEN_AT];
    const body = arena[header] + (arena[header + 1] << 8) + (at - from);
    arena[header] = body & 0xff;
    arena[header + 1] = body >>> 8;
    this.spans[span + BYTES] = at - start;
    this.spans[span + COUNT]++;
    this.spans[span + OPEN_COUNT]++;
    this.spans[span + LAST] = slot;
  }

  /** List `id` decoded into scratch. */
  decode(id: number): DecodedList {
    const length = this.spans[FIELDS * id + COUNT];
    if (length >= this.slotScratch.length) {
      this.slotScratch = new Int32Array(Math.max(length + 1, 2 * this.slotScratch.length));
      this.tfScratch = new Uint16Array(this.slotScratch.length);
    }
    this.decodeInto(id, this.slotScratch, this.tfScratch, 0);
    return { slots: this.slotScratch, tfs: this.tfScratch, length };
  }

  /**
   * Writes list `id`'s slots and term frequencies into `slots` and `tfs` from `at` on, then END
   * into `slots`; returns the position after END. The arrays must have room for them.
   */
  decodeInto(id: number, slots: Int32Array, tfs: Uint16Array, at: number): number {
    const span = FIELDS * id;
    const arena = this.arena;
    let from = this.spans[span + START];
    const end = from + this.spans[span + BYTES];
    let n = at;
    while (from < end) {
      const bodyEnd = from + 2 + (arena[from] | (arena[from + 1] << 8));
      from += 2;
      let slot = -1;
      while (from < bodyEnd) {
        let b = arena[from++];
        let code = b & 0x7f;
        if (b >= 0x80) {
          b = arena[from++];
          code |= (b & 0x7f) << 7;
          if (b >= 0x80) {
            b = arena[from++];
            code |= (b & 0x7f) << 14;
            if (b >= 0x80) code |= arena[from++] << 21;
          }
        }
        slot += (code >>> 1) + 1;
        slots[n] = slot;
        tfs[n++] = (code & 1) === 1 ? arena[from++] + 2 : 1;
      }
    }
    slots[n++] = END;
    return n;
  }

  /** The term frequency of `slot` in list `id`, or 0 where the list does not hold it. */
  tfOf(id: number, slot: number): number {
    const span = FIELDS * id;
    const arena = this.arena;
    let at = this.spans[span + START];
    const end = at + this.spans[span + BYTES];
    if (slot > this.spans[span + LAST]) return 0;
    // Hop to the last block whose first slot is at most `slot`.
    for (;;) {
      const next = at + 2 + (arena[at] | (arena[at + 1] << 8));
      if (next >= end || this.firstSlotAt(next) > slot) break;
      at = next;
    }
    const bodyEnd = at + 2 + (arena[at] | (arena[at + 1] << 8));
    at += 2;
    let current = -1;
    while (at < bodyEnd) {
      let code = 0;
      let shift = 0;
      let b: number;
      do {
        b = arena[at++];
        code |= (b & 0x7f) << shift;
        shift += 7;
      } while (b >= 0x80);
      current += (code >>> 1) + 1;
      const tf = (code & 1) === 1 ? arena[at++] + 2 : 1;
      if (current >= slot) return current === slot ? tf : 0;
    }
    return 0;
  }

  /** The slot of the first posting of the block at `at`. */
  private firstSlotAt(at: number): number {
    const arena = this.arena;
    let code = 0;
    let shift = 0;
    let b: number;
    at += 2;
    do {
      b = arena[at++];
      code |= (b & 0x7f) << shift;
      shift += 7;
    } while (b >= 0x80);
    return code >>> 1;
  }

  /** Moves list `id` to the arena's end with `room` bytes of room; a full arena is packed into one twice as large. */
  private move(id: number, room: number): void {
    if (this.arenaUsed + room > this.arena.length) this.pack(room);
    const span = FIELDS * id;
    const from = this.spans[span + START];
    this.arena.copyWithin(this.arenaUsed, from, from + this.spans[span + BYTES]);
    this.spans[span + START] = this.arenaUsed;
    this.spans[span + ROOM] = room;
    this.arenaUsed += room;
  }

  /**
   * Copies every list into a new arena, with an eighth of its length to spare (what moved lists
   * left behind is dropped), and at least `free` bytes free after them.
   */
  private pack(free: number): void {
    let needed = free;
    for (let id = 0; id < this.count; id++) needed += spareFor(this.spans[FIELDS * id + BYTES]);
    const arena = new Uint8Array(Math.max(needed, free > 0 ? 2 * this.arenaUsed : 0, 1024));
    let used = 0;
    for (let id = 0; id < this.count; id++) {
      const span = FIELDS * id;
      const bytes = this.spans[span + BYTES];
      arena.set(this.arena.subarray(this.spans[span + START], this.spans[span + START] + bytes), used);
      this.spans[span + START] = used;
      this.spans[span + ROOM] = spareFor(bytes);
      used += this.spans[span + ROOM];
    }
    this.arena = arena;
    this.arenaUsed = used;
  }

  /** Packs the arena tight, each list with an eighth to spare. */
  trim(): void {
    this.pack(0);
  }

  /**
   * The lists with slots renumbered by `remap` (increasing; -1 drops a posting) and those left
   * empty dropped; returns the ids kept, in order: list i of the result is list kept[i].
   */
  compacted(remap: Int32Array): { lists: PostingLists; kept: number[] } {
    const lists = new PostingLists();
    const kept: number[] = [];
    for (let id = 0; id < this.count; id++) {
      const { slots, tfs, length } = this.decode(id);
      let to = -1;
      for (let j = 0; j < length; j++) {
        const slot = remap[slots[j]];
        if (slot < 0) continue;
        if (to < 0) {
          to = lists.addList();
          kept.push(id);
        }
        lists.append(to, slot, tfs[j]);
      }
    }
    lists.trim();
    return { lists, kept };
  }

  /** The lists as a snapshot keeps them, copied. */
  state(): PostingState {
    const lengths = new Int32Array(this.count);
    let total = 0;
    for (let id = 0; id < this.count; id++) total += lengths[id] = this.spans[FIELDS * id + BYTES];
    const bytes = new Uint8Array(total);
    let at = 0;
    for (let id = 0; id < this.count; id++) {
      const from = this.spans[FIELDS * id + START];
      bytes.set(this.arena.subarray(from, from + lengths[id]), at);
      at += lengths[id];
    }
    return { lengths, bytes };
  }

  /** The lists a snapshot kept, checked block by block: every slot below `slots` and increasing. */
  static restored({ lengths, bytes }: PostingState, slots: number): PostingLists {
    const lists = new PostingLists();
    let needed = 0;
    for (const length of lengths) {
      if (length < 0) throw new RangeError('a snapshot of the posting lists has a negative length');
      needed += spareFor(length);
    }
    lists.arena = new Uint8Array(Math.max(needed, 1024));
    lists.spans = new Int32Array(FIELDS * Math.max(1024, lengths.length + 1));
    let from = 0;
    for (const length of lengths) {
      if (from + length > bytes.length) throw new RangeError('a snapshot of the posting lists overruns its bytes');
      const id = lists.addList();
      const span = FIELDS * id;
      lists.arena.set(bytes.subarray(from, from + length), lists.arenaUsed);
      lists.spans[span + START] = lists.arenaUsed;
      lists.spans[span + BYTES] = length;
      lists.spans[span + ROOM] = spareFor(length);
      lists.arenaUsed += spareFor(length);
      lists.check(id, slots);
      from += length;
    }
    if (from !== bytes.length) throw new RangeError('a snapshot of the posting lists leaves bytes over');
    return lists;
  }

  /** Walks list `id` as restored, setting its count, last slot and open block; throws where it is malformed. */
  private check(id: number, slots: number): void {
    const span = FIELDS * id;
    const arena = this.arena;
    const start = this.spans[span + START];
    const end = start + this.spans[span + BYTES];
    let at = start;
    let last = -1;
    let count = 0;
    while (at < end) {
      if (at + 2 > end) throw new RangeError('a snapshot of the posting lists has a truncated block');
      const bodyEnd = at + 2 + (arena[at] | (arena[at + 1] << 8));
      if (bodyEnd > end) throw new RangeError('a snapshot of the posting lists has a block beyond its list');
      this.spans[span + OPEN_AT] = at - start;
      const blockAt = at;
      at += 2;
      let slot = -1;
      let inBlock = 0;
      while (at < bodyEnd) {
        let b = arena[at++];
        let code = b & 0x7f;
        for (let shift = 7; b >= 0x80; shift += 7) {
          if (shift > 21 || at >= bodyEnd) throw new RangeError('a snapshot of the posting lists has a malformed posting');
          b = arena[at++];
          code |= (b & 0x7f) << shift;
        }
        slot += (code >>> 1) + 1;
        if ((code & 1) === 1) at++;
        inBlock++;
      }
      // Within a block slots increase by construction; across blocks, and their bounds, are checked.
      if (at > bodyEnd || inBlock === 0 || inBlock > BLOCK || slot >= slots || this.firstSlotAt(blockAt) <= last) {
        throw new RangeError('a snapshot of the posting lists holds a malformed block, or a slot out of order or beyond its pages');
      }
      last = slot;
      count += inBlock;
      this.spans[span + OPEN_COUNT] = inBlock;
    }
    this.spans[span + COUNT] = count;
    this.spans[span + LAST] = last;
  }

  /** Bytes held: the arena, the spans and the decoding scratch. */
  byteLength(): number {
    return this.arena.byteLength + this.spans.byteLength + this.slotScratch.byteLength + this.tfScratch.byteLength;
  }
}
