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
  return { dims, padded, block, signs, rowBytes: padded + 16, queryBytes: padded * 2 + 4, queryMax };
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
  /** What the matrix of codes holds for the row (rowBytes). */
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
  for (let i = 0; i < y.length; i++) {
    const code = Math.max(-127, Math.min(127, Math.round(y[i] / scale)));
    codes[i] = code;
    const r = y[i] - scale * code;
    residual += r * r;
  }
  new DataView(bytes.buffer).setFloat32(space.padded, scale, true);
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
