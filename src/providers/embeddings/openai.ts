// The OpenAI-compatible embeddings client (OpenAI, Azure, Ollama, vLLM, llama.cpp servers)
// on node:http(s): batching, per-request timeout, retries with backoff, and checks
// that every answer is complete, ordered and 1536-dimensional.
import { EMBEDDING_DIMENSIONS, l2Normalize, type EmbeddingProvider } from './types.js';
import { postJson, retryAfterMs, serverMessage, sleep, type PostAnswer } from '../http.js';

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIEmbeddingOptions {
  model: string;
  apiKey?: string | null;
  baseUrl?: string | null;
  /** Per request, covering the whole response body. */
  timeoutMs?: number;
  /** Attempts per batch, the first included. */
  maxAttempts?: number;
  /** First backoff delay; doubled on each retry, with jitter. */
  retryBaseMs?: number;
  /** Longest wait between attempts, a server's Retry-After included. */
  retryMaxMs?: number;
  maxBatchInputs?: number;
  maxBatchChars?: number;
}

/** A failed embeddings call; `status` is the HTTP status when the server answered. */
export class EmbeddingRequestError extends Error {
  readonly status: number | null;

  constructor(message: string, status: number | null = null, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EmbeddingRequestError';
    this.status = status;
  }
}

/** A failure worth another attempt, with the server's requested wait if it gave one. */
interface Retry {
  retry: string;
  status: number | null;
  afterMs: number | null;
  cause?: unknown;
}

interface EmbeddingsResponse {
  data?: { index?: unknown; embedding?: unknown }[];
}

/** Splits texts into batches under both the count and the character limits. */
export function planBatches(texts: string[], maxInputs: number, maxChars: number): string[][] {
  const batches: string[][] = [];
  let batch: string[] = [];
  let chars = 0;
  for (const text of texts) {
    if (batch.length > 0 && (batch.length >= maxInputs || chars + text.length > maxChars)) {
      batches.push(batch);
      batch = [];
      chars = 0;
    }
    batch.push(text);
    chars += text.length;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

function decodeEmbedding(value: unknown): Float32Array | null {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'base64');
    if (bytes.byteLength % 4 !== 0) return null;
    // Copy into a fresh buffer: Float32Array needs 4-byte alignment. Floats are little-endian.
    return new Float32Array(new Uint8Array(bytes).buffer);
  }
  if (Array.isArray(value) && value.every((x) => typeof x === 'number')) return Float32Array.from(value);
  return null;
}

export function createOpenAIEmbeddingProvider(options: OpenAIEmbeddingOptions): EmbeddingProvider {
  const model = options.model;
  const url = `${(options.baseUrl ?? DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, '')}/embeddings`;
  const target = new URL(url);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxAttempts = options.maxAttempts ?? 4;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const retryMaxMs = options.retryMaxMs ?? 20_000;
  const maxBatchInputs = options.maxBatchInputs ?? 256;
  const maxBatchChars = options.maxBatchChars ?? 250_000;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  // Only the text-embedding-3 family can shorten its output; others must be 1536 natively.
  const askDimensions = model.startsWith('text-embedding-3');
  const fail = (message: string, status: number | null = null, cause?: unknown) =>
    new EmbeddingRequestError(`embeddings request to ${url} (model ${model}) ${message}`, status, { cause });

  /** One request: the vectors, a Retry when another attempt could help, or a thrown error. */
  async function attempt(input: string[], signal?: AbortSignal): Promise<Float32Array[] | Retry> {
    const body = JSON.stringify({
      model,
      input,
      encoding_format: 'float',
      ...(askDimensions ? { dimensions: EMBEDDING_DIMENSIONS } : {}),
    });
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: PostAnswer;
    try {
      response = await postJson(target, headers, body, signal ? AbortSignal.any([signal, timeout]) : timeout);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const retry = timeout.aborted
        ? `timed out after ${timeoutMs} ms`
        : `failed: ${(error as Error).message}`;
      return { retry, status: null, afterMs: null, cause: error };
    }
    const { status, text } = response;
    if (status < 200 || status > 299) {
      const why = `failed with HTTP ${status}: ${serverMessage(text)}`;
      if (status === 429 || status >= 500) {
        return { retry: why, status, afterMs: retryAfterMs(response.header) };
      }
      throw fail(why, status);
    }
    let parsed: EmbeddingsResponse;
    try {
      parsed = JSON.parse(text) as EmbeddingsResponse;
    } catch (error) {
      throw fail('answered with a body that is not JSON', status, error);
    }
    const data = parsed.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      const got = Array.isArray(data) ? data.length : 'no';
      throw fail(`returned ${got} embeddings for ${input.length} inputs`);
    }
    // Servers may answer out of order; `index` says which input each embedding belongs to.
    const vectors: Float32Array[] = new Array(input.length);
    for (const { index, embedding } of data) {
      const valid = typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < input.length;
      if (!valid || vectors[index]) throw fail(`returned an invalid or repeated index ${String(index)}`);
      const vector = decodeEmbedding(embedding);
      if (vector === null) throw fail('returned an embedding that is neither a float array nor base64');
      if (vector.length !== EMBEDDING_DIMENSIONS) {
        throw fail(`returned ${vector.length} dimensions; Folio needs ${EMBEDDING_DIMENSIONS}`);
      }
      vectors[index] = l2Normalize(vector);
    }
    return vectors;
  }

  async function embedBatch(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    for (let n = 1; ; n++) {
      const result = await attempt(input, signal);
      if (Array.isArray(result)) return result;
      if (n >= maxAttempts) {
        throw fail(`${result.retry} (gave up after ${n} attempts)`, result.status, result.cause);
      }
      // Exponential backoff with jitter, so clients throttled together do not retry together.
      const backoff = Math.min(retryMaxMs, retryBaseMs * 2 ** (n - 1)) * (0.5 + Math.random() / 2);
      await sleep(Math.min(retryMaxMs, result.afterMs ?? backoff), signal);
    }
  }

  return {
    model,
    dimensions: EMBEDDING_DIMENSIONS,
    async embed(texts, signal) {
      signal?.throwIfAborted();
      // Servers reject empty input; an empty text embeds to the zero vector without asking.
      const result: Float32Array[] = texts.map(() => new Float32Array(EMBEDDING_DIMENSIONS));
      const positions = texts.flatMap((text, i) => (text.trim() === '' ? [] : [i]));
      let done = 0;
      for (const batch of planBatches(positions.map((i) => texts[i]), maxBatchInputs, maxBatchChars)) {
        const vectors = await embedBatch(batch, signal);
        vectors.forEach((vector, k) => (result[positions[done + k]] = vector));
        done += batch.length;
      }
      return result;
    },
  };
}
