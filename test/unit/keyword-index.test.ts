// The keyword index against PostgreSQL's own reading of the stored tsvectors: the parsed
// text form gives the lexemes and position counts that unnest(tsv) gives, and ranks follow
// the formula of docs/internals/search.md, whatever pages come and go.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeywordIndex, priorIdf, RANK, rankOfShare, type QueryTerm } from '../../src/search/keyword-index.js';
import { keywordScore } from '../../src/search/scores.js';
import { missingWordCount } from '../../src/text/word-weight.js';
import { parseTsvector, type TermCount } from '../../src/search/tsvector.js';
import { openTestStore, type TestStore } from '../helpers/stores.js';

const TEXTS = [
  "It's O'Brien's café: naïve résumé, the quick brown fox jumps over the lazy dog's back.",
  'Backslashes \\ and C:\\temp\\file paths, quotes "double" and \'single\', e-mail a.b@example.com, http://x.org/a?b=1',
  'Numbers 3.14 and 1e10, hyphen-ated words, UPPER lower MiXeD, repeated repeated repeated repeated words.',
  'ΑΒΓ Greek, Кириллица, 日本語のテキスト, emoji 😀 and tabs\tand\nnewlines',
  'word '.repeat(300),
  '',
];

describe('parseTsvector', () => {
  /** Quotes, backslashes, weights and a lexeme without positions, as tsvector input. */
  const literal = `'a''b':1A,2 'c\\\\d':3B 'plain' 'x y':4,5C,6D`;
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore('pglite');
  });
  afterAll(async () => {
    await store.close();
  });

  async function postgresReading(tsv: string): Promise<TermCount[]> {
    const rows = (
      await sql<{ lexeme: string; tf: number | null }>`
        SELECT lexeme, array_length(positions, 1) AS tf FROM unnest(${tsv}::tsvector) ORDER BY lexeme COLLATE "C"
      `.execute(store.db)
    ).rows;
    return rows.map((r) => ({ lexeme: r.lexeme, tf: r.tf ?? 1 }));
  }

  it('reads every lexeme and position count as PostgreSQL does', async () => {
    for (const text of TEXTS) {
      const { tsv } = (await sql<{ tsv: string }>`SELECT to_tsvector('english', ${text})::text AS tsv`.execute(store.db)).rows[0];
      const parsed = parseTsvector(tsv).sort((a, b) => (a.lexeme < b.lexeme ? -1 : a.lexeme > b.lexeme ? 1 : 0));
      expect(parsed).toEqual(await postgresReading(tsv));
    }
  });

  it('reads quotes, backslashes, weights and lexemes without positions', async () => {
    const { tsv } = (await sql<{ tsv: string }>`SELECT ${literal}::tsvector::text AS tsv`.execute(store.db)).rows[0];
    expect(parseTsvector(tsv)).toEqual([
      { lexeme: "a'b", tf: 2 },
      { lexeme: 'c\\d', tf: 1 },
      { lexeme: 'plain', tf: 1 },
      { lexeme: 'x y', tf: 3 },
    ]);
    expect(parseTsvector(tsv)).toEqual(await postgresReading(tsv));
  });

  it('refuses text that is not a tsvector', () => {
    expect(() => parseTsvector('abc')).toThrow(/Unexpected character/);
    expect(() => parseTsvector("'abc")).toThrow(/Unterminated/);
  });

  /** The text forms of PostgreSQL's tsvectors of TEXTS and of `literal`. */
  async function storedTsvectors(): Promise<string[]> {
    return [
      ...(await Promise.all(TEXTS.map(async (text) => (await sql<{ tsv: string }>`SELECT to_tsvector('english', ${text})::text AS tsv`.execute(store.db)).rows[0].tsv))),
      (await sql<{ tsv: string }>`SELECT ${literal}::tsvector::text AS tsv`.execute(store.db)).rows[0].tsv,
    ];
  }

  /** Checks that both indexes hold the same postings and rank every lexeme of `tsvs` alike; returns those lexemes. */
  function expectSameRanks(expected: KeywordIndex, actual: KeywordIndex, tsvs: string[]): Set<string> {
    expect(actual.postings).toBe(expected.postings);
    const lexemes = new Set(tsvs.flatMap((tsv) => parseTsvector(tsv).map((t) => t.lexeme)));
    for (const lexeme of [...lexemes, 'absent']) {
      const query = [{ lexeme, weight: 1 }];
      const [a, b] = [expected.rank(query, null), actual.rank(query, null)].map((hits) => Array.from(hits.slots, (slot, i) => [slot, hits.ranks[i]]));
      expect(b).toEqual(a);
      expect(a.length > 0).toBe(lexeme !== 'absent');
    }
    return lexemes;
  }

  it('indexes from the binary form (addTsvectorBytes) exactly what add() indexes from the text form read by parseTsvector', async () => {
    const tsvs = [
      ...(await storedTsvectors()),
      (await sql<{ tsv: string }>`SELECT strip(to_tsvector('english', ${TEXTS[0]}))::text AS tsv`.execute(store.db)).rows[0].tsv,
    ];
    const fromText = new KeywordIndex();
    const fromBinary = new KeywordIndex();
    for (const [slot, tsv] of tsvs.entries()) {
      fromText.add(slot, parseTsvector(tsv));
      const binary = (await sql<{ binary: Buffer }>`SELECT tsvectorsend(${tsv}::tsvector) AS binary`.execute(store.db)).rows[0].binary;
      // A view in the middle of a larger buffer, as a batch of a load gives it.
      const framed = new Uint8Array(binary.length + 8);
      framed.set(binary, 3);
      fromBinary.addTsvectorBytes(slot, framed.subarray(3, 3 + binary.length));
    }
    const lexemes = expectSameRanks(fromText, fromBinary, tsvs);
    expect(lexemes.size).toBeGreaterThan(40);
    expect([...lexemes].some((lexeme) => [...lexeme].some((c) => c.charCodeAt(0) > 0x7f))).toBe(true);
  });

  it('adds nothing from a truncated binary tsvector, and takes the slot afterwards', async () => {
    const binary = (await sql<{ binary: Buffer }>`SELECT tsvectorsend('fox:1,2 dog:3'::tsvector) AS binary`.execute(store.db)).rows[0].binary;
    const index = new KeywordIndex();
    for (const cut of [2, 6, binary.length - 1]) expect(() => index.addTsvectorBytes(0, binary.subarray(0, cut))).toThrow(/Truncated/);
    expect(index.postings).toBe(0);
    index.addTsvectorBytes(0, binary);
    expect(Array.from(index.rank([{ lexeme: 'fox', weight: 1 }], null).slots)).toEqual([0]);
    expect(index.postings).toBe(2);
  });
});

