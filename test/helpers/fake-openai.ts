// A local server speaking the OpenAI wire format, for tests of the OpenAI-compatible
// providers: POST /v1/chat/completions (messages, response_format json_schema; the answer in
// choices[0].message.content) and POST /v1/embeddings (hashing-embedder vectors unless `embed`
// is given, so search behaves as it does offline). Scriptable per test: a queue of replies (content,
// status codes, delays, raw bodies) consumed in order, a default when the queue is empty,
// and a record of every request received. A chat request with `stream: true` gets its
// content as Server-Sent Events chunks (`choices[0].delta.content`, then `data: [DONE]`),
// paced, cut or left hanging as scripted; a request whose client hung up is marked aborted.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';

export interface FakeChatMessage {
  role: string;
  content: string;
}

/** The body of a chat completions request, as far as the fake reads it. */
export interface FakeChatBody {
  model: string;
  messages: FakeChatMessage[];
  response_format?: {
    type: string;
    json_schema?: { name: string; schema: Record<string, unknown>; strict?: boolean };
  };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  stream?: boolean;
  [key: string]: unknown;
}

export interface FakeEmbeddingsBody {
  model: string;
  input: string | string[];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
}

export interface FakeRequest {
  /** `/v1/chat/completions`, `/v1/embeddings`, ... */
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  /** Arrival time (Date.now()), to check retry spacing. */
  at: number;
  /** The client closed the connection before the reply was complete. */
  aborted: boolean;
}

/** One scripted chat reply. */
export type FakeReply =
  /**
   * 200 with this content (an object is sent as its JSON text). Streamed when the request asks:
   * in `chunks` (whose concatenation should be the content; default pieces of 12 characters),
   * `chunkDelayMs` apart; `cutAfter` n chunks the connection is destroyed, `hangAfter` n chunks
   * nothing more is written.
   */
  | {
      content: string | Record<string, unknown> | unknown[];
      delayMs?: number;
      finishReason?: string;
      model?: string;
      chunks?: string[];
      chunkDelayMs?: number;
      cutAfter?: number;
      hangAfter?: number;
    }
  /** An error status with an OpenAI-style error body; e.g. 429 with `retry-after`. */
  | { status: number; message?: string; headers?: Record<string, string>; delayMs?: number }
  /** Exactly this body text (any status, default 200; JSON unless told): for malformed responses. */
  | { raw: string; status?: number; delayMs?: number; contentType?: string }
  /** Never answers; the connection stays open until the client gives up. */
  | { hang: true };

export type FakeHandler = (body: FakeChatBody, request: FakeRequest) => FakeReply;

