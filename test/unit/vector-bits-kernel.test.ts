// The first level's blocked layout (scan.wat: 32 rows interleaved per group of 4 dimensions,
// the query a table per group): every way of scanning it (a scan split into parts, a shared
// pass of several queries, given rows in any order) gives each row the estimate of the plain
// JS reference, bitEstimate(), for random rows and queries, row counts that are not a multiple
// of the block, and rows moved, truncated and restored from the matrix's bytes.
import { afterAll, describe, expect, it } from 'vitest';
import { BIT_BLOCK } from '../../src/search/kernel/matrix.js';
import { ScanPool, VectorMatrix } from '../../src/search/kernel/index.js';
import { bitEstimate, codeSpace, encodeBitQuery, type CodeSpace } from '../../src/store/vector-codes.js';

/** A random row of bits as bitRow() lays it out: bits only within the padded dimensions, then random factors. */
function randomBitRow(space: CodeSpace): Uint8Array {
  const row = new Uint8Array(space.bitRowBytes);
  crypto.getRandomValues(row.subarray(0, space.padded / 8));
  if (space.padded % 8 !== 0) row[space.padded >> 3] = crypto.getRandomValues(new Uint8Array(1))[0] & ((1 << space.padded % 8) - 1);
  let set = 0;
  for (let i = 0; i < space.padded; i++) set += (row[i >> 3] >> (i & 7)) & 1;
  // A unit row's factor |y|²/<s, y> is 1/(a sqrt(D)).
  const a = 0.6 + 0.3 * Math.random();
  const view = new DataView(row.buffer);
  view.setFloat32(space.bitBytes, 1 / (a * Math.sqrt(space.padded)), true);
  view.setInt32(space.bitBytes + 4, set, true);
  view.setFloat32(space.bitBytes + 8, a, true);
  return row;
}

function randomQuery(dims: number): Float32Array {
  const q = Float32Array.from({ length: dims }, () => Math.random() - 0.5);
  const norm = Math.hypot(...q);
  return q.map((x) => x / norm);
}

/** Every row's estimate, or every `step`-th row's and the last block's, against the reference. */
function expectEstimates(space: CodeSpace, got: Float32Array, query: Uint8Array, rows: Uint8Array[], step = 1): void {
  expect(got.length).toBe(rows.length);
  rows.forEach((row, i) => {
    if (i % step !== 0 && i < rows.length - BIT_BLOCK) return;
    const reference = bitEstimate(space, query, row);
    expect(Math.abs(got[i] - reference)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(reference)));
  });
}

