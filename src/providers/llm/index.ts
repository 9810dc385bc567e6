// Chooses the language-model provider from configuration (architecture decision 7): the
// OpenAI-compatible chat client when a key or a base URL is set and FOLIO_LLM_MODEL names a
// model, and none otherwise: callers then use their offline behaviour.
import type { Config } from '../../config.js';
import { createOpenAIChatProvider } from './openai.js';
import type { LlmProvider } from './types.js';

export { createOpenAIChatProvider, parseModelJson, strictCompatible, type OpenAIChatOptions } from './openai.js';
export * from './types.js';

export type LlmConfig = Pick<
  Config,
  'openaiApiKey' | 'openaiBaseUrl' | 'llmModel' | 'llmTimeoutMs' | 'llmMaxAttempts' | 'llmMaxTokens' | 'llmPromptTokens'
>;

export function createLlmProvider(config: LlmConfig): LlmProvider | null {
  if ((config.openaiApiKey === null && config.openaiBaseUrl === null) || config.llmModel === null) return null;
  return createOpenAIChatProvider({
    model: config.llmModel,
    apiKey: config.openaiApiKey,
    baseUrl: config.openaiBaseUrl,
    timeoutMs: config.llmTimeoutMs,
    maxAttempts: config.llmMaxAttempts,
    maxOutputTokens: config.llmMaxTokens,
    promptTokenBudget: config.llmPromptTokens,
  });
}