export class FakeOpenAI {
  /** `http://127.0.0.1:<port>/v1`: what OPENAI_BASE_URL should be. */
  readonly baseUrl: string;
  /** Every request received, in arrival order. */
  readonly requests: FakeRequest[] = [];
  private readonly queue: (FakeReply | FakeHandler)[] = [];
  private fallback: FakeReply | FakeHandler = { status: 500, message: 'fake-openai: no reply scripted' };
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly embed: (text: string) => Float32Array,
  ) {
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  }

  static async start({ embed = hashEmbed }: { embed?: (text: string) => Float32Array } = {}): Promise<FakeOpenAI> {
    let fake: FakeOpenAI | null = null;
    const server = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (raw += chunk));
      req.on('end', () => fake!.handle(req.method ?? 'GET', req.url ?? '/', req.headers, raw, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake = new FakeOpenAI(server, embed);
    server.on('connection', (socket) => {
      fake!.sockets.add(socket);
      socket.on('close', () => fake!.sockets.delete(socket));
    });
    return fake;
  }

  /** Replies for the next chat requests, in order. */
  enqueue(...replies: (FakeReply | FakeHandler)[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** The reply once the queue is empty (initially a 500 saying nothing was scripted). */
  setDefault(reply: FakeReply | FakeHandler): this {
    this.fallback = reply;
    return this;
  }

  /** Forgets the queue, the default and the record of requests. */
  reset(): this {
    this.queue.length = 0;
    this.requests.length = 0;
    this.fallback = { status: 500, message: 'fake-openai: no reply scripted' };
    return this;
  }

  /** Replies still waiting in the queue. */
  get pending(): number {
    return this.queue.length;
  }

  /** The chat completions requests received, bodies parsed. */
  get chatRequests(): FakeChatBody[] {
    return this.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as FakeChatBody);
  }

  /** The last chat request's messages joined (system, user, ...), for prompt assertions. */
  lastPrompt(): string {
    const last = this.chatRequests.at(-1);
    return last ? last.messages.map((m) => m.content).join('\n') : '';
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(method: string, url: string, headers: IncomingHttpHeaders, raw: string, res: ServerResponse): void {
    let body: unknown = raw;
    try {
      body = raw === '' ? null : JSON.parse(raw);
    } catch {
      // kept as text
    }
    const path = url.split('?')[0];
    const request: FakeRequest = { path, method, headers, body, at: Date.now(), aborted: false };
    this.requests.push(request);
    res.on('close', () => {
      if (!res.writableEnded) request.aborted = true;
    });
    if (method === 'POST' && path.endsWith('/embeddings')) return this.embeddings(body as FakeEmbeddingsBody, res);
    if (method !== 'POST' || !path.endsWith('/chat/completions')) {
      return send(res, 404, { error: { message: `fake-openai: no route ${method} ${path}`, type: 'invalid_request_error' } });
    }
    const chat = body as FakeChatBody;
    if (!chat || !Array.isArray(chat.messages)) {
      return send(res, 400, { error: { message: 'messages is required', type: 'invalid_request_error' } });
    }
    const next = this.queue.shift() ?? this.fallback;
    const reply = typeof next === 'function' ? next(chat, request) : next;
    if ('hang' in reply) return;
    const delay = reply.delayMs ?? 0;
    const respond = () => {
      if (res.destroyed || res.writableEnded) return;
      if ('raw' in reply) {
        res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
        res.end(reply.raw);
      } else if ('status' in reply) {
        send(res, reply.status, { error: { message: reply.message ?? `fake error ${reply.status}`, type: 'fake_error', code: null } }, reply.headers);
      } else if (chat.stream === true) {
        this.stream(res, chat, reply);
      } else {
        const content = typeof reply.content === 'string' ? reply.content : JSON.stringify(reply.content);
        send(res, 200, {
          id: `chatcmpl-fake-${this.requests.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: reply.model ?? chat.model,
          choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: reply.finishReason ?? 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        });
      }
    };
    if (delay <= 0) return respond();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      respond();
    }, delay);
    this.timers.add(timer);
  }

  private stream(res: ServerResponse, chat: FakeChatBody, reply: Extract<FakeReply, { content: unknown }>): void {
    const content = typeof reply.content === 'string' ? reply.content : JSON.stringify(reply.content);
    const pieces = reply.chunks ?? (content.match(/[\s\S]{1,12}/g) ?? []);
    const id = `chatcmpl-fake-${this.requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: reply.model ?? chat.model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(chunk({ role: 'assistant', content: '' }, null));
    let sent = 0;
    const next = () => {
      if (res.destroyed || res.writableEnded) return;
      if (sent === reply.cutAfter) return void res.destroy();
      if (sent === reply.hangAfter) return;
      if (sent === pieces.length) {
        res.write(chunk({}, reply.finishReason ?? 'stop'));
        res.end('data: [DONE]\n\n');
        return;
      }
      // The next step waits until this chunk is written out, so that a cut comes after it.
      res.write(chunk({ content: pieces[sent++] }, null), () => {
        if (!reply.chunkDelayMs) return next();
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          next();
        }, reply.chunkDelayMs);
        this.timers.add(timer);
      });
    };
    next();
  }

  private embeddings(body: FakeEmbeddingsBody, res: ServerResponse): void {
    const inputs = typeof body?.input === 'string' ? [body.input] : Array.isArray(body?.input) ? body.input : null;
    if (!inputs) return send(res, 400, { error: { message: 'input is required', type: 'invalid_request_error' } });
    const data = inputs.map((text, index) => {
      const vector = this.embed(text);
      const embedding = body.encoding_format === 'base64' ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64') : Array.from(vector);
      return { object: 'embedding', index, embedding };
    });
    send(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } });
  }
}

function send(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(payload));
}
