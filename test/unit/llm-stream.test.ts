// Streamed chat completions: the SSE parser on chunks split anywhere, and the OpenAI-compatible
// client streaming against the local fake server: content passed on piece by piece and folded
// into the response the same content gives unstreamed, retries only while the consumer has
// passed nothing on, a server that does not stream, errors inside the stream, the caller's abort.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmOutputError, LlmRequestError, createOpenAIChatProvider, type ChatStreamSink, type OpenAIChatOptions } from '../../src/providers/llm/index.js';
import { SseParser } from '../../src/providers/llm/sse.js';
import { FakeOpenAI } from '../helpers/fake-openai.js';

describe('SSE parser', () => {
  const STREAM =
    ': comment\r\n' +
    'data: {"a":1}\r\n\r\n' +
    'event: note\ndata: line one\ndata: line two\n\n' +
    'id: 7\nretry: 100\ndata:no space\r\r' +
    'data\n\n' +
    'data: [DONE]\n\n';
  const EXPECTED = [
    { event: null, data: '{"a":1}' },
    { event: 'note', data: 'line one\nline two' },
    { event: null, data: 'no space' },
    { event: null, data: '' },
    { event: null, data: '[DONE]' },
  ];

  it('parses events, comments, multi-line data and every line ending', () => {
    const parser = new SseParser();
    expect([...parser.push(STREAM), ...parser.end()]).toEqual(EXPECTED);
  });

  it('gives the same events however the text is split', () => {
    for (let size = 1; size <= 7; size++) {
      const parser = new SseParser();
      const events = [];
      for (let i = 0; i < STREAM.length; i += size) events.push(...parser.push(STREAM.slice(i, i + size)));
      events.push(...parser.end());
      expect(events, `pieces of ${size}`).toEqual(EXPECTED);
    }
    // Split between a CR and its LF: one line break, not two.
    const parser = new SseParser();
    expect([...parser.push('data: x\r'), ...parser.push('\n\r'), ...parser.push('\n')]).toEqual([{ event: null, data: 'x' }]);
  });

  it('dispatches a last event left without its blank line at the end', () => {
    const parser = new SseParser();
    expect(parser.push('data: a\n\ndata: b')).toEqual([{ event: null, data: 'a' }]);
    expect(parser.end()).toEqual([{ event: null, data: 'b' }]);
    const cr = new SseParser();
    expect([...cr.push('data: c\r'), ...cr.end()]).toEqual([{ event: null, data: 'c' }]);
  });
});

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['city', 'population'],
  properties: { city: { type: 'string' }, population: { type: 'integer' } },
};
const messages = [{ role: 'user' as const, content: 'Vienna has 2 million people.' }];

/** A sink that records the pieces and counts as committed once `commitAfter` pieces came. */
function recorder(commitAfter = Infinity) {
  const attempts: string[][] = [];
  const sink: ChatStreamSink = {
    delta: (text) => attempts.at(-1)!.push(text),
    committed: () => (attempts.at(-1)?.length ?? 0) >= commitAfter,
    restart: () => attempts.push([]),
  };
  return { sink, attempts };
}

