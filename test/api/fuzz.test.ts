// Malformed requests over every route of /openapi.json, generated with fast-check from a
// fixed seed: no answer may be a 5xx, every error body must be in the documented shape, and
// the service must still be healthy and searchable afterwards. Over a real socket, a body
// declared over its route's limit is refused at once and one that arrives too slowly times
// out. Runs on both engines.
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';
import { malformedRequests, problemWith, routesOf, type Route } from '../helpers/malformed.js';
import { ENGINES } from '../helpers/stores.js';

const SEED = 20261124;
const RUNS = Number(process.env.FOLIO_FUZZ_RUNS ?? 2200);
const REQUEST_TIMEOUT_MS = 1500;

interface SocketAnswer {
  text: string;
  /** When the answer's first byte came, in ms after the request was sent. */
  answeredMs: number;
  /** When the server closed its side, in ms after the request was sent. */
  closedMs: number;
}

/** Sends `head` and `body` and keeps the socket open (a client still sending), until the server ends it. */
function sendAndHold(port: number, head: string, body: string, giveUpMs: number): Promise<SocketAnswer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let text = '';
    let answeredMs = -1;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head + body));
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ text, answeredMs, closedMs: Infinity });
    }, giveUpMs);
    socket.on('data', (chunk) => {
      if (answeredMs < 0) answeredMs = performance.now() - started;
      text += chunk.toString();
    });
    socket.on('end', () => {
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ text, answeredMs, closedMs: performance.now() - started });
    });
    socket.on('error', reject);
  });
}

function bodyOf(answer: string): Record<string, unknown> {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

describe.each(ENGINES)('malformed requests over every route (%s)', (engine) => {
  let t: TestApp;
  let routes: Route[];

  beforeAll(async () => {
    t = await startTestApp(engine, { env: { FOLIO_OCR: 'off', FOLIO_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) } });
    const seeded = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
      body: { embedding: vector(1), content: 'hello world from the fuzz seed', external_id: 'e1', metadata: { k: 'a'.repeat(30000), n: 1, tags: ['x'] } },
    });
    expect(seeded.statusCode).toBe(201);
    await call(t.app, 'POST', '/api/v1/extractions', { body: { name: 'seed', schema: { type: 'object', properties: { title: { type: 'string', description: 'The title' } } } } });
    routes = routesOf((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json());
  });

  afterAll(async () => {
    await t?.close();
  });

  it(`answers ${RUNS} generated malformed requests with no 5xx and documented error bodies`, async () => {
    expect(routes.length).toBeGreaterThan(25);
    const requests = fc.sample(malformedRequests(routes), { seed: SEED, numRuns: RUNS });
    const problems = new Map<string, string>();
    const covered = new Set<string>();
    for (const request of requests) {
      const headers: Record<string, string> = { ...request.headers };
      if (request.key !== null) headers['x-api-key'] = request.key;
      const res = await t.app.inject({ method: request.method as 'GET', url: request.url, headers, payload: request.payload });
      covered.add(`${request.route.method} ${request.route.path}`);
      const problem = problemWith(request, res.statusCode, res.body);
      const kind = `${request.route.method} ${request.route.path}: ${problem}`;
      if (problem && !problems.has(kind)) {
        problems.set(kind, `${request.url.slice(0, 200)} ${String(request.payload ?? '').slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 300)}`);
      }
    }
    expect([...problems.entries()].map(([k, v]) => `${k}\n    ${v}`)).toEqual([]);
    expect(covered.size).toBe(routes.length);
  }, 600_000);

  it('refuses a body declared over the limit at once on every route that takes one, and closes the connection', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const withBody = routes.filter((route) => route.json || route.multipart);
    expect(withBody.length).toBeGreaterThan(10);
    for (const route of withBody) {
      const path = route.path.replace(/\{\w+\}/g, 'some-id');
      const type = route.multipart ? 'multipart/form-data; boundary=x' : 'application/json';
      const head = `${route.method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEYS.admin}\r\nContent-Type: ${type}\r\nContent-Length: 10737418240\r\n\r\n`;
      const answer = await sendAndHold(port, head, '{"a":1}', 5000);
      const where = `${route.method} ${route.path}`;
      expect(answer.text.split('\r\n')[0], where).toBe('HTTP/1.1 413 Payload Too Large');
      expect(answer.answeredMs, where).toBeLessThan(1000);
      expect(answer.closedMs, where).toBeLessThan(1000);
      expect(JSON.stringify(bodyOf(answer.text)), where).toContain('PAYLOAD_TOO_LARGE');
    }
  });

  it('answers a body that arrives too slowly with a 408 after the request deadline, in the envelope', async () => {
    const port = (t.app.server.address() as net.AddressInfo).port;
    const head = `POST /api/v1/documents/search/pages HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEYS.read}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    const answer = await sendAndHold(port, head, '{"query":', 20_000);
    expect(answer.text.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(bodyOf(answer.text)).toMatchObject({ success: false, error: { error_code: 'REQUEST_TIMEOUT' } });
    expect(answer.closedMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(answer.closedMs).toBeLessThan(REQUEST_TIMEOUT_MS * 2 + 1000);
  });

  it('is healthy and searchable afterwards', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    const ingested = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
      key: KEYS.other,
      body: { embedding: vector(42), content: 'after the storm', external_id: 'after' },
    });
    expect(ingested.statusCode).toBe(201);
    const found = await call(t.app, 'POST', '/api/v1/documents/search/pages', { key: KEYS.other, body: { embedding: vector(42), top_k: 1 } });
    expect(found.statusCode).toBe(200);
    expect(found.json().data.results[0].content).toBe('after the storm');
  });
});
