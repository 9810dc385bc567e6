// A least-recently-used cache in front of a provider for search queries, which repeat
// often and would otherwise cost an embeddings request each.
import { LruMap } from '../../lru.js';
import type { EmbeddingProvider } from './types.js';

export interface CachedEmbedder extends EmbeddingProvider {
  /** The embedding of one query, from the cache when it was asked for recently. */
  embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array>;
}

export function createCachedEmbedder(
  provider: EmbeddingProvider,
  { maxEntries = 1000 }: { maxEntries?: number } = {},
): CachedEmbedder {
  const entries = new LruMap<string, Float32Array>(maxEntries);
  return {
    model: provider.model,
    dimensions: provider.dimensions,
    ...(provider.offline && { offline: true }),
    embed: (texts, signal) => provider.embed(texts, signal),
    async embedQuery(text, signal) {
      const key = `${provider.model}\u0000${text}`;
      let vector = entries.get(key);
      if (!vector) {
        [vector] = await provider.embed([text], signal);
        entries.set(key, vector);
      }
      // A copy, so a caller that scales its vector cannot corrupt the cache.
      return vector.slice();
    },
  };
}
