// The in-memory inverted index that ranks keyword matches: per lexeme, the pages (as slots)
// holding it with their term frequency; per slot, its length normaliser. The rank r is
// BM25-shaped with fixed statistics (docs/internals/search.md), so nothing here depends on the rest of
// the corpus and a page's rank never changes when others are added or removed.
import { missingWordCount } from '../text/word-weight.js';
import { grown, LexemeTable, type LexemeState } from './lexeme-table.js';
import { PostingLists, type PostingState } from './posting-lists.js';
import { KthOfStream, kthLargest } from './shortlist.js';
import type { TermCount } from './tsvector.js';

/**
 * The constants of the keyword rank r: BM25's term saturation K1 and length normalisation B
 * against a fixed reference of L distinct lexemes, inverse document frequencies
 * ln(1 + PRIOR_MASS / frequency) from the fixed word-frequency prior (migration 0005),
 * an estimate from its form for a lexeme the prior lacks (text/word-weight.ts), and SCALE and
 * POWER, which make r from the page's share of the query's weight (rankOfShare) and set r/(r+1)
 * against the offline embedder's cosines. K1, B, L and PRIOR_MASS were tuned on Cranfield; the
 * estimate, SCALE and POWER leave-one-out on three collections (bench/ir-eval).
 */
export const RANK = { K1: 1.2, B: 0.75, L: 40, PRIOR_MASS: 2_000_000, SCALE: 1.25, POWER: 2.5 } as const;

/** A lexeme of the query with its weight qtf x idf. */
export interface QueryTerm {
  lexeme: string;
  weight: number;
}

/** The inverse document frequency of a lexeme from its count in the prior (null: not in it). */
export function priorIdf(lexeme: string, frequency: number | null): number {
  return Math.log(1 + RANK.PRIOR_MASS / (frequency ?? missingWordCount(lexeme)));
}

/**
 * The query's own weight, the sum of its lexemes' qtf x idf (those no page holds included): a
 * page's BM25-shaped sum divided by it is the share of the query the page matches, below K1 + 1
 * whatever the page, so that a long query's ranks are on the scale of a short one's (as a
 * cosine is). A statistic of the query alone: scores stay absolute.
 */
export function queryWeight(query: readonly QueryTerm[]): number {
  let sum = 0;
  for (const term of query) sum += term.weight;
  return sum;
}

/**
 * The rank r of a page matching `share` of the query's weight: (SCALE x share)^POWER, 0 for
 * none. POWER 2.5 is taken as y^2 x sqrt(y): Math.pow per hit made rank() three times slower.
 */
export function rankOfShare(share: number): number {
  if (!(share > 0)) return 0;
  const y = RANK.SCALE * share;
  return y * y * Math.sqrt(y);
}

/** A page's length normaliser K1 (1 - B + B len / L), len its number of distinct lexemes. */
function lengthNorm(distinctLexemes: number): number {
  const { K1, B, L } = RANK;
  return K1 * (1 - B + (B * distinctLexemes) / L);
}

/** The distinct lexemes whose lengthNorm() is nearest `norm` (a snapshot keeps norms, not lengths). */
function distinctLexemesOf(norm: number): number {
  const { K1, B, L } = RANK;
  return Math.round(((norm / K1 - 1 + B) * L) / B);
}

/**
 * A page's distinct lexemes as its slot's length code holds them: 1 to LONG - 1; LONG stands for
 * a page of more (its norm is kept apart), 0 for a removed page (or one without any lexeme).
 */
const LONG = 0xffff;
/** Slots whose shares merge() adds up at a time: 128 KB of shares, and their lengths, in a core's cache. */
const WINDOW = 16384;
/** The length normaliser of each length code below LONG, so that a slot's costs 2 bytes, not 8. */
const NORMS = Float64Array.from({ length: LONG }, (_, distinctLexemes) => lengthNorm(distinctLexemes));

/** Slots stay below this (a page index holds at most this many pages, live or removed, between compactions). */
export const MAX_SLOTS = 2 ** 24;

