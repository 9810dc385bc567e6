// The compact codes' bound: for every row, the cosine the float scan computes lies within the
// bound of the codes' approximate cosine, whatever the vectors (random, one spike, flat,
// nearly equal, short), so that a search that re-scores only the rows within the bounds
// finds the float scan's k best. The first level's bits: the kernel's estimate is the JS
// reference's, and its error is within its bound about as often as a normal error would be.
import { afterAll, describe, expect, it } from 'vitest';
import { bitAgreement, bitEstimate, bitRow, BITS_CONFIDENCE, codeSpace, encodeBitQuery, encodeQuery, encodeRow } from '../../src/store/vector-codes.js';
import { ScanPool, VectorMatrix } from '../../src/search/kernel/index.js';
import { normalizeVector } from '../../src/search/vectors.js';

function unit(values: number[]): Float32Array {
  return normalizeVector(values)!;
}

function randomUnit(dims: number): Float32Array {
  return unit(Array.from({ length: dims }, () => Math.random() - 0.5));
}

/** Vectors that stress a scale per row: one spike, flat, a spike over noise, sparse, nearly equal. */
function hardVectors(dims: number): Float32Array[] {
  const spike = (i: number) => unit(Array.from({ length: dims }, (_, j) => (j === i ? 1 : 0)));
  const base = randomUnit(dims);
  return [
    spike(0),
    spike(dims - 1),
    unit(Array.from({ length: dims }, () => 1)),
    unit(Array.from({ length: dims }, (_, j) => (j % 2 ? 1 : -1))),
    unit(Array.from({ length: dims }, (_, j) => (j === 3 % dims ? 100 : Math.random() * 1e-3))),
    unit(Array.from({ length: dims }, (_, j) => (j % 97 === 0 ? Math.random() : 0))),
    base,
    unit(Array.from(base, (x, j) => x + (j === 0 ? 1e-6 : 0))),
    unit(Array.from({ length: dims }, () => (Math.random() < 0.5 ? 1e-30 : 1))),
  ];
}

describe('compact codes', () => {
  const pool = new ScanPool({ threads: 2 });
  afterAll(() => pool.close());

  for (const dims of [1536, 384, 100, 7, 1]) {
    it(`bound the float scan's cosine of every row, ${dims} dims`, async () => {
      const space = codeSpace(dims);
      const vectors = [...hardVectors(dims), ...Array.from({ length: 300 }, () => randomUnit(dims))];
      const floats = new VectorMatrix(dims);
      const codes = new VectorMatrix(dims, { kind: 'int8' });
      const errors: number[] = [];
      let maxNorm = 0;
      for (const v of vectors) {
        floats.append(v);
        const code = encodeRow(space, v);
        codes.appendCodes(code.bytes);
        errors.push(code.error);
        maxNorm = Math.max(maxNorm, code.norm);
      }
      let widest = 0;
      for (const q of [...hardVectors(dims), randomUnit(dims), randomUnit(dims)]) {
        const query = encodeQuery(space, q);
        const exact = await pool.score(floats, q);
        const approx = await pool.score(codes, query.bytes);
        const slack = query.slack(maxNorm);
        for (let i = 0; i < vectors.length; i++) {
          const bound = query.weight * errors[i] + slack;
          widest = Math.max(widest, bound);
          expect(Math.abs(exact[i] - approx[i])).toBeLessThanOrEqual(bound);
        }
        // Scores of given rows agree with the scan's, bit for bit.
        const rows = Int32Array.from({ length: 40 }, (_, i) => (i * 7) % vectors.length);
        expect(Array.from(await pool.score(floats, q, rows))).toEqual(Array.from(rows, (r) => exact[r]));
        expect(Array.from(await pool.score(codes, query.bytes, rows))).toEqual(Array.from(rows, (r) => approx[r]));
      }
      // Tight enough to leave out nearly every row: at 1,536 dims a hundredth of a cosine.
      if (dims >= 384) expect(widest).toBeLessThan(0.02);
    });
  }

  for (const dims of [1536, 384, 100, 7]) {
    it(`estimates from the bits as the reference does, within the bound as a normal error, ${dims} dims`, async () => {
      const space = codeSpace(dims);
      const vectors = [...hardVectors(dims), ...Array.from({ length: 1000 }, () => randomUnit(dims))];
      const bits = new VectorMatrix(dims, { kind: 'bits' });
      const rows = vectors.map((v) => bitRow(space, encodeRow(space, v).bytes));
      for (const row of rows) bits.appendCodes(row);
      let outside = 0;
      let errors = 0;
      let squares = 0;
      for (const q of [...hardVectors(dims).slice(0, 3), ...Array.from({ length: 6 }, () => randomUnit(dims))]) {
        const query = encodeBitQuery(space, q);
        const estimates = await pool.score(bits, query.bytes);
        const chosen = Int32Array.from({ length: 50 }, (_, i) => (i * 13) % vectors.length);
        expect(Array.from(await pool.score(bits, query.bytes, chosen))).toEqual(Array.from(chosen, (r) => estimates[r]));
        vectors.forEach((v, i) => {
          // The kernel sums in integers and rounds once or twice in float32.
          const reference = bitEstimate(space, query.bytes, rows[i]);
          expect(Math.abs(estimates[i] - reference)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(reference)));
          if (i < 9) return; // the hard vectors: no rotation makes a spike or a flat vector random
          const cosine = v.reduce((sum, x, j) => sum + x * q[j], 0);
          const bound = query.bound(bitAgreement(space, rows[i]), 1);
          const error = (estimates[i] - cosine) / (bound / BITS_CONFIDENCE);
          errors++;
          squares += error * error;
          if (Math.abs(estimates[i] - cosine) > bound) outside++;
        });
      }
      // The bound spans BITS_CONFIDENCE deviations: about 2.8% of normal errors lie beyond 2.2.
      // Under 384 dims a block of the rotation is too short to make a spike or flat query random.
      if (dims >= 384) {
        expect(Math.sqrt(squares / errors)).toBeGreaterThan(0.8);
        expect(Math.sqrt(squares / errors)).toBeLessThan(1.2);
        expect(outside / errors).toBeLessThan(0.06);
      }
    });
  }

  it('refuses a query of the wrong kind or size', async () => {
    const codes = new VectorMatrix(16, { kind: 'int8' });
    codes.appendCodes(encodeRow(codeSpace(16), randomUnit(16)).bytes);
    await expect(pool.score(codes, randomUnit(16))).rejects.toThrow(/matrix takes/);
    expect(() => codes.append(randomUnit(16))).toThrow(/rows of codes/);
    expect(() => codes.appendCodes(new Uint8Array(3))).toThrow(/bytes/);
    expect(() => new VectorMatrix(20_000, { kind: 'bits' })).toThrow(/4,368/);
  });
});
