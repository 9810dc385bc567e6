// The event-stream responses of http/sse.ts on a small Fastify app: which Accept headers ask
// for a stream, the headers and frames, keep-alive comments, a failure after the start as an
// `error` event with the error body, the producer's signal when the client hangs up, and a
// closing server refusing new streams.
import http, { type IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { errors } from '../../src/errors.js';
import { EventStreams, acceptsEventStream, eventFrame, type EventSink } from '../../src/http/sse.js';

describe('acceptsEventStream', () => {
  it.each([
    ['text/event-stream', true],
    ['Text/Event-Stream; charset=utf-8', true],
    ['application/json, text/event-stream', true],
    ['text/event-stream;q=0.9, application/json;q=0.5', true],
    ['application/json, text/event-stream;q=0.5', false],
    ['text/event-stream;q=0', false],
    ['application/json', false],
    ['*/*', false],
    ['', false],
    [undefined, false],
  ])('%j -> %s', (accept, expected) => {
    expect(acceptsEventStream(accept)).toBe(expected);
  });

  it('writes an event as one data line', () => {
    expect(eventFrame('delta', { text: 'a\nb\r\n' })).toBe('event: delta\ndata: {"text":"a\\nb\\r\\n"}\n\n');
  });
});

describe('EventStreams', () => {
  let app: FastifyInstance | null = null;
  afterEach(async () => {
    await app?.close();
    app = null;
  });

  async function serve(produce: (sink: EventSink) => Promise<void>, options: { heartbeatMs?: number; before?: Promise<void> } = {}) {
    app = Fastify();
    const streams = new EventStreams(app, { shutdownGraceMs: 50, heartbeatMs: options.heartbeatMs });
    app.get('/events', async (request, reply) => {
      await options.before;
      return streams.send(request, reply, produce, ['x-mode']);
    });
    await app.ready();
    return app;
  }

  it('answers 200 text/event-stream with the events, comments and a trailer', async () => {
    const served = await serve(async (sink) => {
      sink.send('one', [1]);
      await new Promise((r) => setTimeout(r, 60));
      sink.send('two', { ok: true });
      sink.trailer('x-mode', 'fine');
    }, { heartbeatMs: 20 });
    const res = await served.inject({ method: 'GET', url: '/events' });
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    expect(res.trailers['x-mode']).toBe('fine');
    expect(res.body.startsWith(': stream open\n\nevent: one\ndata: [1]\n\n: keep-alive\n\n')).toBe(true);
    expect(res.body.endsWith('event: two\ndata: {"ok":true}\n\n')).toBe(true);
  });

  it('ends a failure after the start with an error event: the error body, 500 for the unknown', async () => {
    const known = await serve(async (sink) => {
      sink.send('one', 1);
      throw errors.notFound('Page 7');
    });
    const res = await known.inject({ method: 'GET', url: '/events' });
    expect(res.statusCode).toBe(200);
    expect(res.trailers['x-mode']).toBeUndefined();
    const last = res.body.trim().split('\n\n').at(-1)!;
    expect(last.split('\n')[0]).toBe('event: error');
    expect(JSON.parse(last.split('\n')[1].slice('data: '.length))).toMatchObject({
      data: null,
      success: false,
      error: { error_code: 'RESOURCE_NOT_FOUND', message: 'Page 7 not found' },
    });
    await known.close();

    const unknown = await serve(async () => {
      throw new TypeError('a bug');
    });
    const body = (await unknown.inject({ method: 'GET', url: '/events' })).body;
    expect(body).toContain('event: error\ndata: {"data":null,"success":false,"error":{"error_code":"INTERNAL_ERROR","message":"Internal server error"}');
    expect(body).not.toContain('a bug');
  });

  it('aborts the producer when the client hangs up', async () => {
    let signal: AbortSignal | null = null;
    const served = await serve(async (sink) => {
      signal = sink.signal;
      sink.send('waiting', null);
      await new Promise((resolve) => sink.signal.addEventListener('abort', resolve));
    });
    await served.listen({ port: 0, host: '127.0.0.1' });
    const { port } = served.server.address() as { port: number };
    const req = http.get(`http://127.0.0.1:${port}/events`, { agent: false });
    const res = await new Promise<IncomingMessage>((resolve) => req.on('response', resolve));
    await new Promise((resolve) => res.once('data', resolve));
    expect(signal!.aborted).toBe(false);
    req.on('error', () => {}).destroy();
    await expect.poll(() => signal!.aborted).toBe(true);
  });

  it('refuses a stream about to start once the server is closing', async () => {
    let release = () => {};
    const before = new Promise<void>((resolve) => (release = resolve));
    const served = await serve(async (sink) => sink.send('late', null), { before });
    const pending = served.inject({ method: 'GET', url: '/events' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closing = served.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    const res = await pending;
    expect(res.statusCode).toBe(503);
    expect(res.body).not.toContain('event:');
    await closing;
    app = null;
  });
});
