// Chooses the embedding provider from configuration (architecture decision 7): the
// OpenAI-compatible client when a key or a base URL is set, the hashing embedder otherwise.
import type { Config } from '../../config.js';
import { createHashingEmbeddingProvider } from './hashing.js';
import { createOpenAIEmbeddingProvider } from './openai.js';
import type { EmbeddingProvider } from './types.js';

export { createCachedEmbedder, type CachedEmbedder } from './cache.js';
export { createHashingEmbeddingProvider, hashEmbed, HASHING_MODEL } from './hashing.js';
export {
  createOpenAIEmbeddingProvider,
  EmbeddingRequestError,
  type OpenAIEmbeddingOptions,
} from './openai.js';
export { EMBEDDING_DIMENSIONS, l2Normalize, type EmbeddingProvider } from './types.js';

export function createEmbeddingProvider(
  config: Pick<Config, 'openaiApiKey' | 'openaiBaseUrl' | 'embeddingModel'>,
): EmbeddingProvider {
  if (config.openaiApiKey !== null || config.openaiBaseUrl !== null) {
    return createOpenAIEmbeddingProvider({
      model: config.embeddingModel,
      apiKey: config.openaiApiKey,
      baseUrl: config.openaiBaseUrl,
    });
  }
  return createHashingEmbeddingProvider();
}
