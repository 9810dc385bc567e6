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

/**
 * best() tries to leave part of the query's lists unread where its longest list holds at least
 * this many postings and this share of all of them (measured in process at 300k pages: a rare
 * pair with a common word 2.8 -> 1.5 ms at p50; a pair of like lists gains nothing, and trying
 * cost them one list read twice).
 */
const PRUNE_MIN_POSTINGS = 20_000;
const PRUNE_SHARE = 2 / 3;

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
  /** Per slot up to the next one to add. */
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
  private norms = new Float64Array(1024);
  private live = new Uint8Array(1024);
  /**
   * Per lexeme id, the largest tf / (tf + norm) of its postings (a bound of what the lexeme adds
   * to a page's share, over its weight x (K1 + 1)), or 0 until best() first asks for it; kept
   * up to date by appends from then on (a removal leaves it a bound).
   */
  private ratioBounds = new Float64Array(1024);
  /** Scratch of rank(): the accumulator (all zeros between calls), the slots it touched, the hits. */
  private scratch = new Float64Array(1024);
  private touched = new Int32Array(1024);
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
    const norm = lengthNorm(terms.length);
    for (const { lexeme, tf } of terms) this.appendPosting(this.idOf(lexeme, 0, lexeme.length), slot, tf, norm);
    this.endPage(slot, terms.length);
  }

  private appendPosting(id: number, slot: number, tf: number, norm: number): void {
    this.lists.append(id, slot, tf);
    // The stored tf is capped as the list caps it (tfOf reads it back so); a larger one only widens the bound.
    if (this.ratioBounds[id] > 0) this.ratioBounds[id] = Math.max(this.ratioBounds[id], tf / (tf + norm));
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
    const norm = lengthNorm(count);
    for (let t = 0; t < count; t++) this.appendPosting(this.pageIds[t], slot, this.pageTfs[t], norm);
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
    if (id === this.lists.size) {
      this.lists.addList();
      if (id === this.ratioBounds.length) this.ratioBounds = grown(this.ratioBounds, 2 * id);
    }
    return id;
  }

  /** ratioBounds[id], read from the list at its first use. */
  private ratioBoundOf(id: number): number {
    if (this.ratioBounds[id] > 0) return this.ratioBounds[id];
    const { slots, tfs, length } = this.lists.decode(id);
    let bound = 0;
    for (let j = 0; j < length; j++) bound = Math.max(bound, tfs[j] / (tfs[j] + this.norms[slots[j]]));
    return (this.ratioBounds[id] = bound);
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
    this.norms[slot] = lengthNorm(distinctLexemes);
    this.live[slot] = 1;
    this.postings += distinctLexemes;
  }

  /** Forgets the page in `slot`: its postings stay until compact() and are skipped. */
  remove(slot: number): void {
    this.live[slot] = 0;
  }

  /**
   * The rank r of every live page holding a query lexeme that `accepts` lets through: its
   * share of the query's weight (accumulate()) made r by rankOfShare.
   */
  rank(query: readonly QueryTerm[], accepts: ((slot: number) => boolean) | null): KeywordHits {
    const count = this.accumulate(query);
    const acc = this.scratch;
    let kept = 0;
    for (let t = 0; t < count; t++) {
      const slot = this.touched[t];
      if (accepts === null || accepts(slot)) {
        this.hitSlots[kept] = slot;
        this.hitRanks[kept++] = rankOfShare(acc[slot]);
      }
      acc[slot] = 0;
    }
    return { slots: this.hitSlots.subarray(0, kept), ranks: this.hitRanks.subarray(0, kept) };
  }

  /**
   * The hits of rank() that may be among the k of highest rank: those whose share of the
   * query's weight is within a billionth of the k-th highest share (the rank grows with the
   * share; the margin leaves ties and rounding in the ranks to the caller's ranking). What a
   * search ranks by rank alone (alpha 0, or no query vector) needs only these.
   */
  best(query: readonly QueryTerm[], k: number, accepts: ((slot: number) => boolean) | null): KeywordHits {
    const pruned = this.bestPruned(query, k, accepts);
    if (pruned) return pruned;
    const count = this.accumulate(query);
    const acc = this.scratch;
    const { touched } = this;
    const shares = new KthOfStream(k);
    // One pass: a share below the k-th best so far (less the margin) is below the cut, and its
    // slot is cleared at once; the others are listed (in touched, behind the pass) for a second.
    let listed = 0;
    for (let t = 0; t < count; t++) {
      const slot = touched[t];
      const share = acc[slot];
      if ((accepts === null || accepts(slot)) && share >= shares.floor * (1 - 1e-9)) {
        shares.add(share);
        touched[listed++] = slot;
      } else {
        acc[slot] = 0;
      }
    }
    const cut = kthLargest(shares.values(), k) * (1 - 1e-9);
    let kept = 0;
    for (let t = 0; t < listed; t++) {
      const slot = touched[t];
      const share = acc[slot];
      if (share > 0 && share >= cut) {
        this.hitSlots[kept] = slot;
        this.hitRanks[kept++] = rankOfShare(share);
      }
      acc[slot] = 0;
    }
    return { slots: this.hitSlots.subarray(0, kept), ranks: this.hitRanks.subarray(0, kept) };
  }

  /**
   * best() by MaxScore (Turtle and Flood), where the query's lists hold enough postings to pay:
   * the lexemes are read in decreasing order of what each may add to a share (its weight x
   * (K1 + 1) x its ratio bound) until what the unread ones may add together is below the k-th
   * best share so far (shares only grow, so the k-th best at the end is no lower): a page none
   * of the read lists holds cannot reach the cut, nor one whose share so far plus that falls
   * below it. The pages left are scored again, each lexeme's list in the query's order as
   * accumulate() adds them (bit for bit the same shares), reading only the blocks that hold
   * them. Null, with the scratch clean, when the bound never falls low enough.
   */
  private bestPruned(query: readonly QueryTerm[], k: number, accepts: ((slot: number) => boolean) | null): KeywordHits | null {
    const total = queryWeight(query);
    if (!(total > 0)) return null;
    const gain = RANK.K1 + 1;
    const ids: number[] = [];
    const weights: number[] = [];
    let postings = 0;
    let longest = 0;
    for (const term of query) {
      const id = this.lexemes.find(term.lexeme);
      if (id < 0) continue;
      ids.push(id);
      weights.push(term.weight / total);
      postings += this.lists.lengthOf(id);
      longest = Math.max(longest, this.lists.lengthOf(id));
    }
    // What it may leave unread is a long list beside shorter ones: lists of one length (words
    // of like weights) are read in full whatever the order, so they are not tried.
    if (ids.length < 2 || longest < PRUNE_MIN_POSTINGS || longest < PRUNE_SHARE * postings) return null;
    const bounds = ids.map((id, i) => weights[i] * gain * this.ratioBoundOf(id));
    const order = ids.map((_, i) => i).sort((a, b) => bounds[b] - bounds[a] || a - b);
    const acc = this.scratch;
    const arrays = { gain, norms: this.norms, live: this.live, acc, touched: this.touched };
    let unread = bounds.reduce((sum, b) => sum + b, 0);
    let count = 0;
    // Rounding: the bounds summed and subtracted (reach), the shares added in another order (floor).
    let reach = Infinity;
    let floor = -Infinity;
    for (let read = 0; read < order.length - 1 && !(reach < floor); read++) {
      const i = order[read];
      count = this.lists.accumulate(ids[i], weights[i], arrays, count);
      unread -= bounds[i];
      reach = unread * (1 + 1e-12);
      floor = this.kthShare(count, k, accepts) * (1 - 1e-9);
    }
    const { touched } = this;
    if (!(reach < floor)) {
      for (let t = 0; t < count; t++) acc[touched[t]] = 0;
      return null;
    }
    let kept = 0;
    for (let t = 0; t < count; t++) {
      const slot = touched[t];
      if ((accepts === null || accepts(slot)) && acc[slot] + reach >= floor) touched[kept++] = slot;
      acc[slot] = 0;
    }
    const candidates = touched.subarray(0, kept).sort();
    for (let i = 0; i < ids.length; i++) this.lists.accumulateOnly(ids[i], weights[i], arrays, candidates);
    const cut = this.kthShare(kept, k, null) * (1 - 1e-9);
    let hits = 0;
    for (const slot of candidates) {
      const share = acc[slot];
      if (share > 0 && share >= cut) {
        this.hitSlots[hits] = slot;
        this.hitRanks[hits++] = rankOfShare(share);
      }
      acc[slot] = 0;
    }
    return { slots: this.hitSlots.subarray(0, hits), ranks: this.hitRanks.subarray(0, hits) };
  }

  /** The k-th largest share in scratch of the first `count` touched slots that `accepts` lets through (-Infinity for fewer). */
  private kthShare(count: number, k: number, accepts: ((slot: number) => boolean) | null): number {
    const shares = new KthOfStream(k);
    for (let t = 0; t < count; t++) {
      const slot = this.touched[t];
      if (accepts === null || accepts(slot)) shares.add(this.scratch[slot]);
    }
    return kthLargest(shares.values(), k);
  }

  /**
   * Each live page's share of the query's weight by term-at-a-time accumulation into scratch,
   * where each matched lexeme adds (weight / queryWeight) x tf x (K1 + 1) / (tf + K1 (1 - B + B
   * len / L)); returns how many pages it touched (listed first in `touched`).
   */
  private accumulate(query: readonly QueryTerm[]): number {
    const { K1 } = RANK;
    const arrays = { gain: K1 + 1, norms: this.norms, live: this.live, acc: this.scratch, touched: this.touched };
    const total = queryWeight(query);
    // Weights are positive idfs; a query of none matches nothing.
    if (!(total > 0)) return 0;
    let count = 0;
    for (const term of query) {
      const id = this.lexemes.find(term.lexeme);
      if (id >= 0) count = this.lists.accumulate(id, term.weight / total, arrays, count);
    }
    return count;
  }

  /** The rank r of one page: a search of each query lexeme's list, for filling in a few results. */
  rankOf(query: readonly QueryTerm[], slot: number): number {
    const { K1 } = RANK;
    const total = queryWeight(query);
    if (this.live[slot] === 0 || !(total > 0)) return 0;
    let share = 0;
    for (const term of query) {
      const id = this.lexemes.find(term.lexeme);
      const tf = id < 0 ? 0 : this.lists.tfOf(id, slot);
      if (tf === 0) continue;
      share += ((term.weight / total) * tf * (K1 + 1)) / (tf + this.norms[slot]);
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
      if (this.live[slot] === 1 && rest.every((id) => this.lists.tfOf(id, slot) > 0)) return true;
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
    this.ratioBounds = new Float64Array(Math.max(1024, lists.size));
    this.postings = 0;
    for (let id = 0; id < lists.size; id++) this.postings += lists.lengthOf(id);
    const norms = new Float64Array(Math.max(1024, slots));
    const live = new Uint8Array(norms.length);
    for (let old = 0; old < remap.length; old++) {
      const to = remap[old];
      if (to >= 0) {
        norms[to] = this.norms[old];
        live[to] = 1;
      }
    }
    this.norms = norms;
    this.live = live;
    this.sizeScratch(norms.length);
    this.nextSlot = slots;
  }

  /** The index as a snapshot keeps it, copied: removed pages' postings too (their slots are not live). */
  state(): KeywordState {
    return { lexemes: this.lexemes.state(), postings: this.lists.state(), norms: this.norms.slice(0, this.nextSlot), live: this.live.slice(0, this.nextSlot) };
  }

  /** The index a snapshot kept, its lists packed as trim() leaves them. */
  static restored(state: KeywordState): KeywordIndex {
    const index = new KeywordIndex();
    const slots = state.norms.length;
    if (state.live.length !== slots || state.postings.lengths.length !== state.lexemes.lengths.length) throw new RangeError('a snapshot of the keyword index does not add up');
    index.lexemes = LexemeTable.restored(state.lexemes);
    index.lists = PostingLists.restored(state.postings, slots);
    index.ratioBounds = new Float64Array(Math.max(1024, index.lists.size));
    for (let id = 0; id < index.lists.size; id++) index.postings += index.lists.lengthOf(id);
    index.ensure(Math.max(1024, slots));
    index.norms.set(state.norms);
    index.live.set(state.live);
    index.nextSlot = slots;
    return index;
  }

  /** Bytes held by postings, lexemes and per-slot arrays (not counting the lexeme strings). */
  byteLength(): number {
    let bytes = this.norms.byteLength + this.live.byteLength + this.lists.byteLength() + this.lexemes.byteLength();
    for (const scratch of [this.scratch, this.touched, this.hitSlots, this.hitRanks]) bytes += scratch.byteLength;
    return bytes;
  }

  private ensure(slots: number): void {
    if (slots <= this.norms.length) return;
    const size = Math.max(slots, this.norms.length * 2);
    const norms = new Float64Array(size);
    norms.set(this.norms);
    const live = new Uint8Array(size);
    live.set(this.live);
    this.norms = norms;
    this.live = live;
    this.sizeScratch(size);
  }

  private sizeScratch(slots: number): void {
    this.scratch = new Float64Array(slots);
    this.touched = new Int32Array(slots);
    this.hitSlots = new Int32Array(slots);
    this.hitRanks = new Float64Array(slots);
  }
}
