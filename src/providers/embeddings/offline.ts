// The offline embedders by model name, for threads that compute embeddings beside other work
// (a parser thread embeds a file's pages as it parses them): pure functions of the text, the
// same on any thread.
import { HASHING_V1_MODEL, hashEmbed } from './hashing.js';
import { HASHING_V2_MODEL, lexemeEmbed } from './lexeme-hashing.js';

const OFFLINE_EMBEDDERS: Record<string, (text: string) => Float32Array> = {
  [HASHING_V1_MODEL]: hashEmbed,
  [HASHING_V2_MODEL]: lexemeEmbed,
};

/** The embedding function of offline model `model`, or null for a model that is not one. */
export function offlineEmbedder(model: string): ((text: string) => Float32Array) | null {
  return Object.hasOwn(OFFLINE_EMBEDDERS, model) ? OFFLINE_EMBEDDERS[model] : null;
}
