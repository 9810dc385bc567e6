// The keyword index's lexemes, numbered, in a hash table laid out in typed arrays: an id is
// found from a stretch of a tsvector's text without making a string of it, and without
// touching an object per lookup. Loading a 50k-page workspace looks up 7 million lexemes;
// through a Map of strings (a new string each, its hash, the key's string to compare, the
// value's object) that took about 5 s of the 15 the load took, most of it waiting on memory.

/** FNV-1a over the UTF-16 code units of text[start, end). */
function hashOf(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** A copy of `array` in a new one of `size` elements. */
export function grown<T extends Int32Array | Uint16Array | Uint32Array>(array: T, size: number): T {
  const next = new (array.constructor as new (size: number) => T)(size);
  next.set(array);
  return next;
}

export class LexemeTable {
  /** Per bucket, the hash of its lexeme and its id + 1 (0: empty); linear probing, at most half full. */
  private buckets = new Int32Array(2 * 1024);
  /** Every lexeme's UTF-16 code units, one after another, and where each id's are. */
  private chars = new Uint16Array(16 * 1024);
  private charsUsed = 0;
  private charStart = new Int32Array(1024);
  private charLength = new Int32Array(1024);
  /** The lexemes by id, as strings, for rebuilding. */
  private strings: string[] = [];

  /** Lexemes held; their ids are 0 to size - 1. */
  get size(): number {
    return this.strings.length;
  }

  /** Bytes of the table itself (not counting the lexeme strings). */
  byteLength(): number {
    return this.buckets.byteLength + this.chars.byteLength + this.charStart.byteLength + this.charLength.byteLength;
  }

  /** The id of the lexeme text[start, end), or -1. */
  find(text: string, start = 0, end = text.length): number {
    const hash = hashOf(text, start, end);
    const b = this.bucketOf(hash, text, start, end);
    return this.buckets[b + 1] - 1;
  }

  /** The id of the lexeme text[start, end), a new one if the table lacks it. */
  obtain(text: string, start = 0, end = text.length): number {
    const hash = hashOf(text, start, end);
    const b = this.bucketOf(hash, text, start, end);
    if (this.buckets[b + 1] > 0) return this.buckets[b + 1] - 1;
    const id = this.strings.length;
    this.insert(b, hash, id, text, start, end);
    // A copy: a long slice would be a view keeping the whole page's text alive.
    this.strings.push(Buffer.from(text.slice(start, end), 'utf16le').toString('utf16le'));
    if (this.strings.length * 4 > this.buckets.length) this.rebuild(this.strings);
    return id;
  }

  /** Keeps the lexemes whose ids `keep` lists, in that order, as ids 0, 1, ... */
  retain(keep: readonly number[]): void {
    this.rebuild(keep.map((id) => this.strings[id]));
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

  private insert(b: number, hash: number, id: number, text: string, start: number, end: number): void {
    this.buckets[b] = hash;
    this.buckets[b + 1] = id + 1;
    if (id === this.charStart.length) {
      this.charStart = grown(this.charStart, id * 2);
      this.charLength = grown(this.charLength, id * 2);
    }
    if (this.charsUsed + end - start > this.chars.length) this.chars = grown(this.chars, Math.max(this.chars.length * 2, this.charsUsed + end - start));
    for (let i = start; i < end; i++) this.chars[this.charsUsed++] = text.charCodeAt(i);
    this.charStart[id] = this.charsUsed - (end - start);
    this.charLength[id] = end - start;
  }

  /** Makes the table anew holding `strings` as ids 0, 1, ... */
  private rebuild(strings: string[]): void {
    let size = 1024;
    while (strings.length * 4 > size) size *= 2;
    this.buckets = new Int32Array(2 * size);
    this.chars = new Uint16Array(Math.max(16 * 1024, strings.reduce((sum, s) => sum + s.length, 0)));
    this.charsUsed = 0;
    this.charStart = new Int32Array(Math.max(1024, strings.length));
    this.charLength = new Int32Array(this.charStart.length);
    strings.forEach((s, id) => {
      const hash = hashOf(s, 0, s.length);
      this.insert(this.bucketOf(hash, s, 0, s.length), hash, id, s, 0, s.length);
    });
    this.strings = strings;
  }
}
