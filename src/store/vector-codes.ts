// Compact codes of unit vectors, which the page index scans first (made where a load's or a
// catch-up's pages are read, off the request thread): a fixed random rotation
// (random signs, then an orthonormal Walsh-Hadamard transform per block), so that no vector
// keeps its weight in a few dimensions, then one int8 per dimension at a scale of the row's
// own. A query becomes int16s the same way. The kernel's integer dot product of the two gives
// an approximate cosine, and a bound on its distance from the cosine the float scan computes:
//
//   q.x = (sq cq + rq) . (sx cx + rx) = sq sx (cq . cx) + sq cq . rx + rq . Rx
//   |q.x - approx| <= |sq cq| |rx| + |rq| |x| (Cauchy-Schwarz), plus the float scan's rounding
//
// so a row whose approximate score plus its bound is below the k-th best approximate score
// minus its bound cannot be among the k best: only the rows within the bounds are scored again
// from their float vectors, and the results are those of the float scan, bit for bit.
//
// Before the codes, a large workspace scans a first level of one bit per dimension (RaBitQ,
// Gao & Long 2024): the signs s of the rotated row y, with ō = s/sqrt(D) a unit vector and
// a = <ō, y/|y|>. Then <q, x> is estimated by |y| <ō, q>/a, without bias over random
// rotations, and its error, |y| sqrt(1 - a²)/a <e, q> for a unit e orthogonal to y, is about
// normal with a variance of at most |y|² (1 - a²)/(a² (D - 1)) |q|². The query is rounded to 4
// bits a dimension (q̄ = lo + Δ u, u in 0..15), adding <ō, q - q̄>/a, of variance |q - q̄|²/(D a²)
// where the signs are independent of the rounding. Unlike the int8 bound this one is
// probabilistic: BITS_CONFIDENCE standard deviations (see bitBound()). The kernel sums <s, u>
// from a table per 4 dimensions (FastScan): an entry adds at most 4 codes of 15, so the tables
// hold it exactly, in bytes, and add no error of their own to the bound.

/** Largest block of the Walsh-Hadamard transform: a power of two dividing the padded dimensions. */
const MAX_BLOCK = 1024;
/** float32's unit roundoff. */
const U = 2 ** -24;
/**
 * Covers what the bound leaves out, each well under 1e-6: the kernel's float32 product of the
 * integer dot with the two scales, the rotation's float64 rounding, and the scales' rounding.
 */
const SLACK = 1e-6;

/** The rotation and code sizes for vectors of `dims` dimensions. */
export interface CodeSpace {
  dims: number;
  /** dims rounded up to 16, as the kernel reads rows. */
  padded: number;
  /** The size of each Walsh-Hadamard block. */
  block: number;
  /** +1 or -1 per padded dimension. */
  signs: Float64Array;
  /** Bytes of a row's code: the codes, then the scale (f32), padded to 16. */
  rowBytes: number;
  /** Bytes of a query's code: the int16 codes, then the scale (f32). */
  queryBytes: number;
  /** The largest int16 code of a query: no partial sum of the kernel's dot product leaves int32. */
  queryMax: number;
  /** Bytes of a row's bits: one per padded dimension, rounded up to 16 bytes (the kernel reads v128s). */
  bitBytes: number;
  /** Bytes of a row of the first level: its bits, then its factor (f32), the bits set (i32) and a (f32), padded to 16. */
  bitRowBytes: number;
  /**
   * Bytes of a query's bits: per group of 4 of a row's bits, a table of 16 bytes (entry v the
   * sum of the group's 4-bit codes where v has a bit set; 0 past the padded dimensions, whose
   * bits are never set), then Δ, lo (f32), Σu and D (i32).
   */
  bitQueryBytes: number;
}

const spaces = new Map<number, CodeSpace>();

/** The code space of `dims` dimensions, made once per thread. */
export function codeSpace(dims: number): CodeSpace {
  let space = spaces.get(dims);
  if (!space) spaces.set(dims, (space = makeCodeSpace(dims)));
  return space;
}

function makeCodeSpace(dims: number): CodeSpace {
  const padded = Math.ceil(dims / 16) * 16;
  let block = 1;
  while (block < MAX_BLOCK && padded % (block * 2) === 0) block *= 2;
  // A fixed sequence (xorshift32), so that every process codes alike.
  const signs = new Float64Array(padded);
  let state = 0x9e3779b9;
  for (let i = 0; i < padded; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    signs[i] = state & 1 ? 1 : -1;
  }
  const queryMax = Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * padded)));
  const bitBytes = Math.ceil(padded / 128) * 16;
  return {
    dims, padded, block, signs, rowBytes: padded + 16, queryBytes: padded * 2 + 4, queryMax,
    bitBytes, bitRowBytes: bitBytes + 16, bitQueryBytes: bitBytes * 32 + 16,
  };
}

