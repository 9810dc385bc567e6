// The OpenAI-compatible chat client against the local fake server: the wire format
// (messages, response_format json_schema, token cap, auth), structured outputs validated
// here too, malformed output retried then refused, timeouts and 429s retried with backoff,
// the prompt budget, and the choice of provider from configuration.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  LlmOutputError,
  LlmRequestError,
  createLlmProvider,
  createOpenAIChatProvider,
  estimateTokens,
  strictCompatible,
  type OpenAIChatOptions,
} from '../../src/providers/llm/index.js';
import { FakeOpenAI } from '../helpers/fake-openai.js';

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['city', 'population'],
  properties: { city: { type: 'string' }, population: { type: 'integer' } },
};
const messages = [
  { role: 'system' as const, content: 'You extract facts.' },
  { role: 'user' as const, content: 'Vienna has 2 million people.' },
];

let fake: FakeOpenAI;

function client(options: Partial<OpenAIChatOptions> = {}) {
  return createOpenAIChatProvider({ model: 'fake-model', baseUrl: fake.baseUrl, apiKey: 'sk-test', retryBaseMs: 5, ...options });
}

beforeAll(async () => {
  fake = await FakeOpenAI.start();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

describe('OpenAI-compatible chat client', () => {
  it('sends the chat completions wire format and returns the validated JSON', async () => {
    fake.enqueue({ content: { city: 'Vienna', population: 2000000 } });
    const response = await client({ maxOutputTokens: 300 }).chat({
      messages,
      jsonSchema: { name: 'city facts', schema: SCHEMA },
      maxTokens: 5000,
      temperature: 0,
    });
    expect(response.json).toEqual({ city: 'Vienna', population: 2000000 });
    expect(response.model).toBe('fake-model');
    expect(response.usage).toEqual({ promptTokens: 10, completionTokens: 10 });

    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer sk-test');
    const body = fake.chatRequests[0];
    expect(body.model).toBe('fake-model');
    expect(body.messages).toEqual(messages);
    expect(body.temperature).toBe(0);
    // The request's maxTokens is capped by the per-call budget.
    expect(body.max_tokens).toBe(300);
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'city_facts', schema: SCHEMA, strict: true },
    });
  });

  it('asks for plain text without a schema and leaves the content alone', async () => {
    fake.enqueue({ content: 'Vienna.' });
    const response = await client().chat({ messages });
    expect(response).toMatchObject({ content: 'Vienna.' });
    expect(response.json).toBeUndefined();
    expect(fake.chatRequests[0].response_format).toBeUndefined();
    expect(fake.chatRequests[0].temperature).toBeUndefined();
    expect(fake.chatRequests[0].max_tokens).toBe(1024);
  });

  it('turns strict mode off for schemas it cannot serve', () => {
    expect(strictCompatible(SCHEMA)).toBe(true);
    expect(strictCompatible({ type: 'object', properties: { a: { type: 'string' } } })).toBe(false);
    expect(strictCompatible({ type: 'object', additionalProperties: false, required: [], properties: { a: { type: 'string' } } })).toBe(false);
    expect(
      strictCompatible({
        type: 'object',
        additionalProperties: false,
        required: ['items'],
        properties: { items: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } } } } },
      }),
    ).toBe(false);
  });

  it('accepts JSON inside a Markdown code fence (servers without structured outputs)', async () => {
    fake.enqueue({ content: '```json\n{"city": "Graz", "population": 300000}\n```' });
    const response = await client().chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA } });
    expect(response.json).toEqual({ city: 'Graz', population: 300000 });
  });

  it('retries output that does not validate against the schema once, then refuses it', async () => {
    fake.enqueue({ content: { city: 'Vienna', population: 'two million' } }, { content: { city: 'Vienna', population: 2000000 } });
    const ok = await client().chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA } });
    expect(ok.json).toEqual({ city: 'Vienna', population: 2000000 });
    expect(fake.chatRequests).toHaveLength(2);

    fake.reset();
    fake.enqueue({ content: { city: 'Vienna' } }, { content: { city: 'Vienna', extra: true } });
    const error = await client().chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmOutputError);
    expect((error as Error).message).toMatch(/does not match schema facts/);
    expect(fake.chatRequests).toHaveLength(2);
  });

  it('refuses malformed output: not JSON, a non-JSON body, a refusal, an answer cut short', async () => {
    const ask = () => client({ outputRetries: 0 }).chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA } });
    fake.enqueue({ content: 'Vienna has about two million people.' });
    await expect(ask()).rejects.toThrow(/not JSON/);
    fake.enqueue({ raw: '<html>bad gateway</html>' });
    await expect(ask()).rejects.toBeInstanceOf(LlmOutputError);
    fake.enqueue({ raw: JSON.stringify({ choices: [{ message: { role: 'assistant', content: null, refusal: 'I cannot help' } }] }) });
    await expect(ask()).rejects.toThrow(/refused: I cannot help/);
    fake.enqueue({ content: '{"city": "Vie', finishReason: 'length' });
    await expect(ask()).rejects.toThrow(/cut short/);
    fake.enqueue({ raw: JSON.stringify({ choices: [] }) });
    await expect(ask()).rejects.toThrow(/no choices/);
  });

  it('retries 429 honouring Retry-After, and 5xx, then succeeds', async () => {
    fake.enqueue(
      { status: 429, message: 'Rate limit reached', headers: { 'retry-after': '0.2' } },
      { status: 503, message: 'overloaded' },
      { content: { city: 'Linz', population: 200000 } },
    );
    const response = await client({ maxAttempts: 3 }).chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA } });
    expect(response.json).toEqual({ city: 'Linz', population: 200000 });
    expect(fake.chatRequests).toHaveLength(3);
    // The second attempt waited for the server's Retry-After (200 ms).
    expect(fake.requests[1].at - fake.requests[0].at).toBeGreaterThanOrEqual(180);
  });

  it('gives up on persistent 429s after maxAttempts with the status', async () => {
    fake.setDefault({ status: 429, message: 'Rate limit reached', headers: { 'retry-after-ms': '1' } });
    const error = await client({ maxAttempts: 3 }).chat({ messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as LlmRequestError).status).toBe(429);
    expect((error as Error).message).toMatch(/gave up after 3 attempts/);
    expect(fake.chatRequests).toHaveLength(3);
  });

  it('retries a timed-out attempt', async () => {
    fake.enqueue({ content: 'late', delayMs: 1000 }, { content: 'on time' });
    const started = Date.now();
    const response = await client({ timeoutMs: 150 }).chat({ messages });
    expect(response.content).toBe('on time');
    expect(fake.chatRequests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('reports a server that never answers as a timeout after the attempts', async () => {
    fake.setDefault({ hang: true });
    const error = await client({ timeoutMs: 100, maxAttempts: 2 }).chat({ messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as Error).message).toMatch(/timed out after 100 ms \(gave up after 2 attempts\)/);
  });

  it('does not retry other client errors', async () => {
    fake.setDefault({ status: 401, message: 'Incorrect API key provided' });
    const error = await client().chat({ messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as LlmRequestError).status).toBe(401);
    expect((error as Error).message).toMatch(/Incorrect API key/);
    expect(fake.chatRequests).toHaveLength(1);
  });

  it('switches to max_completion_tokens and drops temperature when the server asks', async () => {
    fake.enqueue(
      { status: 400, message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead." },
      { status: 400, message: "Unsupported value: 'temperature' does not support 0 with this model." },
      { content: 'ok' },
    );
    const llm = client();
    expect((await llm.chat({ messages, temperature: 0, maxTokens: 50 })).content).toBe('ok');
    const [first, second, third] = fake.chatRequests;
    expect(first.max_tokens).toBe(50);
    expect(second.max_completion_tokens).toBe(50);
    expect(second.max_tokens).toBeUndefined();
    expect(third.temperature).toBeUndefined();
    // Remembered for the next calls.
    fake.enqueue({ content: 'again' });
    await llm.chat({ messages, temperature: 0 });
    expect(fake.chatRequests[3]).toMatchObject({ max_completion_tokens: 1024 });
    expect(fake.chatRequests[3].temperature).toBeUndefined();
  });

  it('refuses a prompt over the token budget without sending it', async () => {
    const llm = client({ promptTokenBudget: 500 });
    expect(llm.promptTokenBudget).toBe(500);
    const error = await llm.chat({ messages: [{ role: 'user', content: 'word '.repeat(1000) }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as Error).message).toMatch(/over the budget of 500/);
    expect(fake.requests).toHaveLength(0);
  });

  it('stops when the caller aborts', async () => {
    fake.setDefault({ hang: true });
    const controller = new AbortController();
    const pending = client({ timeoutMs: 5000 }).chat({ messages, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client went away')), 50);
    await expect(pending).rejects.toThrow('client went away');
  });
});

describe('token estimates', () => {
  it('counts about four characters per token, one per CJK character', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd'.repeat(25))).toBe(25);
    expect(estimateTokens('日本語')).toBe(3);
  });
});

describe('provider choice', () => {
  it('uses the model only with a key or base URL and FOLIO_LLM_MODEL', () => {
    expect(createLlmProvider(loadConfig({}))).toBeNull();
    expect(createLlmProvider(loadConfig({ OPENAI_API_KEY: 'sk-x' }))).toBeNull();
    expect(createLlmProvider(loadConfig({ FOLIO_LLM_MODEL: 'gpt-4o-mini' }))).toBeNull();
    const llm = createLlmProvider(loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', FOLIO_LLM_MODEL: 'llama3', FOLIO_LLM_PROMPT_TOKENS: '4000' }));
    expect(llm?.model).toBe('llama3');
    expect(llm?.promptTokenBudget).toBe(4000);
  });

  it('validates the LLM settings', () => {
    expect(() => loadConfig({ FOLIO_LLM_TIMEOUT_MS: '0' })).toThrow(/FOLIO_LLM_TIMEOUT_MS/);
    expect(() => loadConfig({ FOLIO_LLM_MAX_ATTEMPTS: 'x' })).toThrow(/FOLIO_LLM_MAX_ATTEMPTS/);
    expect(loadConfig({})).toMatchObject({ llmTimeoutMs: 60000, llmMaxAttempts: 3, llmMaxTokens: 1024, llmPromptTokens: 8000 });
  });
});
