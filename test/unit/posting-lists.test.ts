import { describe, expect, it } from 'vitest';
import { END, PostingLists } from '../../src/search/posting-lists.js';

/** A deterministic random source (LCG), so a failure reproduces. */
function randomSource(seed: number): (n: number) => number {
  let state = seed;
  return (n) => (state = (state * 1103515245 + 12345) % 2 ** 31) % n;
}

interface Reference {
  slots: number[];
  tfs: number[];
}

/** Lists of every kind: dense and sparse, gaps needing 1 to 4 varint bytes, term frequencies past 256, appended in turn so that lists move and the arena packs. */
function build(seed: number, lists = 40, rounds = 400, widest = 3_000_000): { postings: PostingLists; reference: Reference[] } {
  const random = randomSource(seed);
  const postings = new PostingLists();
  const reference: Reference[] = [];
  const gaps = [1, 2, 60, 70, 9000, 20000, widest];
  for (let id = 0; id < lists; id++) {
    expect(postings.addList()).toBe(id);
    reference.push({ slots: [], tfs: [] });
  }
  const next = new Array<number>(lists).fill(0);
  for (let round = 0; round < rounds; round++) {
    for (let id = 0; id < lists; id++) {
      // List i keeps to gaps of one size class, except for an occasional jump.
      if (random(3) === 0 && id % 3 === 0) continue;
      const gap = random(10) === 0 ? gaps[random(gaps.length)] : gaps[id % gaps.length] === widest ? 1 + random(40_000) : 1 + random(gaps[id % gaps.length]);
      const slot = next[id] + gap - 1;
      if (slot >= 2 ** 24) continue;
      next[id] = slot + 1;
      const tf = random(4) === 0 ? 2 + random(300) : 1;
      postings.append(id, slot, tf);
      reference[id].slots.push(slot);
      reference[id].tfs.push(Math.min(tf, 256));
    }
  }
  return { postings, reference };
}

function expectHolds(postings: PostingLists, reference: Reference[]): void {
  expect(postings.size).toBe(reference.length);
  reference.forEach(({ slots, tfs }, id) => {
    const decoded = postings.decode(id);
    expect(decoded.length).toBe(slots.length);
    expect(postings.lengthOf(id)).toBe(slots.length);
    expect(Array.from(decoded.slots.subarray(0, decoded.length))).toEqual(slots);
    expect(Array.from(decoded.tfs.subarray(0, decoded.length))).toEqual(tfs);
  });
}