/** The pages a query matched and their ranks: views of the index's scratch, valid until its next rank(). */
export interface KeywordHits {
  slots: Int32Array;
  ranks: Float64Array;
}

/** What a snapshot keeps of the index (index-snapshot.ts): its lexemes, their posting lists, and the per-slot arrays. */
export interface KeywordState {
  lexemes: LexemeState;
  postings: PostingState;
  /** Per slot up to the next one to add: its length normaliser (0 for a removed page). */
  norms: Float64Array;
  live: Uint8Array;
}

export class KeywordIndex {
  private lexemes = new LexemeTable();
  /** Per lexeme id, its postings (posting-lists.ts): the list of id i is list i. */
  private lists = new PostingLists();
  /** Scratch of addTsvectorBytes(): the page's lexeme ids and term frequencies (holdTerm). */
  private pageIds = new Int32Array(256);
  private pageTfs = new Int32Array(256);
  /** Per slot, its page's length code (LONG): 2 bytes a page where its norm as a float64 took 8, and a live flag 1 more. */
  private lengths = new Uint16Array(1024);
  /** The norms of the live pages of LONG, by slot. */
  private longNorms = new Map<number, number>();
  /** Scratch of merge(): the query's lists decoded one after another, each ended by END (slots above any). */
  private listSlots = new Int32Array(1024);
  private listTfs = new Uint16Array(1024);
  /** Scratch of merge(): the shares of a window of slots, all 0 between calls. */
  private window = new Float64Array(WINDOW);
  /** Scratch of rank() and best(): the hits. */
  private hitSlots = new Int32Array(1024);
  private hitRanks = new Float64Array(1024);
  private nextSlot = 0;
  postings = 0;

  /** Slots indexed, removed ones too: the next page's slot is at least this. */
  get slots(): number {
    return this.nextSlot;
  }

  /** Indexes the page in `slot`, whose terms are distinct lexemes (as a tsvector's); slots must be added in increasing order. */
  add(slot: number, terms: readonly TermCount[]): void {
    this.startPage(slot);
    for (const { lexeme, tf } of terms) this.lists.append(this.idOf(lexeme, 0, lexeme.length), slot, tf);
    this.endPage(slot, terms.length);
  }

  /**
   * As add() with the page's tsvector in PostgreSQL's binary form (as `tsvectorsend` writes it:
   * the count of lexemes, then each lexeme's UTF-8 bytes, a zero byte, the count of its
   * positions and the positions, 16 bits each). A lexeme of ASCII is found from its bytes,
   * without a string. A malformed tsvector adds no posting.
   */
  addTsvectorBytes(slot: number, bytes: Uint8Array): void {
    this.startPage(slot);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const lexemes = bytes.length >= 4 ? view.getInt32(0) : -1;
    if (lexemes < 0) throw new Error('Truncated binary tsvector');
    let at = 4;
    for (let t = 0; t < lexemes; t++) {
      const start = at;
      let ascii = true;
      while (at < bytes.length && bytes[at] !== 0) if (bytes[at++] >= 0x80) ascii = false;
      if (at + 3 > bytes.length) throw new Error('Truncated binary tsvector');
      const id = ascii ? this.idOfAscii(bytes, start, at) : this.idOfUtf8(bytes, start, at);
      const positions = view.getUint16(at + 1);
      at += 3 + 2 * positions;
      // A lexeme stripped of its positions occurs once, as its text form without them reads.
      this.holdTerm(t, id, Math.max(1, positions));
    }
    if (at > bytes.length) throw new Error('Truncated binary tsvector');
    this.addHeldTerms(slot, lexemes);
  }

  /** Holds the page's `t`-th lexeme and its term frequency until the whole page has been read. */
  private holdTerm(t: number, id: number, tf: number): void {
    if (t === this.pageIds.length) {
      this.pageIds = grown(this.pageIds, t * 2);
      this.pageTfs = grown(this.pageTfs, t * 2);
    }
    this.pageIds[t] = id;
    this.pageTfs[t] = tf;
  }