describe('bits kernel, blocked', () => {
  const pool = new ScanPool({ threads: 2 });
  afterAll(() => pool.close());

  for (const [dims, count] of [[1536, 1000], [100, 77], [7, 31], [3072, 33], [1536, 1]] as const) {
    it(`scores ${count} rows of ${dims} dims as the reference does, whole and by given rows`, async () => {
      const space = codeSpace(dims);
      const matrix = new VectorMatrix(dims, { kind: 'bits', capacity: 1 });
      const rows = Array.from({ length: count }, () => randomBitRow(space));
      for (const row of rows) matrix.appendCodes(row);
      expect(Array.from({ length: count }, (_, r) => matrix.bitRow(r))).toEqual(rows);
      for (let trial = 0; trial < 3; trial++) {
        const query = encodeBitQuery(space, randomQuery(dims)).bytes;
        const all = await pool.score(matrix, query);
        expectEstimates(space, all, query, rows);
        // Given rows: sorted, a filter's; shuffled, with repeats, across blocks.
        const sorted = Int32Array.from({ length: count }, (_, i) => i).filter(() => Math.random() < 0.3);
        const shuffled = Int32Array.from({ length: 2 * count }, () => Math.floor(Math.random() * count));
        for (const chosen of [sorted, shuffled]) {
          expect(Array.from(await pool.score(matrix, query, chosen))).toEqual(Array.from(chosen, (r) => all[r]));
        }
      }
      pool.release(matrix);
    });
  }

  it('scores a matrix split into parts and shared passes as the reference does', async () => {
    // 100,003 rows of 208 bytes (21 MB: a part per thread, each starting at a block).
    const space = codeSpace(1536);
    const matrix = new VectorMatrix(1536, { kind: 'bits' });
    const rows = Array.from({ length: 100_003 }, () => randomBitRow(space));
    for (const row of rows) matrix.appendCodes(row);
    const queries = Array.from({ length: 5 }, () => encodeBitQuery(space, randomQuery(1536)).bytes);
    const shared = await Promise.all(queries.map((q) => pool.scoreWith(matrix, q, undefined, (scores) => scores.slice())));
    for (const [j, q] of queries.entries()) {
      expectEstimates(space, shared[j], q, rows, 7);
      expect(Array.from(await pool.score(matrix, q))).toEqual(Array.from(shared[j]));
    }
    // A filter's rows, a tenth, in two parts.
    const chosen = Int32Array.from({ length: rows.length }, (_, i) => i).filter(() => Math.random() < 0.1);
    expect(Array.from(await pool.score(matrix, queries[0], chosen))).toEqual(Array.from(chosen, (r) => shared[0][r]));
    pool.release(matrix);
  }, 120_000);

  it('moves, truncates and restores rows within and across blocks', async () => {
    const space = codeSpace(384);
    const matrix = new VectorMatrix(384, { kind: 'bits', capacity: 1 });
    const rows = Array.from({ length: 3 * BIT_BLOCK + 5 }, () => randomBitRow(space));
    for (const row of rows) matrix.appendCodes(row);
    // Swap-removes as a workspace makes them: the last row into a hole, lanes of either nibble.
    for (const hole of [3, 20, 40, 0]) {
      const last = matrix.rows - 1;
      matrix.copyRow(last, hole);
      rows[hole] = rows[last];
      rows.pop();
      matrix.truncate(last);
    }
    // A row appended after a truncation leaves nothing of the row before it in its lane.
    rows.push(randomBitRow(space));
    matrix.appendCodes(rows[rows.length - 1]);
    expect(Array.from({ length: rows.length }, (_, r) => matrix.bitRow(r))).toEqual(rows);
    const query = encodeBitQuery(space, randomQuery(384)).bytes;
    expectEstimates(space, await pool.score(matrix, query), query, rows);
    // Its bytes, as a snapshot keeps them, make the same matrix; a's of rows read as bounds read them.
    const bytes = matrix.codeRows().slice();
    expect(bytes.length).toBe(Math.ceil(rows.length / BIT_BLOCK) * BIT_BLOCK * matrix.layout.stride);
    const restored = new VectorMatrix(384, { kind: 'bits' });
    await restored.appendCodeRows(rows.length, async (into) => into.set(bytes));
    expect(restored.rows).toBe(rows.length);
    expectEstimates(space, await pool.score(restored, query), query, rows);
    rows.forEach((row, r) => expect(restored.float32At(r, space.bitBytes + 8)).toBe(new DataView(row.buffer).getFloat32(space.bitBytes + 8, true)));
    await expect(restored.appendCodeRows(1, async () => undefined)).rejects.toThrow(/empty/);
    pool.release(matrix);
    pool.release(restored);
  });

  it("copies given rows into a matrix of their own, each scored as in its source's block", async () => {
    const space = codeSpace(1536);
    const source = new VectorMatrix(1536, { kind: 'bits', capacity: 1 });
    const rows = Array.from({ length: 5 * BIT_BLOCK + 7 }, () => randomBitRow(space));
    for (const row of rows) source.appendCodes(row);
    // Lanes of either nibble into lanes of either nibble, and a row twice.
    const chosen = Int32Array.from([0, 3, 17, 31, 32, 33, 50, 50, 64, 100, 130, 166]);
    const copy = new VectorMatrix(1536, { kind: 'bits', capacity: 1 });
    copy.appendBitRowsOf(source, chosen.subarray(0, 5));
    copy.appendBitRowsOf(source, chosen.subarray(5));
    expect(copy.rows).toBe(chosen.length);
    expect(Array.from({ length: copy.rows }, (_, r) => copy.bitRow(r))).toEqual(Array.from(chosen, (r) => rows[r]));
    const query = encodeBitQuery(space, randomQuery(1536)).bytes;
    expect(Array.from(await pool.score(copy, query))).toEqual(Array.from(await pool.score(source, query, chosen)));
    expect(() => copy.appendBitRowsOf(source, Int32Array.from([rows.length]))).toThrow(/out of range/);
    expect(() => copy.appendBitRowsOf(new VectorMatrix(384, { kind: 'bits' }), Int32Array.from([0]))).toThrow(/same dimensions/);
    pool.release(source);
    pool.release(copy);
  });
});