/** The rotated vector, in `y` (padded): signs, then an orthonormal Walsh-Hadamard transform of each block. */
function rotate(space: CodeSpace, x: ArrayLike<number>, y: Float64Array): void {
  const { dims, padded, block, signs } = space;
  for (let i = 0; i < dims; i++) y[i] = x[i] * signs[i];
  y.fill(0, dims);
  for (let start = 0; start < padded; start += block) {
    for (let h = 1; h < block; h *= 2) {
      for (let i = start; i < start + block; i += h * 2) {
        for (let j = i; j < i + h; j++) {
          const a = y[j];
          const b = y[j + h];
          y[j] = a + b;
          y[j + h] = a - b;
        }
      }
    }
  }
  const norm = 1 / Math.sqrt(block);
  for (let i = 0; i < padded; i++) y[i] *= norm;
}

/** Scratch for the rotated vector: a thread makes its codes one at a time. */
let rotated = new Float64Array(0);

function rotatedOf(space: CodeSpace, x: ArrayLike<number>): Float64Array {
  if (rotated.length !== space.padded) rotated = new Float64Array(space.padded);
  rotate(space, x, rotated);
  return rotated;
}

/**
 * Math.round(x) (ties toward +Infinity) for |x| < 2^52, without a branch: a row's coordinates
 * round up or down at random, and the branches V8 makes of Math.round, mispredicted half the
 * time, took 19 of encodeRow's 65 µs at 1536 dimensions. x - floor(x) is exact there, so no x
 * just below a half rounds up, as floor(x + 0.5) would.
 */
function round(x: number): number {
  const down = Math.floor(x);
  return down + Number(x - down >= 0.5);
}

/** The scale that puts the largest of `y` at `max`. */
function scaleFor(y: Float64Array, max: number): number {
  let largest = 0;
  for (let i = 0; i < y.length; i++) largest = Math.max(largest, Math.abs(y[i]));
  return largest > 0 ? Math.fround(largest / max) : 1;
}

function squaredNorm(x: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i] * x[i];
  return sum;
}

export interface RowCode {
  /**
   * What the matrix of codes holds for the row (rowBytes): the codes, the scale (f32), and for
   * the first level (bitRow()) its factor |y|²/<s, y> and a (f32s), s the codes' signs.
   */
  bytes: Uint8Array;
  /** At least the norm of the row's residual (rotated row - scale x codes). */
  error: number;
  /** The row's norm. */
  norm: number;
}

export function encodeRow(space: CodeSpace, x: Float32Array): RowCode {
  const bytes = new Uint8Array(space.rowBytes);
  const codes = new Int8Array(bytes.buffer, 0, space.padded);
  const y = rotatedOf(space, x);
  const scale = scaleFor(y, 127);
  let residual = 0;
  // The first level's bits are the codes' signs (0 counted as positive), so that they can be
  // made from a row of codes alone; a code of 0 is a coordinate within half a step of 0.
  let signed = 0;
  let squares = 0;
  for (let i = 0; i < y.length; i++) {
    const code = Math.max(-127, Math.min(127, round(y[i] / scale)));
    codes[i] = code;
    const r = y[i] - scale * code;
    residual += r * r;
    // Without a branch: half the codes are negative, at random.
    signed += (2 * Number(code >= 0) - 1) * y[i];
    squares += y[i] * y[i];
  }
  const view = new DataView(bytes.buffer);
  view.setFloat32(space.padded, scale, true);
  view.setFloat32(space.padded + 4, signed > 0 ? squares / signed : 0, true);
  view.setFloat32(space.padded + 8, signed > 0 ? signed / Math.sqrt(space.padded * squares) : 1, true);
  return { bytes, error: Math.fround(Math.sqrt(residual) * (1 + 1e-6)), norm: Math.sqrt(squaredNorm(x)) };
}

export interface QueryCode {
  /** What the kernel takes for the query (queryBytes). */
  bytes: Uint8Array;
  /** Multiplies a row's error in its bound: the norm of the query's scaled codes. */
  weight: number;
  /** The part of every row's bound that does not depend on the row, for rows of norm at most `maxNorm`. */
  slack(maxNorm: number): number;
}

export function encodeQuery(space: CodeSpace, q: Float32Array): QueryCode {
  const bytes = new Uint8Array(space.queryBytes);
  const codes = new Int16Array(bytes.buffer, 0, space.padded);
  const y = rotatedOf(space, q);
  const max = space.queryMax;
  const scale = scaleFor(y, max);
  let residual = 0;
  let codeNorm = 0;
  for (let i = 0; i < y.length; i++) {
    const code = Math.max(-max, Math.min(max, Math.round(y[i] / scale)));
    codes[i] = code;
    const r = y[i] - scale * code;
    residual += r * r;
    codeNorm += code * code;
  }
  new DataView(bytes.buffer).setFloat32(space.padded * 2, scale, true);
  // The float scan's rounding: a sum of n products in float32, in any order, is within
  // n u / (1 - n u) of the sum of |q_i x_i|, itself at most |q| |x|.
  const n = space.dims + 2;
  const rounding = ((n * U) / (1 - n * U)) * Math.sqrt(squaredNorm(q));
  return {
    bytes,
    weight: Math.sqrt(codeNorm) * scale * (1 + 1e-9),
    slack: (maxNorm) => (Math.sqrt(residual) + rounding) * maxNorm * (1 + 1e-9) + SLACK,
  };
}

