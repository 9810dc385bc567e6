// POST /api/v1/documents/answer with `Accept: text/event-stream`, on both engines: the events
// (sources first, deltas, done last), done's body against the JSON endpoint's for the same
// request, errors before the stream as ordinary responses. With a language model (the local
// fake OpenAI server streaming its reply): the model's text forwarded as it arrives, retries
// only before anything was passed on, the client's disconnect ending the model's request,
// and a shutdown ending an open stream with an `error` event.
import http, { type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { NOT_FOUND_ANSWER } from '../../src/answer/extractive.js';
import type { RateLimitDecision, RateLimiter } from '../../src/http/rate-limit.js';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import { SseParser, type SseEvent } from '../../src/providers/llm/sse.js';
import { KEYS, call, startTestApp, type TestApp } from '../helpers/app.js';
import { FakeOpenAI, type FakeChatBody, type FakeReply } from '../helpers/fake-openai.js';
import { ENGINES } from '../helpers/stores.js';

const ANSWER = '/api/v1/documents/answer';
const STREAM = { accept: 'text/event-stream' };

const PASSAGES = [
  { content: 'Bitcoin is a peer-to-peer electronic cash system. A trusted third party is not required to prevent double-spending; the network timestamps transactions.', metadata: { topic: 'bitcoin' } },
  { content: 'The four golden signals of monitoring are latency, traffic, errors, and saturation. Focus on these four metrics.', metadata: { topic: 'sre' } },
  { content: 'Alice was beginning to get very tired of sitting by her sister on the bank. The White Rabbit ran by.', metadata: { topic: 'alice' } },
  { content: 'Use ctrl-r to search through command history in Bash. Learn **man bash** early.', metadata: { topic: 'shell' } },
];

interface Event {
  event: string;
  data: unknown;
}

interface Source {
  document_id: number;
  sentence_ids: number[];
}

interface Body {
  data: { answer: string; sources: Source[] } & Record<string, unknown>;
  meta: { timestamp: string; version: string };
  [key: string]: unknown;
}

function events(text: string): Event[] {
  const parser = new SseParser();
  return [...parser.push(text), ...parser.end()].map((e: SseEvent) => ({ event: e.event ?? 'message', data: JSON.parse(e.data) }));
}

/** The events of a streamed answer, checked for their order: sources, deltas, done or error. */
async function streamAsk(t: TestApp, body: unknown, key: string = KEYS.read) {
  const res = await call(t.app, 'POST', ANSWER, { key, body, headers: STREAM });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('text/event-stream');
  expect(res.headers['cache-control']).toBe('no-cache');
  expect(res.headers['x-accel-buffering']).toBe('no');
  expect(res.headers['x-request-id']).toBeTruthy();
  const all = events(res.body);
  expect(all[0].event).toBe('sources');
  expect(['done', 'error']).toContain(all.at(-1)!.event);
  expect(all.slice(1, -1).every((e) => e.event === 'delta')).toBe(true);
  const deltas = all.slice(1, -1).map((e) => (e.data as { text: string }).text);
  return {
    sources: all[0].data as Source[],
    deltas,
    text: deltas.join(''),
    last: all.at(-1)!,
    done: all.at(-1)!.data as Body,
    mode: res.trailers['x-folio-answer-mode'],
  };
}

async function jsonAsk(t: TestApp, body: unknown) {
  const res = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body });
  expect(res.statusCode, res.body).toBe(200);
  return { body: res.json() as Body, mode: res.headers['x-folio-answer-mode'] };
}

/** A body without its timestamp, which differs between two responses. */
function timeless(body: Body) {
  expect(body.meta.timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
  return { ...body, meta: { ...body.meta, timestamp: '' } };
}

async function ingestPassages(t: TestApp): Promise<number[]> {
  const ids: number[] = [];
  for (const p of PASSAGES) {
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
      body: { embedding: Array.from(hashEmbed(p.content)), content: p.content, metadata: p.metadata },
    });
    expect(res.statusCode, res.body).toBe(201);
    ids.push(res.json().data.document_id);
  }
  return ids;
}

