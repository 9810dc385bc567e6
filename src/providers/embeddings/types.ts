// The embedding provider contract shared by the offline hashing embedder and the
// OpenAI-compatible client, and the normalisation every implementation applies.
import { mapInSlices } from '../../slices.js';

export const EMBEDDING_DIMENSIONS = 1536;

export interface EmbeddingProvider {
  readonly model: string;
  readonly dimensions: 1536;
  /**
   * Set by the offline embedders (offline.ts): a vector is a pure function of the text, so a
   * parser thread may compute a file's vectors beside its parse, off the thread that answers requests.
   */
  readonly offline?: true;
  /** One vector per text, in order; each L2-normalised (a zero vector stays zero). */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Scales `vector` in place to unit length, so cosine similarity is a dot product. */
export function l2Normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  if (sum > 0) {
    const scale = 1 / Math.sqrt(sum);
    for (let i = 0; i < vector.length; i++) vector[i] *= scale;
  }
  return vector;
}

/**
 * A provider over a pure, synchronous embedding function (the offline embedders). It computes on
 * the calling thread, in slices: a batch of long pages embedded in one stretch held every
 * request (/health included) for 50-100 ms.
 */
export function localEmbeddingProvider(model: string, embed: (text: string) => Float32Array): EmbeddingProvider {
  return {
    model,
    dimensions: EMBEDDING_DIMENSIONS,
    offline: true,
    async embed(texts, signal) {
      signal?.throwIfAborted();
      return mapInSlices(texts, (text) => embed(text));
    },
  };
}