/** The page's BM25-shaped sum over the query's lexemes, as a share of the query's weight (docs/internals/search.md). */
function referenceShare(query: QueryTerm[], page: TermCount[]): number {
  const { K1, B, L } = RANK;
  const total = query.reduce((sum, t) => sum + t.weight, 0);
  let share = 0;
  for (const term of query) {
    const hit = page.find((t) => t.lexeme === term.lexeme);
    if (hit) share += ((term.weight / total) * hit.tf * (K1 + 1)) / (hit.tf + K1 * (1 - B + (B * page.length) / L));
  }
  return share;
}

/** r of a page with the given counts, straight from the formula of docs/internals/search.md. */
function referenceRank(query: QueryTerm[], page: TermCount[]): number {
  const share = referenceShare(query, page);
  return share > 0 ? (RANK.SCALE * share) ** RANK.POWER : 0;
}

function page(spec: string): TermCount[] {
  return spec.split(' ').map((w) => {
    const [lexeme, tf] = w.split(':');
    return { lexeme, tf: Number(tf ?? 1) };
  });
}

describe('KeywordIndex', () => {
  const query: QueryTerm[] = [
    { lexeme: 'fox', weight: priorIdf('fox', 120) },
    { lexeme: 'dog', weight: 2 * priorIdf('dog', 5000) },
    { lexeme: 'zyzzyva', weight: priorIdf('zyzzyva', null) },
  ];
  const pages = [page('fox:3 dog cat'), page('cat mouse'), page('dog:7 bird fish fox'), page('zyzzyva fox:256 a b c d e f g h')];

  it('ranks every page holding a query lexeme by the formula of docs/internals/search.md, and only those', () => {
    const index = new KeywordIndex();
    pages.forEach((p, slot) => index.add(slot, p));
    const hits = index.rank(query, null);
    const bySlot = new Map(Array.from(hits.slots, (s, i) => [s, hits.ranks[i]]));
    expect([...bySlot.keys()].sort()).toEqual([0, 2, 3]);
    for (const [slot, r] of bySlot) {
      expect(r).toBeCloseTo(referenceRank(query, pages[slot]), 12);
      expect(index.rankOf(query, slot)).toBeCloseTo(r, 12);
    }
    expect(index.rankOf(query, 1)).toBe(0);
    expect(priorIdf('zyzzyva', null)).toBe(Math.log(1 + RANK.PRIOR_MASS / missingWordCount('zyzzyva')));
  });

  it('knows whether some live page holds all of a set of lexemes, before and after compaction', () => {
    const index = new KeywordIndex();
    // w<i> is on page i only; 'a' on even pages, 'b' on pages divisible by 3, 'c' on page 7.
    for (let slot = 0; slot < 1000; slot++) {
      const words = [`w${slot}`, ...(slot % 2 === 0 ? ['a'] : []), ...(slot % 3 === 0 ? ['b'] : []), ...(slot === 7 ? ['c'] : [])];
      index.add(slot, page(words.join(' ')));
    }
    expect(index.holdsAll(['a'])).toBe(true);
    expect(index.holdsAll(['a', 'b'])).toBe(true);
    expect(index.holdsAll(['w6', 'a', 'b'])).toBe(true);
    expect(index.holdsAll(['w7', 'a'])).toBe(false);
    expect(index.holdsAll(['c', 'a'])).toBe(false);
    expect(index.holdsAll(['c', 'w7'])).toBe(true);
    expect(index.holdsAll(['a', 'nowhere'])).toBe(false);
    expect(index.holdsAll([])).toBe(false);

    // Pages 0, 6, 12, ... go: 'a' and 'b' still meet on no page then.
    const remap = new Int32Array(1000).fill(-1);
    let next = 0;
    for (let slot = 0; slot < 1000; slot++) {
      if (slot % 6 === 0) index.remove(slot);
      else remap[slot] = next++;
    }
    expect(index.holdsAll(['a', 'b'])).toBe(false);
    expect(index.holdsAll(['w6'])).toBe(false);
    expect(index.holdsAll(['a', 'w8'])).toBe(true);
    index.compact(remap, next);
    expect(index.holdsAll(['a', 'b'])).toBe(false);
    expect(index.holdsAll(['c', 'w7'])).toBe(true);
    index.add(next, page('a b'));
    expect(index.holdsAll(['a', 'b'])).toBe(true);
  });

  it('ranks and grows alike once restored from its state (a snapshot), lexemes of any script included', () => {
    const words = ['café', 'naïve', 'кириллица', '日本語', 'fox', 'dog', 'a', 'b'];
    const build = () => {
      const index = new KeywordIndex();
      for (let slot = 0; slot < 600; slot++) index.add(slot, page(words.filter((_, w) => (slot + w) % (w + 2) === 0).map((w, i) => `${w}:${1 + ((slot + i) % 4)}`).join(' ') || 'empty'));
      for (let slot = 0; slot < 600; slot += 5) index.remove(slot);
      return index;
    };
    const original = build();
    const restored = KeywordIndex.restored(original.state());
    expect(restored.slots).toBe(original.slots);
    expect(restored.postings).toBe(original.postings);
    const ranked = (index: KeywordIndex) => {
      const hits = index.rank(words.map((lexeme, i) => ({ lexeme, weight: 1 + i })), null);
      return Array.from(hits.slots, (slot, i) => [slot, hits.ranks[i]]).sort((x, y) => x[0] - y[0]);
    };
    expect(ranked(restored)).toEqual(ranked(original));
    expect(restored.holdsAll(['café', '日本語'])).toBe(original.holdsAll(['café', '日本語']));
    // New pages, with lexemes new to both, on both.
    for (const index of [original, restored]) {
      index.add(600, page('café:2 zebra кириллица'));
      index.add(601, page('新しい fox'));
    }
    expect(ranked(restored)).toEqual(ranked(original));
    expect(restored.holdsAll(['новый'])).toBe(false);
    expect(restored.holdsAll(['新しい', 'fox'])).toBe(true);
  });

  it('scores a page of more distinct lexemes than its length code holds (65,534) by its own norm, through removal, compaction and a snapshot', () => {
    const long = [{ lexeme: 'fox', tf: 2 }, ...Array.from({ length: 70_000 }, (_, i) => ({ lexeme: `x${i}`, tf: 1 }))];
    const index = new KeywordIndex();
    index.add(0, page('fox dog'));
    index.add(1, long);
    index.add(2, page('fox:3 cat'));
    const expectRanks = (of: KeywordIndex, slots: number[], pageAt: (slot: number) => TermCount[]) => {
      const hits = of.rank(query, null);
      expect(Array.from(hits.slots)).toEqual(slots);
      slots.forEach((slot, i) => {
        expect(hits.ranks[i]).toBeCloseTo(referenceRank(query, pageAt(slot)), 12);
        expect(of.rankOf(query, slot)).toBe(hits.ranks[i]);
      });
    };
    const pagesOf = [page('fox dog'), long, page('fox:3 cat')];
    expectRanks(index, [0, 1, 2], (slot) => pagesOf[slot]);
    expectRanks(KeywordIndex.restored(index.state()), [0, 1, 2], (slot) => pagesOf[slot]);
    index.remove(0);
    expectRanks(index, [1, 2], (slot) => pagesOf[slot]);
    index.compact(Int32Array.from([-1, 0, 1]), 2);
    expectRanks(index, [0, 1], (slot) => pagesOf[slot + 1]);
    // A snapshot's norm that no length makes is kept as it was read.
    const state = index.state();
    state.norms[1] = 5.5;
    const share = ((query[0].weight / (query[0].weight + query[1].weight + query[2].weight)) * 3 * (RANK.K1 + 1)) / (3 + 5.5);
    expect(KeywordIndex.restored(state).rankOf(query, 1)).toBeCloseTo(rankOfShare(share), 12);
  });

  it('scores absolutely: keyword_score is in [0, 1), 0 without a match, monotone in the raw rank, and a page\'s share of its query alone', () => {
    // The transform from a page's share of the query's weight: 0 for none, strictly rising, below 1 at the largest share (K1 + 1).
    expect(keywordScore(rankOfShare(0))).toBe(0);
    let previous = 0;
    for (let i = 1; i <= 1000; i++) {
      const share = (i / 1000) * (RANK.K1 + 1);
      expect(rankOfShare(share)).toBeCloseTo((RANK.SCALE * share) ** RANK.POWER, 12);
      const score = keywordScore(rankOfShare(share));
      expect(score).toBeGreaterThan(previous);
      previous = score;
    }
    expect(previous).toBeLessThan(1);
    // A page with every query lexeme 256 times, and short: the largest share there is.
    const index = new KeywordIndex();
    index.add(0, page('fox:256 dog:256'));
    const most = keywordScore(index.rankOf([{ lexeme: 'fox', weight: 3 }, { lexeme: 'dog', weight: 1 }], 0));
    expect(most).toBeGreaterThan(0.5);
    expect(most).toBeLessThan(1);

    // Within a query, r orders pages as their raw BM25-shaped sums do.
    const varied = Array.from({ length: 200 }, (_, i) => page(`fox:${1 + (i % 9)} dog:${1 + (i % 4)} w${i % 13} other`));
    varied.forEach((p, i) => index.add(i + 1, p));
    const hits = index.rank(query, null);
    const ranked = Array.from(hits.slots, (slot, i) => ({ r: hits.ranks[i], share: slot === 0 ? Infinity : referenceShare(query, varied[slot - 1]) }))
      .filter((x) => x.share < Infinity)
      .sort((a, b) => a.share - b.share);
    expect(ranked.length).toBe(200);
    for (let i = 1; i < ranked.length; i++) {
      if (ranked[i].share > ranked[i - 1].share + 1e-12) expect(ranked[i].r).toBeGreaterThan(ranked[i - 1].r);
    }

    // Absolute: a page's rank is the same with other pages around, those holding the query's
    // lexemes many times included, and before and after any of them come and go. The query's
    // weight counts its lexemes no page holds ('zyzzyva' below), so their arrival changes nothing either.
    const alone = new KeywordIndex();
    alone.add(0, page('fox:3 dog cat'));
    const q: QueryTerm[] = [...query, { lexeme: 'quokka', weight: priorIdf('quokka', null) }];
    const r0 = alone.rankOf(q, 0);
    const crowded = new KeywordIndex();
    crowded.add(0, page('fox:3 dog cat'));
    for (let slot = 1; slot < 300; slot++) crowded.add(slot, page(slot % 2 ? 'fox:200 dog:200 zyzzyva:50' : 'cat mouse'));
    expect(crowded.rankOf(q, 0)).toBe(r0);
    crowded.add(300, page('quokka:9 fox'));
    for (let slot = 1; slot < 300; slot += 3) crowded.remove(slot);
    expect(crowded.rankOf(q, 0)).toBe(r0);
    const found = crowded.rank(q, null);
    expect(found.ranks[Array.from(found.slots).indexOf(0)]).toBe(r0);

    // A page holding every lexeme of a query of equal weights, once each, scores the same
    // whether the query has one lexeme or four: the rank is a share of the query, as a cosine is.
    const both = new KeywordIndex();
    both.add(0, page('a b c d e f g h'));
    const equal = (n: number) => ['a', 'b', 'c', 'd'].slice(0, n).map((lexeme) => ({ lexeme, weight: 7 }));
    expect(both.rankOf(equal(4), 0)).toBeCloseTo(both.rankOf(equal(1), 0), 12);
    expect(both.rankOf(equal(4), 0)).toBeCloseTo(referenceRank(equal(4), page('a b c d e f g h')), 12);
  });

  it('never lowers a rank when a term occurs more often at equal length', () => {
    const index = new KeywordIndex();
    for (let tf = 1; tf <= 256; tf++) index.add(tf - 1, page(`fox:${tf} other words`));
    const hits = index.rank([{ lexeme: 'fox', weight: 5 }], null);
    const ranks = Array.from(hits.slots, (slot, i) => ({ slot, r: hits.ranks[i] })).sort((a, b) => a.slot - b.slot);
    for (let i = 1; i < ranks.length; i++) expect(ranks[i].r).toBeGreaterThan(ranks[i - 1].r);
  });

  it('applies the filter and forgets removed pages, before and after compaction', () => {
    const index = new KeywordIndex();
    const many = Array.from({ length: 3000 }, (_, i) => page(`fox:${1 + (i % 5)} w${i} v${i % 7}`));
    many.forEach((p, slot) => index.add(slot, p));
    const even = index.rank(query, (slot) => slot % 2 === 0);
    expect(even.slots.length).toBe(1500);
    expect(even.slots.every((s) => s % 2 === 0)).toBe(true);

    for (let slot = 0; slot < 3000; slot += 3) index.remove(slot);
    const live = index.rank(query, null);
    expect(live.slots.length).toBe(2000);
    expect(live.slots.every((s) => s % 3 !== 0)).toBe(true);

    const remap = new Int32Array(3000).fill(-1);
    let next = 0;
    for (let slot = 0; slot < 3000; slot++) if (slot % 3 !== 0) remap[slot] = next++;
    // Hits are views of the index's scratch: read them before the next rank().
    const old = new Map(Array.from(live.slots, (s, i) => [remap[s], live.ranks[i]]));
    index.compact(remap, next);
    expect(index.postings).toBe(2000 * 3);
    const after = index.rank(query, null);
    expect(after.slots.length).toBe(2000);
    after.slots.forEach((s, i) => expect(after.ranks[i]).toBe(old.get(s)));
    index.add(next, page('fox dog'));
    expect(index.rankOf(query, next)).toBeCloseTo(referenceRank(query, page('fox dog')), 12);
    // A lexeme new after compaction takes an id a dropped one had, and none of its postings.
    expect(Array.from(index.rank([{ lexeme: 'dog', weight: 1 }], null).slots)).toEqual([next]);
    expect(() => index.add(next - 1, page('fox'))).toThrow(/out of order/);
  });

  it('gives, of all its hits, those that can rank among the k best by rank: ties at the k-th included, filter and removals applied', () => {
    const index = new KeywordIndex();
    // Five ranks repeated over 5,000 pages (ties everywhere), words of three frequencies.
    const many = Array.from({ length: 5000 }, (_, i) => page(`fox:${1 + (i % 5)} w${i % 3} v${i % 11}${i % 4 === 0 ? ' dog:2' : ''}`));
    many.forEach((p, slot) => index.add(slot, p));
    for (let slot = 0; slot < 5000; slot += 7) index.remove(slot);
    const ranked = (hits: { slots: Int32Array; ranks: Float64Array }) =>
      Array.from(hits.slots, (slot, i) => ({ slot, r: hits.ranks[i] })).sort((a, b) => b.r - a.r || a.slot - b.slot);
    const before = ranked(index.rank(query, null));
    for (const accepts of [null, (slot: number) => slot % 2 === 0]) {
      for (const k of [1, 10, 400, 1000, 6000]) {
        const all = ranked(index.rank(query, accepts));
        const best = ranked(index.best(query, k, accepts));
        // The same k best (by rank, then the lower slot), with the same ranks.
        expect(best.slice(0, k)).toEqual(all.slice(0, k));
        // Nothing below the k-th rank, and all that ties with it.
        const kth = all[Math.min(k, all.length) - 1].r;
        expect(best.every((h) => h.r >= kth)).toBe(true);
        expect(best.length).toBe(all.filter((h) => h.r >= kth).length);
      }
    }
    // The scratch is clean after best(): a rank() that follows is as before.
    expect(ranked(index.rank(query, null))).toEqual(before);
    expect(index.best([], 10, null).slots.length).toBe(0);
  });

  it('gives the best hits of rank() over lexemes of prose-like frequencies, through appends and compaction', () => {
    // Lexemes of three frequencies as in prose: five common (in 50-90% of pages), a hundred of a
    // few percent, a thousand rare; pages of different lengths (their norms) and term frequencies.
    let seed = 11;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const pageOf = (slot: number, extra: TermCount[] = []): TermCount[] => {
      const terms: TermCount[] = [];
      for (let c = 0; c < 5; c++) if (random(10) < 5 + c) terms.push({ lexeme: `c${c}`, tf: 1 + random(3) });
      for (let m = 0; m < 100; m++) if (random(100) < 3) terms.push({ lexeme: `m${m}`, tf: 1 + random(2) });
      for (let r = 0; r < 3; r++) terms.push({ lexeme: `r${random(1000)}`, tf: 1 + random(4) });
      for (let f = random(60); f > 0; f--) terms.push({ lexeme: `f${slot}x${f}`, tf: 1 });
      return [...new Map([...terms, ...extra].map((t) => [t.lexeme, t])).values()];
    };
    const index = new KeywordIndex();
    let slots = 0;
    for (; slots < 24_000; slots++) index.add(slots, pageOf(slots));
    for (let slot = 0; slot < slots; slot += 13) index.remove(slot);
    const ranked = (hits: { slots: Int32Array; ranks: Float64Array }) =>
      Array.from(hits.slots, (slot, i) => ({ slot, r: hits.ranks[i] })).sort((a, b) => b.r - a.r || a.slot - b.slot);
    const check = () => {
      for (let q = 0; q < 15; q++) {
        // Two or three rare or middling lexemes (high weights) beside one of the commonest (a low
        // weight), in any order.
        const query: QueryTerm[] = [{ lexeme: `c${3 + random(2)}`, weight: 0.5 + random(300) / 100 }];
        for (let r = random(2) + 2; r > 0; r--) query.push(random(2) ? { lexeme: `r${random(1000)}`, weight: 6 + random(4) } : { lexeme: `m${random(100)}`, weight: 3 + random(3) });
        query.sort(() => random(3) - 1);
        const terms = [...new Map(query.map((t) => [t.lexeme, t])).values()];
        for (const accepts of [null, (slot: number) => slot % 3 !== 0]) {
          for (const k of [1, 50]) {
            const all = ranked(index.rank(terms, accepts));
            const best = ranked(index.best(terms, k, accepts));
            expect(best.slice(0, k)).toEqual(all.slice(0, k));
            const kth = all[Math.min(k, all.length) - 1].r;
            expect(best.length).toBe(all.filter((h) => h.r >= kth).length);
            // One page's rank, as a search completes it, is the same number.
            for (const h of best) expect(index.rankOf(terms, h.slot)).toBe(h.r);
          }
        }
      }
    };
    check();
    // Appends of pages that repeat a common lexeme, which then rank first.
    for (const end = slots + 3000; slots < end; slots++) index.add(slots, pageOf(slots, [{ lexeme: 'c4', tf: 256 }]));
    check();
    const remap = new Int32Array(slots).fill(-1);
    let next = 0;
    for (let slot = 0; slot < slots; slot++) if (slot % 13 !== 0) remap[slot] = next++;
    index.compact(remap, next);
    check();
  });

  it('ranks first the pages added since a query was last asked that now rank among the best', () => {
    const index = new KeywordIndex();
    const filler = (slot: number) => Array.from({ length: 30 }, (_, f) => ({ lexeme: `f${slot}x${f}`, tf: 1 }));
    let slots = 0;
    for (; slots < 25_000; slots++) index.add(slots, [slots % 125 === 0 ? { lexeme: 'rare', tf: 4 } : { lexeme: 'common', tf: 1 }, ...filler(slots)]);
    const query: QueryTerm[] = [
      { lexeme: 'rare', weight: 1 },
      { lexeme: 'common', weight: 1.2 },
    ];
    const top = (hits: { slots: Int32Array; ranks: Float64Array }) =>
      Array.from(hits.slots, (slot, i) => ({ slot, r: hits.ranks[i] }))
        .sort((a, b) => b.r - a.r || a.slot - b.slot)
        .slice(0, 10);
    // 'common' holds one occurrence a page: the pages of 'rare' rank first.
    const first = top(index.best(query, 10, null));
    expect(first).toEqual(top(index.rank(query, null)));
    expect(first.every((h) => h.slot % 125 === 0)).toBe(true);
    // Pages that repeat it outrank every page with 'rare'.
    const added: number[] = [];
    for (const end = slots + 10; slots < end; slots++) {
      index.add(slots, [{ lexeme: 'common', tf: 256 }, ...filler(slots)]);
      added.push(slots);
    }
    const best = top(index.best(query, 10, null));
    expect(best).toEqual(top(index.rank(query, null)));
    expect(best.map((h) => h.slot).sort((a, b) => a - b)).toEqual(added);
  });

  it('keeps every posting through lists moving, the arena packed and trimmed, and compaction', () => {
    // Lists of every length grow past many moves and packs; a trim midway, appends after it.
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const pages = Array.from({ length: 6000 }, (_, slot) =>
      page(`every:${1 + random(4)} w${slot % 50}:${1 + random(3)} r${random(3000)} own${slot}`),
    );
    const index = new KeywordIndex();
    let trimmed = 0;
    pages.forEach((p, slot) => {
      index.add(slot, p);
      if (slot === 3000) {
        const before = index.byteLength();
        index.trim();
        trimmed = before - index.byteLength();
      }
    });
    expect(trimmed).toBeGreaterThan(0);
    const expectRanks = (live: number[], slotOf: (i: number) => number) => {
      for (const lexeme of ['every', 'w0', 'w49', 'r17', 'r2999', 'own0', 'own2999', 'own5999']) {
        const q = [{ lexeme, weight: 1 }];
        const hits = index.rank(q, null);
        const got = new Map(Array.from(hits.slots, (s, i) => [s, hits.ranks[i]]));
        const want = live.filter((i) => pages[i].some((t) => t.lexeme === lexeme));
        expect([...got.keys()].sort((a, b) => a - b)).toEqual(want.map(slotOf));
        for (const i of want) expect(got.get(slotOf(i))).toBeCloseTo(referenceRank(q, pages[i]), 12);
      }
    };
    const all = pages.map((_, i) => i);
    expectRanks(all, (i) => i);
    expect(index.postings).toBe(pages.length * 4);

    for (let slot = 0; slot < 6000; slot += 2) index.remove(slot);
    const remap = new Int32Array(6000).fill(-1);
    all.filter((i) => i % 2 === 1).forEach((i, k) => (remap[i] = k));
    index.compact(remap, 3000);
    expect(index.postings).toBe(3000 * 4);
    expectRanks(all.filter((i) => i % 2 === 1), (i) => remap[i]);
  });
});