describe('OpenAI-compatible chat client, streamed', () => {
  let fake: FakeOpenAI;
  const client = (options: Partial<OpenAIChatOptions> = {}) =>
    createOpenAIChatProvider({ model: 'fake-model', baseUrl: fake.baseUrl, retryBaseMs: 5, ...options });

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
  });

  it('asks for a stream, passes the content on as it comes, and answers as unstreamed', async () => {
    const content = { city: 'Vienna', population: 2000000 };
    fake.enqueue({ content, chunks: ['{"city": "Vi', 'enna", "population"', ': 2000000}'] }, { content });
    const { sink, attempts } = recorder();
    const streamed = await client().chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA }, stream: sink });
    expect(fake.chatRequests[0].stream).toBe(true);
    expect(attempts).toEqual([['{"city": "Vi', 'enna", "population"', ': 2000000}']]);
    const plain = await client().chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA } });
    expect(fake.chatRequests[1].stream).toBeUndefined();
    expect(streamed.json).toEqual(content);
    // The same answer as the unstreamed call, but for the usage the stream did not report.
    expect({ ...streamed, usage: plain.usage }).toEqual({ ...plain, content: '{"city": "Vienna", "population": 2000000}' });
  });

  it('retries failures before anything was passed on: an error status, a cut stream, unusable output', async () => {
    const good = { city: 'Graz', population: 300000 };
    fake.enqueue(
      { status: 503, message: 'overloaded', headers: { 'retry-after-ms': '1' } },
      { content: good, chunks: ['{"city"', ': "Graz"'], cutAfter: 1 },
      { content: { city: 'Graz' } },
      { content: good },
    );
    const { sink, attempts } = recorder();
    const response = await client({ maxAttempts: 3 }).chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA }, stream: sink });
    expect(response.json).toEqual(good);
    expect(fake.chatRequests).toHaveLength(4);
    // Each attempt started afresh; the cut one had passed one piece to the sink, not on.
    expect(attempts.map((a) => a.join(''))).toEqual(['', '{"city"', '{"city":"Graz"}', JSON.stringify(good)]);
  });

  it('does not retry once the consumer has passed something on', async () => {
    fake.enqueue({ content: 'Vienna has two million', chunks: ['Vienna', ' has', ' two'], cutAfter: 2 }, { content: 'again' });
    const cut = recorder(1);
    const error = await client().chat({ messages, stream: cut.sink }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as Error).message).toMatch(/after part of the answer was passed on/);
    expect(cut.attempts).toEqual([['Vienna', ' has']]);
    expect(fake.chatRequests).toHaveLength(1);

    fake.reset();
    fake.enqueue({ content: { city: 'Vienna' } }, { content: { city: 'Vienna', population: 1 } });
    const invalid = recorder(1);
    await expect(client().chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA }, stream: invalid.sink })).rejects.toBeInstanceOf(LlmOutputError);
    expect(fake.chatRequests).toHaveLength(1);
  });

  it('takes a whole completion from a server that does not stream as one piece', async () => {
    fake.enqueue({ raw: JSON.stringify({ model: 'm', choices: [{ message: { role: 'assistant', content: 'Vienna.' }, finish_reason: 'stop' }] }) });
    const { sink, attempts } = recorder();
    const response = await client().chat({ messages, stream: sink });
    expect(response.content).toBe('Vienna.');
    expect(attempts).toEqual([['Vienna.']]);
  });

  it('reports an error event inside the stream, a garbled event, a refusal and a cut-short answer', async () => {
    const sse = (...events: unknown[]) => ({
      raw: events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join(''),
      contentType: 'text/event-stream',
    });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ choices: [{ index: 0, delta, finish_reason: finish }] });
    const ask = () => client({ outputRetries: 0, maxAttempts: 1 }).chat({ messages, jsonSchema: { name: 'facts', schema: SCHEMA }, stream: recorder().sink });

    fake.enqueue(sse(chunk({ content: '{"ci' }), { error: { message: 'upstream died' } }));
    await expect(ask()).rejects.toThrow(/failed mid-stream: upstream died/);
    fake.enqueue(sse(chunk({ content: '{"ci' }), '{"choices": [', '[DONE]'));
    await expect(ask()).rejects.toThrow(/stream event is not JSON/);
    fake.enqueue(sse(chunk({ refusal: 'I cannot ' }), chunk({ refusal: 'help' }, 'stop'), '[DONE]'));
    await expect(ask()).rejects.toThrow(/the model refused: I cannot help/);
    fake.enqueue({ content: '{"city": "Vie', finishReason: 'length' });
    await expect(ask()).rejects.toThrow(/cut short/);
    // Ended without [DONE] or a finish reason: broken off, not complete.
    fake.enqueue(sse(chunk({ content: '{"city": "Graz", "population": 1}' })));
    await expect(ask()).rejects.toThrow(/stream ended before the answer was complete/);
    // A finish reason without [DONE] is complete.
    fake.enqueue(sse(chunk({ content: '{"city": "Graz", "population": 1}' }, 'stop')));
    expect((await ask()).json).toEqual({ city: 'Graz', population: 1 });
  });

  it('stops when the caller aborts mid-stream', async () => {
    fake.enqueue({ content: 'Vienna has two million people', chunks: ['Vienna', ' has'], hangAfter: 2 });
    const controller = new AbortController();
    const { sink, attempts } = recorder();
    const pending = client({ timeoutMs: 5000 }).chat({ messages, signal: controller.signal, stream: sink });
    while ((attempts.at(-1)?.length ?? 0) < 2) await new Promise((r) => setTimeout(r, 5));
    controller.abort(new Error('client went away'));
    await expect(pending).rejects.toThrow('client went away');
    await expect.poll(() => fake.requests[0].aborted).toBe(true);
  });
});