describe('PostingLists', () => {
  it('gives back every posting through appends that move lists and pack the arena, blocks and varints of every length', () => {
    const { postings, reference } = build(11);
    expect(reference.some((r) => r.slots.length > 300)).toBe(true);
    expectHolds(postings, reference);
    postings.trim();
    expectHolds(postings, reference);
  });

  it('finds any slot by hopping blocks: its term frequency where held, 0 before, between and after', () => {
    const { postings, reference } = build(12);
    const random = randomSource(5);
    reference.forEach(({ slots, tfs }, id) => {
      slots.forEach((slot, j) => expect(postings.tfOf(id, slot)).toBe(tfs[j]));
      const held = new Set(slots);
      for (let probe = 0; probe < 200; probe++) {
        const slot = random(slots.length > 0 ? slots[slots.length - 1] + 10 : 100);
        expect(postings.tfOf(id, slot)).toBe(held.has(slot) ? tfs[slots.indexOf(slot)] : 0);
      }
      expect(postings.tfOf(id, 2 ** 24 - 1)).toBe(held.has(2 ** 24 - 1) ? tfs[slots.indexOf(2 ** 24 - 1)] : 0);
    });
  });

  it('decodes lists one after another into given arrays, each ended by END', () => {
    const { postings, reference } = build(13, 6, 300, 20000);
    const room = reference.reduce((sum, r) => sum + r.slots.length + 1, 3);
    const slots = new Int32Array(room).fill(-7);
    const tfs = new Uint16Array(room);
    let at = 3;
    for (const id of [4, 0, 5, 1, 3, 2]) {
      const end = postings.decodeInto(id, slots, tfs, at);
      const { slots: want, tfs: wantTfs } = reference[id];
      expect(end).toBe(at + want.length + 1);
      expect(Array.from(slots.subarray(at, end - 1))).toEqual(want);
      expect(Array.from(tfs.subarray(at, end - 1))).toEqual(wantTfs);
      expect(slots[end - 1]).toBe(END);
      at = end;
    }
    // Nothing before `at` is written.
    expect(Array.from(slots.subarray(0, 3))).toEqual([-7, -7, -7]);
  });

  it('keeps a dense list at about a byte a posting', () => {
    const postings = new PostingLists();
    postings.addList();
    for (let slot = 0; slot < 100_000; slot += 1 + (slot % 3)) postings.append(0, slot, 1);
    postings.trim();
    const { bytes } = postings.state();
    expect(bytes.length / postings.lengthOf(0)).toBeLessThan(1.05);
  });

  it('refuses a posting out of order', () => {
    const postings = new PostingLists();
    postings.addList();
    postings.append(0, 5, 1);
    expect(() => postings.append(0, 5, 2)).toThrow(/out of order/);
    expect(() => postings.append(0, 4, 1)).toThrow(/out of order/);
  });

  it('restores its state, and grows from there as the original does, across the open block', () => {
    for (const length of [1, 127, 128, 129, 256, 300]) {
      const postings = new PostingLists();
      postings.addList();
      postings.addList();
      for (let i = 0; i < length; i++) postings.append(0, 3 * i, 1 + (i % 3));
      const restored = PostingLists.restored(postings.state(), 3 * length);
      for (let i = length; i < length + 200; i++) {
        postings.append(0, 3 * i, 1 + (i % 3));
        restored.append(0, 3 * i, 1 + (i % 3));
      }
      restored.append(1, 7, 1);
      postings.append(1, 7, 1);
      expect(restored.state()).toEqual(postings.state());
      expect(restored.tfOf(0, 3 * (length + 199))).toBe(1 + ((length + 199) % 3));
    }
  });

  it('refuses a damaged state: bytes over or missing, a slot beyond the pages or out of order, a malformed block', () => {
    const { postings } = build(14, 4, 300);
    const state = postings.state();
    const slots = 1 + Math.max(...Array.from({ length: 4 }, (_, id) => postings.decode(id).slots[postings.lengthOf(id) - 1]));
    expect(() => PostingLists.restored(state, slots)).not.toThrow();
    expect(() => PostingLists.restored(state, slots - 1)).toThrow(/beyond its pages/);
    expect(() => PostingLists.restored({ lengths: state.lengths, bytes: state.bytes.subarray(0, state.bytes.length - 1) }, slots)).toThrow();
    expect(() => PostingLists.restored({ lengths: state.lengths, bytes: Uint8Array.from([...state.bytes, 0]) }, slots)).toThrow(/bytes over/);

    // Two lists of one block each, the second block's first slot below the first's last.
    const two = new PostingLists();
    two.addList();
    for (let i = 0; i < 129; i++) two.append(0, 1000 + i, 1);
    const { bytes } = two.state();
    const firstBlock = 2 + (bytes[0] | (bytes[1] << 8));
    const swapped = Uint8Array.from([...bytes.subarray(firstBlock), ...bytes.subarray(0, firstBlock)]);
    expect(() => PostingLists.restored({ lengths: Int32Array.of(bytes.length), bytes: swapped }, 2000)).toThrow(/out of order/);

    // A varint whose last byte says more follows, at the end of its block.
    const malformed = Uint8Array.of(1, 0, 0x81);
    expect(() => PostingLists.restored({ lengths: Int32Array.of(3), bytes: malformed }, 2000)).toThrow(/malformed/);
    // A block that says it is longer than its list.
    expect(() => PostingLists.restored({ lengths: Int32Array.of(3), bytes: Uint8Array.of(9, 0, 2) }, 2000)).toThrow(/beyond its list/);
  });

  it('compacts: slots renumbered, dropped postings and emptied lists gone, the ids kept in order', () => {
    const { postings, reference } = build(15, 8, 200, 20000);
    const slots = 1 + Math.max(...reference.flatMap((r) => r.slots));
    const remap = new Int32Array(slots).fill(-1);
    let next = 0;
    for (let slot = 0; slot < slots; slot++) if (slot % 4 !== 1) remap[slot] = next++;
    // List 0 loses every posting.
    reference[0].slots.forEach((slot) => (remap[slot] = -1));
    next = 0;
    for (let slot = 0; slot < slots; slot++) if (remap[slot] >= 0) remap[slot] = next++;
    const { lists, kept } = postings.compacted(remap);
    const want = reference
      .map(({ slots: held, tfs }) => {
        const j = held.map((_, i) => i).filter((i) => remap[held[i]] >= 0);
        return { slots: j.map((i) => remap[held[i]]), tfs: j.map((i) => tfs[i]) };
      })
      .map((r, id) => ({ ...r, id }))
      .filter((r) => r.slots.length > 0);
    expect(kept).toEqual(want.map((r) => r.id));
    expectHolds(lists, want);
  });
});