  /** Adds the `count` held lexemes as the page in `slot`: a page read in full, never in part. */
  private addHeldTerms(slot: number, count: number): void {
    for (let t = 0; t < count; t++) this.lists.append(this.pageIds[t], slot, this.pageTfs[t]);
    this.endPage(slot, count);
  }

  /** The id of the lexeme text[start, end), with an empty list if it is new. */
  private idOf(text: string, start: number, end: number): number {
    return this.listed(this.lexemes.obtain(text, start, end));
  }

  /** The id of the ASCII lexeme whose bytes are bytes[start, end), with an empty list if it is new. */
  private idOfAscii(bytes: Uint8Array, start: number, end: number): number {
    return this.listed(this.lexemes.obtainAscii(bytes, start, end));
  }

  /** The id of the lexeme whose UTF-8 bytes are bytes[start, end), with an empty list if it is new. */
  private idOfUtf8(bytes: Uint8Array, start: number, end: number): number {
    const lexeme = Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8');
    return this.idOf(lexeme, 0, lexeme.length);
  }

  /** `id`, given an empty list if its lexeme is new. */
  private listed(id: number): number {
    if (id === this.lists.size) this.lists.addList();
    return id;
  }

  /** Packs the posting lists tight, once a workspace's load has ended (see PostingLists.trim). */
  trim(): void {
    this.lists.trim();
  }

  private startPage(slot: number): void {
    if (slot < this.nextSlot || slot >= MAX_SLOTS) throw new Error(`keyword index slot ${slot} out of order`);
    this.ensure(slot + 1);
  }

  private endPage(slot: number, distinctLexemes: number): void {
    this.nextSlot = slot + 1;
    this.setNorm(slot, lengthNorm(distinctLexemes), distinctLexemes);
    this.postings += distinctLexemes;
  }

  /** Sets the length code of the live page in `slot` of `distinctLexemes`, whose norm is `norm`. */
  private setNorm(slot: number, norm: number, distinctLexemes: number): void {
    // A page of no lexeme is never a hit, and a snapshot's norm is kept as it was read.
    const code = distinctLexemes > 0 && distinctLexemes < LONG && NORMS[distinctLexemes] === norm ? distinctLexemes : distinctLexemes === 0 ? 0 : LONG;
    this.lengths[slot] = code;
    if (code === LONG) this.longNorms.set(slot, norm);
    else this.longNorms.delete(slot);
  }

  /** The length normaliser of the page in `slot` of length code `code` (not 0). */
  private normOf(slot: number, code: number): number {
    return code === LONG ? this.longNorms.get(slot)! : NORMS[code];
  }

  /** Forgets the page in `slot`: its postings stay until compact() and are skipped. */
  remove(slot: number): void {
    this.lengths[slot] = 0;
    this.longNorms.delete(slot);
  }

  /**
   * The rank r of every live page holding a query lexeme that `accepts` lets through: its share
   * of the query's weight (merge()) made r by rankOfShare.
   */
  rank(query: readonly QueryTerm[], accepts: ((slot: number) => boolean) | null): KeywordHits {
    const count = this.merge(query);
    const { hitSlots, hitRanks } = this;
    let kept = 0;
    for (let h = 0; h < count; h++) {
      const slot = hitSlots[h];
      if (accepts === null || accepts(slot)) {
        hitSlots[kept] = slot;
        hitRanks[kept++] = rankOfShare(hitRanks[h]);
      }
    }
    return { slots: hitSlots.subarray(0, kept), ranks: hitRanks.subarray(0, kept) };
  }

