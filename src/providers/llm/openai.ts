// The OpenAI-compatible chat client (OpenAI, Azure, Ollama, vLLM, llama.cpp servers) on the
// built-in fetch: structured outputs (response_format json_schema) checked again here with
// Ajv, a per-attempt timeout, retries with exponential backoff on 429, 5xx, timeouts and
// network errors (Retry-After honoured), one more attempt on unusable output, and a token
// budget per call (prompt estimate and completion cap). A streamed call (`stream: true`, the
// content passed on as it arrives) is folded into the same completion body, so it validates
// and retries alike, retrying only while its consumer has passed nothing on.
import { Ajv, type ValidateFunction } from 'ajv';
import { retryAfterMs, serverMessage, sleep } from '../http.js';
import { SseParser } from './sse.js';
import {
  LlmOutputError,
  LlmRequestError,
  estimateMessageTokens,
  type ChatRequest,
  type ChatResponse,
  type ChatStreamSink,
  type JsonSchemaFormat,
  type LlmProvider,
} from './types.js';

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIChatOptions {
  model: string;
  apiKey?: string | null;
  baseUrl?: string | null;
  /** Per attempt, covering the whole response body. */
  timeoutMs?: number;
  /** Attempts per call on transport failures, 429 and 5xx, the first included. */
  maxAttempts?: number;
  /** Further attempts when the server answers with unusable output (bad JSON, schema mismatch). */
  outputRetries?: number;
  /** First backoff delay; doubled on each retry, with jitter. */
  retryBaseMs?: number;
  /** Longest wait between attempts, a server's Retry-After included. */
  retryMaxMs?: number;
  /** Completion tokens per call: the default and the cap of a request's maxTokens. */
  maxOutputTokens?: number;
  /** Estimated prompt tokens per call; a larger prompt is refused before sending. */
  promptTokenBudget?: number;
}

interface Retry {
  retry: string;
  status: number | null;
  afterMs: number | null;
  cause?: unknown;
}

