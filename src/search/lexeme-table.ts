// The keyword index's lexemes, numbered, in a hash table laid out in typed arrays: an id is
// found from a stretch of a tsvector's text without making a string of it, and without
// touching an object per lookup; the table keeps no strings at all. Loading a 50k-page workspace looks up 7 million lexemes;
// through a Map of strings (a new string each, its hash, the key's string to compare, the
// value's object) that took about 5 s of the 15 the load took, most of it waiting on memory.

/** FNV-1a over the UTF-16 code units of text[start, end). */
function hashOf(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** hashOf() of the ASCII text whose bytes are bytes[start, end). */
function hashOfAscii(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h | 0;
}

/** A copy of `array` in a new one of `size` elements. */
export function grown<T extends Uint8Array | Int32Array | Uint16Array | Uint32Array | Float32Array | Float64Array>(array: T, size: number): T {
  const next = new (array.constructor as new (size: number) => T)(size);
  next.set(array);
  return next;
}

/** What a snapshot keeps of a table (index-snapshot.ts): every lexeme's UTF-16 code units, one after another, and each one's length, by id. */
export interface LexemeState {
  chars: Uint16Array<ArrayBuffer>;
  lengths: Int32Array<ArrayBuffer>;
}

export class LexemeTable {
  /** Per bucket, the hash of its lexeme and its id + 1 (0: empty); linear probing, at most half full. */
  private buckets = new Int32Array(2 * 1024);
  /** Every lexeme's UTF-16 code units, one after another; per id, where its own are and its hash. */
  private chars = new Uint16Array(16 * 1024);
  private charsUsed = 0;
  private charStart = new Int32Array(1024);
  private charLength = new Int32Array(1024);
  private hashes = new Int32Array(1024);
  private count = 0;

  /** Lexemes held; their ids are 0 to size - 1. */
  get size(): number {
    return this.count;
  }

  /** Bytes of the table. */
  byteLength(): number {
    return this.buckets.byteLength + this.chars.byteLength + this.charStart.byteLength + this.charLength.byteLength + this.hashes.byteLength;
  }

  /** The id of the lexeme text[start, end), or -1. */
  find(text: string, start = 0, end = text.length): number {
    const b = this.bucketOf(hashOf(text, start, end), text, start, end);
    return this.buckets[b + 1] - 1;
  }

  /** The id of the lexeme text[start, end), a new one if the table lacks it. */
  obtain(text: string, start = 0, end = text.length): number {
    const hash = hashOf(text, start, end);
    const b = this.bucketOf(hash, text, start, end);
    if (this.buckets[b + 1] > 0) return this.buckets[b + 1] - 1;
    const at = this.place(b, hash, end - start);
    for (let i = start; i < end; i++) this.chars[at + i - start] = text.charCodeAt(i);
    return this.count - 1;
  }

  /**
   * As obtain() for the lexeme whose UTF-8 bytes are bytes[start, end), every one of them ASCII
   * (so each is its own UTF-16 code unit): a tsvector read in binary gives its lexemes so.
   */
  obtainAscii(bytes: Uint8Array, start: number, end: number): number {
    const hash = hashOfAscii(bytes, start, end);
    const length = end - start;
    const mask = this.buckets.length - 2;
    let b = (hash << 1) & mask;
    for (; this.buckets[b + 1] > 0; b = (b + 2) & mask) {
      const id = this.buckets[b + 1] - 1;
      if (this.buckets[b] !== hash || this.charLength[id] !== length) continue;
      const at = this.charStart[id];
      let i = 0;
      while (i < length && this.chars[at + i] === bytes[start + i]) i++;
      if (i === length) return id;
    }
    const at = this.place(b, hash, length);
    this.chars.set(bytes.subarray(start, end), at);
    return this.count - 1;
  }

  /** Gives the next id the empty bucket `b` and room for its `length` characters; returns where they go. */
  private place(b: number, hash: number, length: number): number {
    const id = this.count++;
    if (id === this.hashes.length) {
      this.charStart = grown(this.charStart, id * 2);
      this.charLength = grown(this.charLength, id * 2);
      this.hashes = grown(this.hashes, id * 2);
    }
    if (this.charsUsed + length > this.chars.length) this.chars = grown(this.chars, Math.max(this.chars.length * 2, this.charsUsed + length));
    const at = this.charsUsed;
    this.charsUsed += length;
    this.charStart[id] = at;
    this.charLength[id] = length;
    this.hashes[id] = hash;
    this.buckets[b] = hash;
    this.buckets[b + 1] = id + 1;
    if (this.count * 4 > this.buckets.length) this.rehash(this.buckets.length);
    return at;
  }

  /** The lexemes as a snapshot keeps them, copied. */
  state(): LexemeState {
    const chars = new Uint16Array(this.charsUsed);
    const lengths = this.charLength.slice(0, this.count);
    let used = 0;
    for (let id = 0; id < this.count; id++) {
      chars.set(this.chars.subarray(this.charStart[id], this.charStart[id] + lengths[id]), used);
      used += lengths[id];
    }
    return { chars: chars.subarray(0, used), lengths };
  }

  /** A table of the lexemes a snapshot kept, with the ids they had; their hashes are computed anew. */
  static restored({ chars, lengths }: LexemeState): LexemeTable {
    const table = new LexemeTable();
    const count = lengths.length;
    const size = Math.max(1024, count + 1);
    table.chars = grown(chars, Math.max(16 * 1024, chars.length));
    table.charsUsed = chars.length;
    table.charStart = new Int32Array(size);
    table.charLength = grown(lengths, size);
    table.hashes = new Int32Array(size);
    table.count = count;
    let at = 0;
    for (let id = 0; id < count; id++) {
      const length = lengths[id];
      if (length < 0 || at + length > chars.length) throw new RangeError("a snapshot's lexemes overrun their characters");
      table.charStart[id] = at;
      let h = 0x811c9dc5;
      for (let i = at; i < at + length; i++) h = Math.imul(h ^ chars[i], 0x01000193);
      table.hashes[id] = h | 0;
      at += length;
    }
    if (at !== chars.length) throw new RangeError("a snapshot's lexemes leave characters over");
    let buckets = 1024;
    while (count * 2 > buckets) buckets *= 2;
    table.rehash(buckets);
    return table;
  }

  /** Keeps the lexemes whose ids `keep` lists, in that order, as ids 0, 1, ... */
  retain(keep: readonly number[]): void {
    const size = Math.max(1024, keep.length);
    const chars = new Uint16Array(Math.max(16 * 1024, keep.reduce((sum, id) => sum + this.charLength[id], 0)));
    const charStart = new Int32Array(size);
    const charLength = new Int32Array(size);
    const hashes = new Int32Array(size);
    let used = 0;
    keep.forEach((old, id) => {
      chars.set(this.chars.subarray(this.charStart[old], this.charStart[old] + this.charLength[old]), used);
      charStart[id] = used;
      charLength[id] = this.charLength[old];
      hashes[id] = this.hashes[old];
      used += charLength[id];
    });
    this.chars = chars;
    this.charsUsed = used;
    this.charStart = charStart;
    this.charLength = charLength;
    this.hashes = hashes;
    this.count = keep.length;
    let buckets = 1024;
    while (keep.length * 2 > buckets) buckets *= 2;
    this.rehash(buckets);
  }

  /** The bucket (an index into `buckets`) holding the lexeme, or the empty one where it would go. */
  private bucketOf(hash: number, text: string, start: number, end: number): number {
    const mask = this.buckets.length - 2;
    for (let b = (hash << 1) & mask; ; b = (b + 2) & mask) {
      const id = this.buckets[b + 1] - 1;
      if (id < 0) return b;
      if (this.buckets[b] === hash && this.holds(id, text, start, end)) return b;
    }
  }

  private holds(id: number, text: string, start: number, end: number): boolean {
    const length = this.charLength[id];
    if (length !== end - start) return false;
    const at = this.charStart[id];
    for (let i = 0; i < length; i++) if (this.chars[at + i] !== text.charCodeAt(start + i)) return false;
    return true;
  }

  /** Places every id anew in `size` buckets, from the hashes kept per id. */
  private rehash(size: number): void {
    this.buckets = new Int32Array(2 * size);
    const mask = this.buckets.length - 2;
    for (let id = 0; id < this.count; id++) {
      let b = (this.hashes[id] << 1) & mask;
      while (this.buckets[b + 1] > 0) b = (b + 2) & mask;
      this.buckets[b] = this.hashes[id];
      this.buckets[b + 1] = id + 1;
    }
  }
}
