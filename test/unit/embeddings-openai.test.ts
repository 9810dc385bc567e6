// The OpenAI-compatible client against a local fake server speaking the embeddings wire format.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEmbeddingProvider } from '../../src/providers/embeddings/index.js';
import {
  createOpenAIEmbeddingProvider,
  EmbeddingRequestError,
  type OpenAIEmbeddingOptions,
} from '../../src/providers/embeddings/openai.js';

interface EmbeddingsRequest {
  model: string;
  input: string[];
  encoding_format?: string;
  dimensions?: number;
}

type Handler = (body: EmbeddingsRequest, res: ServerResponse, attempt: number) => void;

const requests: { body: EmbeddingsRequest; headers: IncomingHttpHeaders; url?: string }[] = [];
let handler: Handler;
let server: Server;
let baseUrl: string;

/** Input "t42" embeds to 3 at position 42: the order of results is visible in the vectors. */
function fakeVector(text: string, dimensions = 1536): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  vector[Number(text.slice(1)) % dimensions] = 3;
  return vector;
}

/** Answers like OpenAI, but in reverse order: clients must sort by `index`. */
function answer(encoding: 'float' | 'base64' = 'float', dimensions = 1536): Handler {
  return (body, res) => {
    const data = body.input.map((text, index) => {
      const vector = fakeVector(text, dimensions);
      const embedding =
        encoding === 'float' ? vector : Buffer.from(new Float32Array(vector).buffer).toString('base64');
      return { object: 'embedding', index, embedding };
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    const usage = { prompt_tokens: 1, total_tokens: 1 };
    res.end(JSON.stringify({ object: 'list', data: data.reverse(), model: body.model, usage }));
  };
}

function fail(status: number, message: string, headers: Record<string, string> = {}): Handler {
  return (_body, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: null } }));
  };
}

function client(options: Partial<OpenAIEmbeddingOptions> = {}) {
  return createOpenAIEmbeddingProvider({
    model: 'text-embedding-3-small',
    baseUrl,
    apiKey: 'sk-test',
    retryBaseMs: 5,
    ...options,
  });
}

const texts = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as EmbeddingsRequest;
      requests.push({ body, headers: req.headers, url: req.url });
      handler(body, res, requests.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests.length = 0;
  handler = answer();
});

