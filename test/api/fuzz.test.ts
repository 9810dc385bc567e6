// Malformed requests over every route of /openapi.json, generated with fast-check from a
// fixed seed: no answer may be a 5xx, every error body must be in the documented shape, and
// the service must still be healthy and searchable afterwards. Runs on both engines.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';
import { malformedRequests, problemWith, routesOf, type Route } from '../helpers/malformed.js';
import { ENGINES } from '../helpers/stores.js';

const SEED = 20261124;
const RUNS = Number(process.env.FOLIO_FUZZ_RUNS ?? 2200);

describe.each(ENGINES)('malformed requests over every route (%s)', (engine) => {
  let t: TestApp;
  let routes: Route[];

  beforeAll(async () => {
    t = await startTestApp(engine, { env: { FOLIO_OCR: 'off' } });
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