/**
 * The row of the first level (bitRowBytes) made from a row of codes (rowBytes): a bit per
 * padded dimension, set where the code is not negative, then the factor |y|²/<s, y>, the
 * count of bits set and a = <s, y>/(sqrt(D) |y|).
 */
export function bitRow(space: CodeSpace, code: Uint8Array, into = new Uint8Array(space.bitRowBytes)): Uint8Array {
  into.fill(0, 0, space.bitBytes);
  let set = 0;
  for (let i = 0; i < space.padded; i++) {
    // Without a branch: half the codes are negative, at random.
    const bit = Number(code[i] < 128);
    into[i >> 3] |= bit << (i & 7);
    set += bit;
  }
  const from = new DataView(code.buffer, code.byteOffset, code.byteLength);
  const to = new DataView(into.buffer, into.byteOffset, into.byteLength);
  to.setFloat32(space.bitBytes, from.getFloat32(space.padded + 4, true), true);
  to.setInt32(space.bitBytes + 4, set, true);
  to.setFloat32(space.bitBytes + 8, from.getFloat32(space.padded + 8, true), true);
  to.setInt32(space.bitBytes + 12, 0, true);
  return into;
}

/** a of a row of the first level: the smaller, the wider its bound. */
export function bitAgreement(space: CodeSpace, row: Uint8Array): number {
  return new DataView(row.buffer, row.byteOffset, row.byteLength).getFloat32(space.bitBytes + 8, true);
}

/**
 * How many standard deviations of the first level's estimate its bound spans (RaBitQ's ε0): the
 * search's confidence parameter. A row among the k best is missed only when its upper bound
 * falls below the k-th best lower bound: its estimate short by more than its own bound, and by
 * more than the k-th best estimate's margin over the k-th best cosine (which grows where many
 * cosines crowd, as on isotropic vectors). The rows kept are narrowed by the int8 codes' proven
 * bound, so this decides recall and work, never a score.
 */
export const BITS_CONFIDENCE = 2.2;

/** Covers the float32 rounding of the kernel's estimate and of the factors, well under 1e-5. */
const BITS_SLACK = 1e-5;

export interface BitQuery {
  /** What the kernel takes for the query (bitQueryBytes). */
  bytes: Uint8Array;
  /** The bound of a row's estimate, from its a, for rows of norm at most `maxNorm`. */
  bound(a: number, maxNorm: number): number;
}

export function encodeBitQuery(space: CodeSpace, q: Float32Array): BitQuery {
  const bytes = new Uint8Array(space.bitQueryBytes);
  const y = rotatedOf(space, q);
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < y.length; i++) {
    lo = Math.min(lo, y[i]);
    hi = Math.max(hi, y[i]);
  }
  lo = Math.fround(lo);
  const step = Math.fround(hi > lo ? (hi - lo) / 15 : 1);
  let sum = 0;
  let rounding = 0;
  for (let i = 0; i < y.length; i++) {
    const u = Math.max(0, Math.min(15, Math.round((y[i] - lo) / step)));
    sum += u;
    const r = y[i] - (lo + step * u);
    rounding += r * r;
    // Every entry of dimension i's group whose bit i % 4 is set takes u: at most 4 x 15, exact in a byte.
    const table = (i >> 2) * 16;
    for (let v = 0; v < 16; v++) if ((v >> (i & 3)) & 1) bytes[table + v] += u;
  }
  const view = new DataView(bytes.buffer);
  const trailer = space.bitBytes * 32;
  view.setFloat32(trailer, step, true);
  view.setFloat32(trailer + 4, lo, true);
  view.setInt32(trailer + 8, sum, true);
  view.setInt32(trailer + 12, space.padded, true);
  const d = space.padded;
  const direction = squaredNorm(q) / Math.max(1, d - 1);
  const quantised = rounding / d;
  return {
    bytes,
    bound: (a, maxNorm) => ((BITS_CONFIDENCE * maxNorm) / a) * Math.sqrt((1 - a * a) * direction + quantised) + BITS_SLACK,
  };
}

/** The first level's estimate of <q, x>, as the kernel computes it, in float64: the reference for tests. */
export function bitEstimate(space: CodeSpace, query: Uint8Array, row: Uint8Array): number {
  const q = new DataView(query.buffer, query.byteOffset, query.byteLength);
  const r = new DataView(row.buffer, row.byteOffset, row.byteLength);
  let weighted = 0;
  for (let g = 0; g < space.padded / 4; g++) weighted += query[g * 16 + ((row[g >> 1] >> ((g & 1) * 4)) & 15)];
  const trailer = space.bitBytes * 32;
  const step = q.getFloat32(trailer, true);
  const lo = q.getFloat32(trailer + 4, true);
  const sum = q.getInt32(trailer + 8, true);
  const d = q.getInt32(trailer + 12, true);
  const set = r.getInt32(space.bitBytes + 4, true);
  return r.getFloat32(space.bitBytes, true) * (step * (2 * weighted - sum) + lo * (2 * set - d));
}