/** An app on a real port, for what inject cannot do: read events as they come, hang up. */
async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}${ANSWER}`;
}

/**
 * A streamed answer over its own connection (node:http without an agent: fetch's pool opens a
 * spare connection after an abort, which would hold the server's close until its timeout).
 */
async function openStream(url: string, body: unknown) {
  const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'x-api-key': KEYS.read, ...STREAM } });
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', resolve).on('error', reject);
    req.end(JSON.stringify(body));
  });
  const parser = new SseParser();
  const seen: Event[] = [];
  let ended = false;
  let wake = () => {};
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    for (const e of parser.push(chunk)) seen.push({ event: e.event ?? 'message', data: JSON.parse(e.data) });
    wake();
  });
  res.on('close', () => {
    ended = true;
    wake();
  });
  return {
    status: res.statusCode,
    /** The events so far once `until` holds of them, or the stream has ended. */
    async until(until: (seen: Event[]) => boolean): Promise<Event[]> {
      while (!until(seen) && !ended) await new Promise<void>((resolve) => (wake = resolve));
      return seen;
    },
    hangUp: () => req.destroy(),
  };
}

describe.each(ENGINES)('streamed answers without a language model on %s', (engine) => {
  let t: TestApp;
  let deny = false;
  const limiter: RateLimiter = {
    consume: async (): Promise<RateLimitDecision> => ({ allowed: !deny, limit: 10, remaining: deny ? 0 : 9, resetSeconds: 7 }),
    close: async () => {},
  };

  beforeAll(async () => {
    t = await startTestApp(engine, { rateLimiter: limiter });
    await ingestPassages(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['an extractive answer', { question: 'What is required to prevent double-spending?' }],
    ['a plain-text answer of several sentences', { question: 'What are the four golden signals and how do I search command history in Bash?', format: 'PLAIN_TEXT', top_k: 2 }],
    ['a filtered answer', { question: 'Who ran by Alice?', metadata_filter: { topic: 'alice' }, top_k: 1 }],
    ['an optimised question', { question: 'What are the four golden signals of monitoring?', optimize_question: true, optimize_metadata: true }],
    ['nothing relevant found', { question: 'How many moons does Neptune have?' }],
    ['no page matching the filters', { question: 'What is required to prevent double-spending?', metadata_filter: { topic: 'none' } }],
  ])('streams %s: sources, deltas making the answer, done equal to the JSON body', async (_name, body) => {
    const streamed = await streamAsk(t, body);
    const json = await jsonAsk(t, body);
    expect(streamed.last.event).toBe('done');
    expect(timeless(streamed.done)).toEqual(timeless(json.body));
    expect(streamed.text).toBe(json.body.data.answer);
    expect(streamed.sources).toEqual(json.body.data.sources);
    expect(streamed.mode).toBe(json.mode);
    if (json.body.data.answer !== NOT_FOUND_ANSWER) expect(streamed.deltas.length).toBeGreaterThan(1);
  });

  it('answers as JSON, as before, without the Accept header or when JSON is preferred', async () => {
    const body = { question: 'What is required to prevent double-spending?' };
    for (const accept of [undefined, 'application/json', 'application/json, text/event-stream;q=0.5', '*/*']) {
      const res = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body, headers: accept ? { accept } : {} });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['x-folio-answer-mode']).toBe('extractive');
      expect(res.json()).toMatchObject({ success: true, data: { answer: expect.stringContaining('[1]') } });
    }
    const both = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body, headers: { accept: 'application/json, text/event-stream' } });
    expect(both.headers['content-type']).toBe('text/event-stream');
  });

  it('answers errors before the stream as usual: 422, 400, 401, 429', async () => {
    const invalid = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body: { question: '' }, headers: STREAM });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(invalid.json().detail).toContainEqual(expect.objectContaining({ loc: ['body', 'question'], type: 'string_too_short' }));

    const malformed = await call(t.app, 'POST', ANSWER, { key: KEYS.read, rawBody: '{"question":', headers: STREAM });
    expect(malformed.statusCode).toBe(422);

    const filter = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body: { question: 'x', metadata_filter: { kind: { $foo: 1 } } }, headers: STREAM });
    expect(filter.statusCode).toBe(400);
    expect(filter.json()).toMatchObject({ success: false, error: { error_code: 'INVALID_FILTER' } });

    const anonymous = await call(t.app, 'POST', ANSWER, { key: null, body: { question: 'q' }, headers: STREAM });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ error: { error_code: 'UNAUTHORIZED' } });

    deny = true;
    try {
      const limited = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body: { question: 'q' }, headers: STREAM });
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBe('7');
      expect(limited.json()).toMatchObject({ error: { error_code: 'RATE_LIMIT_EXCEEDED' } });
    } finally {
      deny = false;
    }
    const allowed = await call(t.app, 'POST', ANSWER, { key: KEYS.read, body: { question: 'q' }, headers: STREAM });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['ratelimit-remaining']).toBe('9');
  });

  it('documents the event stream beside the JSON response in /openapi.json', async () => {
    const spec = (await call(t.app, 'GET', '/openapi.json', { key: null })).json();
    const operation = spec.paths['/api/v1/documents/answer'].post;
    expect(operation.operationId).toBe('answerQuestion');
    const content = operation.responses['200'].content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'text/event-stream']);
    const events = content['text/event-stream'].schema.anyOf.map((e: { properties: { event: { enum: string[] } } }) => e.properties.event.enum[0]);
    expect(events).toEqual(['sources', 'delta', 'done', 'error']);
    expect(content['application/json'].schema.properties.data.properties.answer).toEqual({ type: 'string' });
  });
});

// ---------------------------------------------------------------------------------------------
// With a language model

/** The numbered passages of a grounded-answer prompt: number -> text. */
function promptPassages(body: FakeChatBody): Map<number, string> {
  const user = body.messages.find((m) => m.role === 'user')!.content;
  const out = new Map<number, string>();
  for (const m of user.matchAll(/^\[(\d+)\] \(document \d+, page \d+\)\n([^\n]*)/gm)) out.set(Number(m[1]), m[2]);
  return out;
}

/** The record of the (first) chat request, beside the embedding requests. */
function chatRequest(fake: FakeOpenAI) {
  return fake.requests.find((r) => r.path === '/v1/chat/completions')!;
}

function passageWith(body: FakeChatBody, phrase: string): number {
  return [...promptPassages(body)].find(([, text]) => text.includes(phrase))![0];
}

/** A model answering `answer` (with {n}, the number of the passage holding `phrase`), citing that passage. */
function citing(phrase: string, answer: string, extra: Partial<FakeReply> = {}): (body: FakeChatBody) => FakeReply {
  return (body) => {
    const n = passageWith(body, phrase);
    return { content: { answerable: true, answer: answer.replaceAll('{n}', String(n)), citations: [{ passage: n, quote: phrase }] }, ...extra } as FakeReply;
  };
}

describe.each(ENGINES)('streamed answers with a language model on %s', (engine) => {
  let t: TestApp;
  let fake: FakeOpenAI;
  let url: string;
  const question = 'What are the four golden signals of monitoring?';

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    t = await startTestApp(engine, { env: { OPENAI_BASE_URL: fake.baseUrl, FOLIO_LLM_MODEL: 'fake-chat', FOLIO_LLM_TIMEOUT_MS: '2000' } });
    await ingestPassages(t);
    url = await listen(t);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.reset();
  });

  it('streams the model, forwarding its answer text as it arrives, and ends with the JSON body', async () => {
    const reply = citing('latency, traffic, errors, and saturation', 'The signals are **latency**, traffic, errors and saturation [{n}]. Watch them [{n}][9].', { chunkDelayMs: 5 });
    fake.enqueue(reply);
    const streamed = await streamAsk(t, { question, top_k: 3 });
    expect(fake.chatRequests).toHaveLength(1);
    expect(fake.chatRequests[0].stream).toBe(true);
    const n = passageWith(fake.chatRequests[0], 'latency, traffic');

    // The deltas are the model's text as written, its markers the passages listed by sources.
    expect(streamed.text).toBe(`The signals are **latency**, traffic, errors and saturation [${n}]. Watch them [${n}][9].`);
    expect(streamed.deltas.length).toBeGreaterThan(3);
    expect(streamed.sources).toHaveLength(PASSAGES.length);
    expect(streamed.sources[n - 1].document_id).toBe(streamed.done.data.sources[0].document_id);
    expect(streamed.sources.every((s) => s.sentence_ids.length === 0)).toBe(true);
    // done holds the checked answer: markers renumbered to its sources, the unsupported one gone.
    expect(streamed.done.data.answer).toBe('The signals are **latency**, traffic, errors and saturation [1]. Watch them [1].');
    expect(streamed.mode).toBe('llm');

    fake.enqueue(reply);
    const json = await jsonAsk(t, { question, top_k: 3 });
    expect(fake.chatRequests[1].stream).toBeUndefined();
    expect(timeless(streamed.done)).toEqual(timeless(json.body));
  });

  it('gives the same body as JSON for a plain-text answer, a refused one and a model that finds nothing', async () => {
    const cases: [string, unknown, (body: FakeChatBody) => FakeReply, string][] = [
      ['plain text', { question: 'How do I search the command history?', format: 'PLAIN_TEXT' }, citing('Use ctrl-r to search through command history', 'Press **ctrl-r** in `bash` [{n}].'), 'llm'],
      ['uncited', { question: 'What is required to prevent double-spending?' }, () => ({ content: { answerable: true, answer: 'No third party [1].', citations: [] } }), 'fallback'],
      ['not answerable', { question: 'How many moons does Neptune have?' }, () => ({ content: { answerable: false, answer: 'The passages do not say.', citations: [] } }), 'llm'],
    ];
    for (const [name, body, reply, mode] of cases) {
      fake.reset();
      fake.enqueue(reply, reply);
      const streamed = await streamAsk(t, body);
      const json = await jsonAsk(t, body);
      expect(timeless(streamed.done), name).toEqual(timeless(json.body));
      expect([streamed.mode, json.mode], name).toEqual([mode, mode]);
      if (name === 'uncited') {
        // The draft was streamed, then refused: done carries the extractive answer instead.
        expect(streamed.text).toBe('No third party [1].');
        expect(streamed.done.data.answer).toContain('A trusted third party is not required to prevent double-spending');
      }
      if (name === 'not answerable') {
        // The reply said so before its text: nothing of it is streamed.
        expect(streamed.sources).toEqual([]);
        expect(streamed.text).toBe(NOT_FOUND_ANSWER);
      }
    }
  });

  it('retries before anything was passed on, and not after', async () => {
    const reply = citing('White Rabbit ran by', 'The White Rabbit [{n}].');
    // A 503, then a stream cut before the answer's text began: both retried.
    fake.enqueue({ status: 503, message: 'overloaded', headers: { 'retry-after-ms': '1' } }, (body) => ({ ...reply(body), chunks: ['{"answerable": true, "an'], cutAfter: 1 }), reply);
    const retried = await streamAsk(t, { question: 'Who ran by Alice?' });
    expect(fake.chatRequests).toHaveLength(3);
    expect(retried.mode).toBe('llm');
    expect(retried.text).toBe(`The White Rabbit [${passageWith(fake.chatRequests[2], 'White Rabbit')}].`);
    expect(retried.done.data.answer).toBe('The White Rabbit [1].');

    // Cut after some of the answer was passed on: no retry, the extractive answer in done.
    fake.reset();
    fake.enqueue((body) => ({ ...reply(body), chunks: ['{"answerable": true, "answer": "The White', ' Rabbit [1]', '"'], cutAfter: 2 }));
    const cut = await streamAsk(t, { question: 'Who ran by Alice?' });
    expect(fake.chatRequests).toHaveLength(1);
    expect(cut.text).toBe('The White Rabbit [1]');
    expect(cut.mode).toBe('fallback');
    expect(cut.done.data.answer).toContain('The White Rabbit ran by. [1]');
  });

  it('streams the extractive answer when the model fails before writing', async () => {
    fake.setDefault({ status: 500, message: 'down', headers: { 'retry-after-ms': '1' } });
    const streamed = await streamAsk(t, { question: 'Who ran by Alice?' });
    expect(fake.chatRequests).toHaveLength(3);
    expect(streamed.mode).toBe('fallback');
    expect(streamed.text).toBe(streamed.done.data.answer);
    expect(streamed.sources).toEqual(streamed.done.data.sources);
  });

  it('forwards deltas while the model writes, and ends its request when the client hangs up', async () => {
    // The model writes part of its answer, then nothing more: what came is forwarded at once.
    fake.enqueue((body) => ({ ...citing('latency', 'Latency and traffic [{n}].')(body), chunks: ['{"answerable": true, "answer": "Latency', ' and'], hangAfter: 2 }));
    const stream = await openStream(url, { question });
    expect(stream.status).toBe(200);
    const seen = await stream.until((events) => events.filter((e) => e.event === 'delta').map((e) => (e.data as { text: string }).text).join('') === 'Latency and');
    expect(seen.map((e) => e.event)).toEqual(['sources', 'delta', 'delta']);
    expect(chatRequest(fake).aborted).toBe(false);
    stream.hangUp();
    await vi.waitFor(() => expect(chatRequest(fake).aborted).toBe(true), { timeout: 2000 });
    expect(fake.chatRequests).toHaveLength(1);
  });
});

describe.each(ENGINES)('a stream open at shutdown on %s', (engine) => {
  it('ends with an error event carrying the 503 envelope, and the model request is aborted', async () => {
    const fake = await FakeOpenAI.start();
    const t = await startTestApp(engine, {
      env: { OPENAI_BASE_URL: fake.baseUrl, FOLIO_LLM_MODEL: 'fake-chat', FOLIO_LLM_TIMEOUT_MS: '30000', FOLIO_SHUTDOWN_GRACE_MS: '100' },
    });
    let closing: Promise<void> | null = null;
    try {
      await ingestPassages(t);
      const url = await listen(t);
      fake.setDefault({ content: { answerable: true, answer: 'Latency [1].', citations: [] }, chunks: ['{"answerable": true, "answer": "Lat'], hangAfter: 1 });
      const stream = await openStream(url, { question: 'What are the four golden signals of monitoring?' });
      const started = await stream.until((events) => events.some((e) => e.event === 'delta'));
      expect(started.map((e) => e.event)).toEqual(['sources', 'delta']);

      const began = Date.now();
      closing = t.close();
      const all = await stream.until(() => false);
      expect(all.map((e) => e.event)).toEqual(['sources', 'delta', 'error']);
      expect(all[2].data).toMatchObject({ data: null, success: false, error: { error_code: 'SERVICE_UNAVAILABLE' }, meta: { version: '1.0.0' } });
      await closing;
      // The grace period (100 ms), not the model's timeout nor a kept-alive connection's.
      expect(Date.now() - began).toBeLessThan(5000);
      await vi.waitFor(() => expect(chatRequest(fake).aborted).toBe(true), { timeout: 2000 });
    } finally {
      await (closing ?? t.close());
      await fake.close();
    }
  });
});
