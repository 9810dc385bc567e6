// Chooses the embedding provider from configuration (architecture decision 7): the
// OpenAI-compatible client when a key or a base URL is set, the offline embedder otherwise: v2,
// the lexeme hashing (v1 stays, under its own name, for pages stored with it).
import type { Config } from '../../config.js';
import { createHashingV2EmbeddingProvider } from './lexeme-hashing.js';
import { createOpenAIEmbeddingProvider } from './openai.js';
import type { EmbeddingProvider } from './types.js';

export { createCachedEmbedder, type CachedEmbedder } from './cache.js';
export { createHashingV1EmbeddingProvider, hashEmbed, HASHING_V1_MODEL } from './hashing.js';
export { createHashingV2EmbeddingProvider, HASHING_V2_MODEL, lexemeEmbed } from './lexeme-hashing.js';
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
  return createHashingV2EmbeddingProvider();
}
