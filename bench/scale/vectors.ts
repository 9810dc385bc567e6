// The two sets of 1536-dimension vectors bench/scale ingests and queries, seeded so that vector
// n (and query i) is the same whatever the order or concurrency of the ingest:
// - clustered: a mixture like real embeddings: a direction every vector shares (so cosines
//   between unrelated vectors are well above 0, about 0.45), one of 1,024 cluster centres (about
//   0.75 within a cluster), and noise whose spread falls off across dimensions (anisotropic);
// - isotropic: independent normal coordinates, the worst case for a compact code (no structure
//   to exploit, every cosine near 0).
import { mulberry32, seedOf } from '../search/corpus.js';

export const DIMS = 1536;
export type SetKind = 'clustered' | 'isotropic';
export const SET_KINDS: readonly SetKind[] = ['clustered', 'isotropic'];

const CLUSTERS = 1024;
const CENTRE_WEIGHT = 0.8;
/** Noise spread of dimension j (in a fixed shuffled order): NOISE x (j + 1)^-0.5, about 0.7 in all. */
const NOISE = 0.25;
/** Coordinates are sent as integers at this scale. */
const SCALE = 10_000;
/** Streams of the generator: documents and queries never share a seed. */
const DOCUMENTS = 1;
const QUERIES = 2;

/** Standard normal numbers from a uniform generator (Box-Muller, both halves used). */
function normals(random: () => number, out: Float64Array): Float64Array {
  for (let i = 0; i < out.length; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - random()));
    const theta = 2 * Math.PI * random();
    out[i] = r * Math.cos(theta);
    if (i + 1 < out.length) out[i + 1] = r * Math.sin(theta);
  }
  return out;
}

/**
 * 2^16 standard normal numbers that a document's coordinates are drawn from: a lookup instead
 * of a logarithm and a cosine per coordinate keeps the load generator from being what limits
 * bulk ingestion (it shares the cores with the service).
 */
const NORMAL_TABLE = normals(mulberry32(0x5eed), new Float64Array(1 << 16));

function unit(v: Float64Array): Float64Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}

/** Integers below this have their digits in DIGITS (5 bytes each) and their count in DIGIT_COUNTS. */
const TABLED = 100_000;
const DIGITS = new Uint8Array(TABLED * 5);
const DIGIT_COUNTS = new Uint8Array(TABLED);
for (let x = 0; x < TABLED; x++) {
  const text = String(x);
  DIGIT_COUNTS[x] = text.length;
  for (let d = 0; d < text.length; d++) DIGITS[x * 5 + d] = text.charCodeAt(d);
}

export class VectorSet {
  private readonly shared: Float64Array;
  private readonly centres: Float64Array[];
  /** Per dimension, its noise spread. */
  private readonly spread: Float64Array;
  private readonly scratch = new Float64Array(DIMS);
  /** A vector's JSON text as it is written: at most 8 bytes a coordinate. */
  private readonly text = Buffer.alloc(8 * DIMS + 2);

  constructor(
    readonly kind: SetKind,
    private readonly seed: number,
  ) {
    const random = mulberry32(seedOf(seed, 7));
    this.shared = unit(normals(random, new Float64Array(DIMS)));
    this.centres = Array.from({ length: CLUSTERS }, () => unit(normals(random, new Float64Array(DIMS))));
    const order = Array.from({ length: DIMS }, (_, j) => j);
    for (let j = DIMS - 1; j > 0; j--) {
      const k = Math.floor(random() * (j + 1));
      [order[j], order[k]] = [order[k], order[j]];
    }
    this.spread = new Float64Array(DIMS);
    order.forEach((dim, rank) => (this.spread[dim] = NOISE / Math.sqrt(rank + 1)));
  }

  /** Document n's vector (not normalised: the service normalises it), as JSON numbers. */
  documentJson(n: number): string {
    return this.json(this.vector(DOCUMENTS, n));
  }

  /** Query i's vector, as JSON numbers. */
  queryJson(i: number): string {
    return this.json(this.vector(QUERIES, i));
  }

  /** Document n's vector, not normalised, in a buffer the next call reuses. */
  documentVector(n: number): Float64Array {
    return this.vector(DOCUMENTS, n);
  }

  /** Query i's vector, not normalised, in a buffer the next call reuses. */
  queryVector(i: number): Float64Array {
    return this.vector(QUERIES, i);
  }

  private vector(stream: number, n: number): Float64Array {
    const random = mulberry32(seedOf(this.seed, stream, n));
    const v = this.scratch;
    for (let j = 0; j < DIMS; j++) v[j] = NORMAL_TABLE[Math.floor(random() * NORMAL_TABLE.length)];
    if (this.kind === 'isotropic') return v;
    const centre = this.centres[Math.floor(random() * CLUSTERS)];
    for (let j = 0; j < DIMS; j++) v[j] = this.shared[j] + CENTRE_WEIGHT * centre[j] + this.spread[j] * v[j];
    return v;
  }

  private json(v: Float64Array): string {
    // As integers at a scale of 10^4 (3-5 digits of coordinates about 0.03 to 1; the service
    // normalises every vector), their digits copied from a table into bytes: the load generator
    // shares the cores with the service, and toFixed() or string concatenation took several
    // times as long.
    const out = this.text;
    let at = 0;
    out[at++] = 0x5b; // [
    for (let j = 0; j < v.length; j++) {
      if (j > 0) out[at++] = 0x2c; // ,
      let x = Math.round(v[j] * SCALE);
      if (x < 0) {
        out[at++] = 0x2d; // -
        x = -x;
      }
      if (x < TABLED) {
        const end = x * 5 + DIGIT_COUNTS[x];
        for (let d = x * 5; d < end; d++) out[at++] = DIGITS[d];
        continue;
      }
      const digits = Math.floor(Math.log10(x)) + 1;
      for (let d = digits - 1; d >= 0; d--) {
        out[at + d] = 0x30 + (x % 10);
        x = Math.floor(x / 10);
      }
      at += digits;
    }
    out[at++] = 0x5d; // ]
    return out.toString('latin1', 0, at);
  }

}
