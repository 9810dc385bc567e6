// Vector helpers shared by ingest and search: embeddings are stored L2-normalised so that
// cosine similarity is a plain dot product.

export { EMBEDDING_DIMENSIONS } from '../providers/embeddings/types.js';

/**
 * Returns the unit vector of `values` as float32, or null when it has no direction (all
 * zeros) or holds a non-finite number. Scales by the largest magnitude first so that huge
 * components do not overflow the sum of squares.
 */
export function normalizeVector(values: ArrayLike<number>): Float32Array | null {
  let maxAbs = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) return null;
    maxAbs = Math.max(maxAbs, Math.abs(v));
  }
  if (maxAbs === 0) return null;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] / maxAbs;
    sum += v * v;
  }
  const scale = 1 / (Math.sqrt(sum) * maxAbs);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i] * scale;
  return out;
}