  /**
   * The hits of rank() that may be among the k of highest rank: those whose share of the
   * query's weight is within a billionth of the k-th highest share (the rank grows with the
   * share; the margin leaves ties and rounding in the ranks to the caller's ranking). What a
   * search ranks by rank alone (alpha 0, or no query vector) needs only these.
   */
  best(query: readonly QueryTerm[], k: number, accepts: ((slot: number) => boolean) | null): KeywordHits {
    const count = this.merge(query);
    const { hitSlots, hitRanks } = this;
    const shares = new KthOfStream(k);
    // One pass: a share below the k-th best so far (less the margin) is below the cut; the
    // others are listed (behind the pass) for a second.
    let listed = 0;
    for (let h = 0; h < count; h++) {
      const share = hitRanks[h];
      if (share >= shares.floor * (1 - 1e-9) && (accepts === null || accepts(hitSlots[h]))) {
        shares.add(share);
        hitSlots[listed] = hitSlots[h];
        hitRanks[listed++] = share;
      }
    }
    const cut = kthLargest(shares.values(), k) * (1 - 1e-9);
    let kept = 0;
    for (let h = 0; h < listed; h++) {
      const share = hitRanks[h];
      if (share > 0 && share >= cut) {
        hitSlots[kept] = hitSlots[h];
        hitRanks[kept++] = rankOfShare(share);
      }
    }
    return { slots: hitSlots.subarray(0, kept), ranks: hitRanks.subarray(0, kept) };
  }

  /**
   * Each live page holding a query lexeme into hitSlots, and its share of the query's weight into
   * hitRanks, where each matched lexeme adds (weight / queryWeight) x tf x (K1 + 1) / (tf + K1 (1 -
   * B + B len / L)); returns how many. The query's lists are decoded, then added lexeme by lexeme in
   * the query's order (as rankOf() adds them: the same bits) a window of WINDOW slots at a time, so
   * that the shares and lengths a window reads stay in the core's cache: at a million pages,
   * adding each whole list in turn into shares by slot read 16 MB of shares and norms at random,
   * three times as slow.
   */
  private merge(query: readonly QueryTerm[]): number {
    const total = queryWeight(query);
    // Weights are positive idfs; a query of none matches nothing.
    if (!(total > 0)) return 0;
    const ids: number[] = [];
    const weights: number[] = [];
    let room = 0;
    for (const term of query) {
      const id = this.lexemes.find(term.lexeme);
      if (id < 0) continue;
      ids.push(id);
      weights.push(term.weight / total);
      room += this.lists.lengthOf(id) + 1;
    }
    if (room > this.listSlots.length) {
      this.listSlots = new Int32Array(Math.max(room, 2 * this.listSlots.length));
      this.listTfs = new Uint16Array(this.listSlots.length);
    }
    const { listSlots: slots, listTfs: tfs, lengths, hitSlots, hitRanks } = this;
    const lists = ids.length;
    const heads = new Int32Array(lists);
    let at = 0;
    for (let i = 0; i < lists; i++) {
      heads[i] = at;
      at = this.lists.decodeInto(ids[i], slots, tfs, at);
    }
    const gain = RANK.K1 + 1;
    const { window: acc, longNorms } = this;
    let count = 0;
    for (let base = 0; base < this.nextSlot; base += WINDOW) {
      const limit = base + WINDOW;
      const first = count;
      for (let i = 0; i < lists; i++) {
        const weight = weights[i];
        let head = heads[i];
        for (let slot = slots[head]; slot < limit; slot = slots[++head]) {
          const code = lengths[slot];
          if (code === 0) continue;
          const tf = tfs[head];
          const at = slot - base;
          if (acc[at] === 0) hitSlots[count++] = slot;
          acc[at] += (weight * tf * gain) / (tf + (code === LONG ? longNorms.get(slot)! : NORMS[code]));
        }
        heads[i] = head;
      }
      for (let h = first; h < count; h++) {
        const at = hitSlots[h] - base;
        hitRanks[h] = acc[at];
        acc[at] = 0;
      }
    }
    return count;
  }

  /** The rank r of one page: a search of each query lexeme's list, for filling in a few results. */
  rankOf(query: readonly QueryTerm[], slot: number): number {
    const { K1 } = RANK;
    const total = queryWeight(query);
    const code = this.lengths[slot];
    if (code === 0 || !(total > 0)) return 0;
    const norm = this.normOf(slot, code);
    let share = 0;
    for (const term of query) {
      const id = this.lexemes.find(term.lexeme);
      const tf = id < 0 ? 0 : this.lists.tfOf(id, slot);
      if (tf === 0) continue;
      share += ((term.weight / total) * tf * (K1 + 1)) / (tf + norm);
    }
    return rankOfShare(share);
  }