interface CompletionBody {
  model?: unknown;
  choices?: { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
}

/** One event of a streamed completion. */
interface CompletionChunk {
  model?: unknown;
  choices?: { delta?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown }[];
  usage?: CompletionBody['usage'];
  error?: unknown;
}

/** A streamed reply that broke off: a transport failure, retried like one while nothing was passed on. */
class StreamBroken extends Error {}

/**
 * Reads a streamed completion, passing its content to the sink as it arrives, into the body a
 * non-streamed request would have had.
 */
async function readCompletionStream(body: ReadableStream<Uint8Array>, sink: ChatStreamSink): Promise<CompletionBody> {
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let content = '';
  let refusal: string | null = null;
  let finish: unknown = null;
  let model: unknown;
  let usage: CompletionBody['usage'];
  let done = false;
  const take = (data: string) => {
    if (data.trim() === '[DONE]') {
      done = true;
      return;
    }
    let chunk: CompletionChunk;
    try {
      chunk = JSON.parse(data) as CompletionChunk;
    } catch (error) {
      throw new LlmOutputError(`chat stream event is not JSON: ${data.slice(0, 200)}`, { cause: error });
    }
    if (chunk.error !== undefined) throw new StreamBroken(`failed mid-stream: ${serverMessage(JSON.stringify(chunk))}`);
    model ??= chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (typeof choice?.delta?.refusal === 'string') refusal = (refusal ?? '') + choice.delta.refusal;
    if (choice?.finish_reason) finish = choice.finish_reason;
    const piece = choice?.delta?.content;
    if (typeof piece === 'string' && piece !== '') {
      content += piece;
      sink.delta(piece);
    }
  };
  const reader = body.getReader();
  try {
    while (!done) {
      const { value, done: ended } = await reader.read();
      const events = ended ? [...parser.push(decoder.decode()), ...parser.end()] : parser.push(decoder.decode(value, { stream: true }));
      for (const event of events) if (!done) take(event.data);
      if (ended) break;
    }
  } finally {
    // After [DONE], or on a failure: the rest of the body is not wanted.
    void reader.cancel().catch(() => {});
  }
  if (!done && finish === null) throw new StreamBroken('stream ended before the answer was complete');
  return { model, choices: [{ message: { content, refusal }, finish_reason: finish }], usage };
}

/** A compiler of response schemas that compiles each schema object once. */
function schemaValidators(): (schema: Record<string, unknown>) => ValidateFunction {
  const ajv = new Ajv({ allErrors: false, strict: false, validateFormats: false });
  const validators = new WeakMap<object, ValidateFunction>();
  return (schema) => {
    let validate = validators.get(schema);
    if (!validate) {
      validate = ajv.compile(schema);
      validators.set(schema, validate);
    }
    return validate;
  };
}

/** Whether OpenAI's strict mode accepts the schema: every object closed, all its properties required. */
export function strictCompatible(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(strictCompatible);
  if (typeof schema !== 'object' || schema === null) return true;
  const s = schema as Record<string, unknown>;
  const type = s.type;
  const isObject = type === 'object' || (Array.isArray(type) && type.includes('object'));
  if (isObject) {
    const props = (s.properties ?? {}) as Record<string, unknown>;
    const required = Array.isArray(s.required) ? s.required : [];
    if (s.additionalProperties !== false) return false;
    if (!Object.keys(props).every((k) => required.includes(k))) return false;
  }
  return Object.entries(s).every(([key, value]) => key === 'enum' || key === 'const' || strictCompatible(value));
}

/** JSON from a model's text; tolerates a Markdown code fence around it (servers without structured outputs). */
export function parseModelJson(content: string): unknown {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(content);
  return JSON.parse(fenced ? fenced[1] : content);
}

export function createOpenAIChatProvider(options: OpenAIChatOptions): LlmProvider {
  const model = options.model;
  const validatorFor = schemaValidators();
  const url = `${(options.baseUrl ?? DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, '')}/chat/completions`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxAttempts = options.maxAttempts ?? 3;
  const outputRetries = options.outputRetries ?? 1;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const retryMaxMs = options.retryMaxMs ?? 20_000;
  const maxOutputTokens = options.maxOutputTokens ?? 1024;
  const promptTokenBudget = options.promptTokenBudget ?? 8000;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  // Learned from the server's 400s: newer OpenAI models want max_completion_tokens and
  // refuse a temperature; older servers know only max_tokens.
  let tokenParam: 'max_tokens' | 'max_completion_tokens' = 'max_tokens';
  let sendTemperature = true;
  const fail = (message: string, status: number | null = null, cause?: unknown) =>
    new LlmRequestError(`chat request to ${url} (model ${model}) ${message}`, status, { cause });

  function requestBody(request: ChatRequest): string {
    const body: Record<string, unknown> = { model, messages: request.messages };
    body[tokenParam] = Math.max(1, Math.min(request.maxTokens ?? maxOutputTokens, maxOutputTokens));
    if (request.temperature !== undefined && sendTemperature) body.temperature = request.temperature;
    if (request.jsonSchema) body.response_format = responseFormat(request.jsonSchema);
    if (request.stream) body.stream = true;
    return JSON.stringify(body);
  }

  /** One HTTP exchange: the completion body, a Retry, or a thrown error. */
  async function exchange(request: ChatRequest): Promise<CompletionBody | Retry> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const { signal, stream } = request;
    stream?.restart();
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers,
        body: requestBody(request),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (stream && response.ok && response.body && /^text\/event-stream/i.test(response.headers.get('content-type') ?? '')) {
        return await readCompletionStream(response.body, stream);
      }
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof LlmOutputError) throw error;
      const retry = timeout.aborted
        ? `timed out after ${timeoutMs} ms`
        : error instanceof StreamBroken
          ? error.message
          : `failed: ${(error as Error).message}`;
      if (stream?.committed()) throw fail(`${retry}, after part of the answer was passed on`, null, error);
      return { retry, status: null, afterMs: null, cause: error };
    }
    if (!response.ok) {
      const message = serverMessage(text);
      const why = `failed with HTTP ${response.status}: ${message}`;
      if (response.status === 429 || response.status === 408 || response.status >= 500) {
        return { retry: why, status: response.status, afterMs: retryAfterMs((name) => response.headers.get(name)) };
      }
      if (response.status === 400 && tokenParam === 'max_tokens' && /max_completion_tokens/.test(message)) {
        tokenParam = 'max_completion_tokens';
        return { retry: why, status: 400, afterMs: 0 };
      }
      if (response.status === 400 && sendTemperature && request.temperature !== undefined && /temperature/i.test(message)) {
        sendTemperature = false;
        return { retry: why, status: 400, afterMs: 0 };
      }
      throw fail(why, response.status);
    }
    let body: CompletionBody;
    try {
      body = JSON.parse(text) as CompletionBody;
    } catch (error) {
      throw new LlmOutputError(`chat response from ${url} is not JSON: ${text.slice(0, 200)}`, { cause: error });
    }
    // A server that does not stream answered the whole completion: it is one piece.
    const content = Array.isArray(body.choices) ? body.choices[0]?.message?.content : undefined;
    if (stream && typeof content === 'string' && content !== '') stream.delta(content);
    return body;
  }

  /** Retries transport failures until the server answers 2xx. */
  async function complete(request: ChatRequest): Promise<CompletionBody> {
    for (let n = 1; ; n++) {
      const result = await exchange(request);
      if (!('retry' in result)) return result;
      if (n >= maxAttempts) throw fail(`${result.retry} (gave up after ${n} attempts)`, result.status, result.cause);
      const backoff = Math.min(retryMaxMs, retryBaseMs * 2 ** (n - 1)) * (0.5 + Math.random() / 2);
      await sleep(Math.min(retryMaxMs, result.afterMs ?? backoff), request.signal);
    }
  }

  /** The usable answer in a completion, or an LlmOutputError saying why there is none. */
  function interpret(body: CompletionBody, request: ChatRequest): ChatResponse {
    const choice = Array.isArray(body.choices) ? body.choices[0] : undefined;
    const message = choice?.message;
    if (!message) throw new LlmOutputError('chat response has no choices[0].message');
    if (typeof message.refusal === 'string' && message.refusal !== '') {
      throw new LlmOutputError(`the model refused: ${message.refusal.slice(0, 200)}`);
    }
    if (typeof message.content !== 'string') throw new LlmOutputError('chat response has no text content');
    const content = message.content;
    const usage =
      typeof body.usage?.prompt_tokens === 'number' && typeof body.usage.completion_tokens === 'number'
        ? { promptTokens: body.usage.prompt_tokens, completionTokens: body.usage.completion_tokens }
        : undefined;
    const response: ChatResponse = { content, model: typeof body.model === 'string' ? body.model : model, usage };
    if (!request.jsonSchema) return response;
    if (choice.finish_reason === 'length') {
      throw new LlmOutputError('the structured answer was cut short by the token limit');
    }
    let json: unknown;
    try {
      json = parseModelJson(content);
    } catch (error) {
      throw new LlmOutputError(`the model's answer is not JSON: ${content.slice(0, 200)}`, { cause: error });
    }
    const validate = validatorFor(request.jsonSchema.schema);
    if (!validate(json)) {
      const first = validate.errors?.[0];
      throw new LlmOutputError(
        `the model's answer does not match schema ${request.jsonSchema.name}: ${first?.instancePath || '/'} ${first?.message ?? ''}`.trim(),
      );
    }
    return { ...response, json };
  }

  return {
    model,
    promptTokenBudget,
    async chat(request) {
      request.signal?.throwIfAborted();
      const estimate = estimateMessageTokens(request.messages);
      if (estimate > promptTokenBudget) {
        throw fail(`refused: the prompt is about ${estimate} tokens, over the budget of ${promptTokenBudget}`);
      }
      for (let n = 0; ; n++) {
        try {
          return interpret(await complete(request), request);
        } catch (error) {
          if (!(error instanceof LlmOutputError) || n >= outputRetries || request.stream?.committed()) throw error;
        }
      }
    },
  };
}

function responseFormat(format: JsonSchemaFormat): Record<string, unknown> {
  const name = format.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'answer';
  const strict = format.strict ?? strictCompatible(format.schema);
  return { type: 'json_schema', json_schema: { name, schema: format.schema, strict } };
}