describe('OpenAI-compatible embeddings client', () => {
  it('speaks the embeddings wire format and normalises the vectors', async () => {
    const [vector] = await client().embed(['t7']);
    expect(requests).toHaveLength(1);
    expect(requests[0].url).toBe('/v1/embeddings');
    expect(requests[0].headers.authorization).toBe('Bearer sk-test');
    expect(requests[0].body).toEqual({
      model: 'text-embedding-3-small',
      input: ['t7'],
      encoding_format: 'float',
      dimensions: 1536,
    });
    expect(vector.length).toBe(1536);
    expect(vector[7]).toBeCloseTo(1, 6);
  });

  it('sends no key when none is set and asks dimensions only of text-embedding-3 models', async () => {
    await client({ apiKey: null, model: 'nomic-embed-text' }).embed(['t1']);
    expect(requests[0].headers.authorization).toBeUndefined();
    expect(requests[0].body).toEqual({ model: 'nomic-embed-text', input: ['t1'], encoding_format: 'float' });
  });

  it('splits a large input list into batches and keeps the order', async () => {
    const vectors = await client().embed(texts(600));
    expect(requests.map((r) => r.body.input.length)).toEqual([256, 256, 88]);
    expect(vectors).toHaveLength(600);
    vectors.forEach((vector, i) => expect(vector[i]).toBeCloseTo(1, 6));
  });

  it('also splits batches by characters', async () => {
    const input = texts(10).map((t) => t.padEnd(100, ' '));
    await client({ maxBatchChars: 250 }).embed(input);
    expect(requests.map((r) => r.body.input.length)).toEqual([2, 2, 2, 2, 2]);
  });

  it('accepts base64 embeddings', async () => {
    handler = answer('base64');
    const vectors = await client().embed(['t3', 't1500']);
    expect(vectors[0][3]).toBeCloseTo(1, 6);
    expect(vectors[1][1500]).toBeCloseTo(1, 6);
  });

  it('embeds empty texts to zero vectors without asking the server', async () => {
    expect(await client().embed([])).toEqual([]);
    expect(requests).toHaveLength(0);
    const vectors = await client().embed(['', 't2', ' ']);
    expect(requests[0].body.input).toEqual(['t2']);
    expect(vectors[0].every((x) => x === 0)).toBe(true);
    expect(vectors[1][2]).toBeCloseTo(1, 6);
    expect(vectors[2].every((x) => x === 0)).toBe(true);
  });

  it('retries a 429 after the server’s Retry-After', async () => {
    const limited = fail(429, 'Rate limit reached', { 'retry-after': '0.3' });
    handler = (body, res, attempt) => (attempt === 1 ? limited : answer())(body, res, attempt);
    const started = Date.now();
    const [vector] = await client().embed(['t5']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(requests).toHaveLength(2);
    expect(vector[5]).toBeCloseTo(1, 6);
  });

  it('retries a 500', async () => {
    handler = (body, res, attempt) => (attempt === 1 ? fail(500, 'boom') : answer())(body, res, attempt);
    await client().embed(['t1']);
    expect(requests).toHaveLength(2);
  });

  it('gives up after four attempts with the status and the server’s message', async () => {
    handler = fail(503, 'The engine is currently overloaded');
    const error = await client().embed(['t1']).catch((e: unknown) => e);
    expect(requests).toHaveLength(4);
    expect(error).toBeInstanceOf(EmbeddingRequestError);
    expect((error as EmbeddingRequestError).status).toBe(503);
    expect((error as Error).message).toMatch(
      /HTTP 503: The engine is currently overloaded \(gave up after 4 attempts\)/,
    );
  });

  it('does not retry a 400 and surfaces its message', async () => {
    handler = fail(400, "This model's maximum context length is 8192 tokens");
    const error = await client().embed(['t1']).catch((e: unknown) => e);
    expect(requests).toHaveLength(1);
    expect((error as EmbeddingRequestError).status).toBe(400);
    expect((error as Error).message).toContain("HTTP 400: This model's maximum context length is 8192 tokens");
  });

  it('times out a hanging server, retrying first', async () => {
    handler = () => {}; // never answers
    const started = Date.now();
    await expect(client({ timeoutMs: 100, maxAttempts: 2 }).embed(['t1'])).rejects.toThrow(
      /timed out after 100 ms \(gave up after 2 attempts\)/,
    );
    expect(requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('times out a server that stops in the middle of its answer', async () => {
    handler = (_body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data": [');
    };
    await expect(client({ timeoutMs: 100, maxAttempts: 2 }).embed(['t1'])).rejects.toThrow(
      /timed out after 100 ms \(gave up after 2 attempts\)/,
    );
    expect(requests).toHaveLength(2);
  });

  it('asks for a compressed answer and reads gzip and brotli', async () => {
    for (const [encoding, compress] of [['gzip', gzipSync], ['br', brotliCompressSync]] as const) {
      requests.length = 0;
      handler = (body, res) => {
        const data = body.input.map((text, index) => ({ index, embedding: fakeVector(text) }));
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
        res.end(compress(Buffer.from(JSON.stringify({ data }))));
      };
      const [vector] = await client().embed(['t11']);
      expect(requests[0].headers['accept-encoding']).toMatch(encoding);
      expect(vector[11]).toBeCloseTo(1, 6);
    }
  });

  it('retries an answer whose compression is broken', async () => {
    handler = (body, res, attempt) => {
      if (attempt > 1) return answer()(body, res, attempt);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end('not gzip at all');
    };
    const [vector] = await client().embed(['t4']);
    expect(requests).toHaveLength(2);
    expect(vector[4]).toBeCloseTo(1, 6);
  });

  it('sends a request again at once when its kept-alive connection was closed under it', async () => {
    // The second request on a connection finds it closed, as a server's idle timeout leaves it.
    const served = new WeakSet<object>();
    const closing = createServer((req, res) => {
      if (served.has(req.socket)) return req.socket.destroy();
      served.add(req.socket);
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => answer()(JSON.parse(raw) as EmbeddingsRequest, res, 0));
    });
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    try {
      const once = client({ baseUrl: `http://127.0.0.1:${(closing.address() as AddressInfo).port}/v1`, maxAttempts: 1 });
      for (let i = 0; i < 3; i++) expect((await once.embed(['t8']))[0][8]).toBeCloseTo(1, 6);
    } finally {
      closing.closeAllConnections();
      await new Promise((resolve) => closing.close(resolve));
    }
  });

  it('does not follow a redirect', async () => {
    handler = (_body, res) => {
      res.writeHead(307, { location: `${baseUrl}/embeddings` });
      res.end();
    };
    await expect(client().embed(['t1'])).rejects.toThrow(/failed with HTTP 307/);
    expect(requests).toHaveLength(1);
  });

  it('stops at once when the caller aborts', async () => {
    handler = () => {};
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 50);
    await expect(client({ timeoutMs: 10_000 }).embed(['t1'], controller.signal)).rejects.toThrow('caller gave up');
    expect(requests).toHaveLength(1);
  });

  it('retries network errors', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = client({ baseUrl: `http://127.0.0.1:${port}/v1`, maxAttempts: 3 });
    const error = await unreachable.embed(['t1']).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/failed: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(gave up after 3 attempts\)/);
    expect((error as EmbeddingRequestError).status).toBeNull();
  });

  it('rejects embeddings that are not 1536-dimensional, without retrying', async () => {
    handler = answer('float', 768);
    await expect(client().embed(['t1'])).rejects.toThrow(/returned 768 dimensions; Folio needs 1536/);
    expect(requests).toHaveLength(1);
  });

  it('rejects an answer with missing embeddings', async () => {
    handler = (body, res, attempt) => answer()({ ...body, input: body.input.slice(1) }, res, attempt);
    await expect(client().embed(['t1', 't2'])).rejects.toThrow(/returned 1 embeddings for 2 inputs/);
  });
});

describe('createEmbeddingProvider', () => {
  const config = { openaiApiKey: null, openaiBaseUrl: null, embeddingModel: 'text-embedding-3-small' };

  it('uses the hashing embedder without a key or a base URL', () => {
    expect(createEmbeddingProvider(config).model).toBe('folio-hashing-v2');
  });

  it('uses the OpenAI-compatible client when a base URL or a key is set', async () => {
    const provider = createEmbeddingProvider({ ...config, openaiBaseUrl: baseUrl });
    expect(provider.model).toBe('text-embedding-3-small');
    const [vector] = await provider.embed(['t9']);
    expect(vector[9]).toBeCloseTo(1, 6);
    expect(createEmbeddingProvider({ ...config, openaiApiKey: 'sk-x' }).model).toBe('text-embedding-3-small');
  });
});