  /** Whether some live page holds every one of the lexemes (as a tsquery of them joined by & matches). */
  holdsAll(lexemes: readonly string[]): boolean {
    const ids: number[] = [];
    for (const lexeme of lexemes) {
      const id = this.lexemes.find(lexeme);
      if (id < 0) return false;
      ids.push(id);
    }
    if (ids.length === 0) return false;
    ids.sort((a, b) => this.lists.lengthOf(a) - this.lists.lengthOf(b));
    const [shortest, ...rest] = ids;
    const { slots, length } = this.lists.decode(shortest);
    for (let j = 0; j < length; j++) {
      const slot = slots[j];
      if (this.lengths[slot] !== 0 && rest.every((id) => this.lists.tfOf(id, slot) > 0)) return true;
    }
    return false;
  }

  /**
   * Renumbers slots after pages were removed: `remap[old]` is the new slot (increasing with
   * the old one) or -1 for a removed page, whose postings go, and with them lexemes no page
   * holds any more.
   */
  compact(remap: Int32Array, slots: number): void {
    const { lists, kept } = this.lists.compacted(remap);
    this.lists = lists;
    this.lexemes.retain(kept);
    this.postings = 0;
    for (let id = 0; id < lists.size; id++) this.postings += lists.lengthOf(id);
    const lengths = new Uint16Array(Math.max(1024, slots));
    const longNorms = new Map<number, number>();
    for (let old = 0; old < remap.length; old++) {
      const to = remap[old];
      if (to < 0) continue;
      lengths[to] = this.lengths[old];
      if (lengths[to] === LONG) longNorms.set(to, this.longNorms.get(old)!);
    }
    this.lengths = lengths;
    this.longNorms = longNorms;
    this.sizeScratch(lengths.length);
    this.nextSlot = slots;
  }

  /** The index as a snapshot keeps it, copied: removed pages' postings too (their slots are not live). */
  state(): KeywordState {
    const norms = new Float64Array(this.nextSlot);
    const live = new Uint8Array(this.nextSlot);
    for (let slot = 0; slot < this.nextSlot; slot++) {
      const code = this.lengths[slot];
      if (code === 0) continue;
      norms[slot] = this.normOf(slot, code);
      live[slot] = 1;
    }
    return { lexemes: this.lexemes.state(), postings: this.lists.state(), norms, live };
  }

  /** The index a snapshot kept, its lists packed as trim() leaves them. */
  static restored(state: KeywordState): KeywordIndex {
    const index = new KeywordIndex();
    const slots = state.norms.length;
    if (state.live.length !== slots || state.postings.lengths.length !== state.lexemes.lengths.length) throw new RangeError('a snapshot of the keyword index does not add up');
    index.lexemes = LexemeTable.restored(state.lexemes);
    index.lists = PostingLists.restored(state.postings, slots);
    for (let id = 0; id < index.lists.size; id++) index.postings += index.lists.lengthOf(id);
    index.ensure(Math.max(1024, slots));
    for (let slot = 0; slot < slots; slot++) if (state.live[slot] === 1) index.setNorm(slot, state.norms[slot], distinctLexemesOf(state.norms[slot]));
    index.nextSlot = slots;
    return index;
  }

  /** Bytes held by postings, lexemes and per-slot arrays (not counting the lexeme strings). */
  byteLength(): number {
    let bytes = this.lengths.byteLength + 16 * this.longNorms.size + this.lists.byteLength() + this.lexemes.byteLength();
    for (const scratch of [this.listSlots, this.listTfs, this.hitSlots, this.hitRanks]) bytes += scratch.byteLength;
    return bytes;
  }

  private ensure(slots: number): void {
    if (slots <= this.lengths.length) return;
    const size = Math.max(slots, this.lengths.length * 2);
    this.lengths = grown(this.lengths, size);
    this.sizeScratch(size);
  }

  private sizeScratch(slots: number): void {
    this.hitSlots = new Int32Array(slots);
    this.hitRanks = new Float64Array(slots);
  }
}
