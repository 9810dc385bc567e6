// GET /metrics: off without FOLIO_METRICS_TOKEN, behind the token with it, and counting what
// the service did (requests, searches by mode, pages ingested, tasks, pool, page index).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../helpers/multipart.js';
import { ENGINES } from '../helpers/stores.js';
import { until } from '../helpers/poll.js';
import { waitForTask } from '../helpers/tasks.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const TOKEN = 'metrics-test-token';

/** The value of one sample line, `name{labels} value`; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe('metrics are off without a token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite');
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 404 at /metrics', async () => {
    const res = await call(t.app, 'GET', '/metrics', { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(404);
  });
});

describe.each(ENGINES)('metrics on %s', (engine) => {
  let t: TestApp;
  let receiver: Receiver;
  const scrape = async () => {
    const res = await call(t.app, 'GET', '/metrics', { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    // Fails the first attempt at each event, then takes it.
    receiver.respond = (_request, previous) => (previous % 2 === 0 ? 500 : 204);
    t = await startTestApp(engine, {
      env: { FOLIO_METRICS_TOKEN: TOKEN, FOLIO_URL_ALLOWLIST: '127.0.0.1' },
      webhooks: { retryBaseMs: 50, pollMs: 50 },
    });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('refuses a scrape without the token or with another one, in the error envelope', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }];
    for (const headers of attempts) {
      const res = await call(t.app, 'GET', '/metrics', { key: null, headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.json()).toMatchObject({ success: false, data: null, error: { error_code: 'UNAUTHORIZED' } });
    }
  });

  it('counts requests by route template and status, searches by mode, ingested pages and the page index', async () => {
    const before = await scrape();
    const ingested = (name: string) => sample(name, 'folio_pages_ingested_total') ?? 0;
    for (let i = 0; i < 3; i++) {
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body: { content: `Metric page ${i}.`, embedding: vector(i + 1) } });
      expect(res.statusCode, res.body).toBe(201);
    }
    const upload = multipartBody({}, { filename: 'two.txt', contentType: 'text/plain', data: Buffer.from('A page about metrics and counters.') });
    const accepted = await call(t.app, 'POST', '/api/v1/documents/ingest', { rawBody: upload.payload, headers: upload.headers });
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect((await waitForTask(t.app, accepted.json().data.task_identifier)).status).toBe('COMPLETED');

    expect((await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { query: 'metric page', alpha: 0 } })).statusCode).toBe(200);
    expect((await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { query: 'metric page', alpha: 0.5 } })).statusCode).toBe(200);
    expect((await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { embedding: vector(1) } })).statusCode).toBe(200);
    expect((await call(t.app, 'GET', '/api/v1/documents/internal/999999')).statusCode).toBe(404);

    const after = await scrape();
    expect(ingested(after) - ingested(before)).toBe(4);
    for (const mode of ['keyword', 'hybrid', 'semantic']) {
      expect(sample(after, 'folio_search_duration_seconds_count', { mode })).toBe(1);
    }
    expect(sample(after, 'folio_http_requests_total', { route: '/api/v1/documents/ingest/embedding', method: 'POST', status: '201' })).toBe(3);
    expect(sample(after, 'folio_http_requests_total', { route: '/api/v1/documents/internal/:document_id', method: 'GET', status: '404' })).toBe(1);
    expect(sample(after, 'folio_http_request_duration_seconds_count', { route: '/api/v1/documents/search/pages', method: 'POST' })).toBe(3);
    expect(sample(after, 'folio_tasks', { kind: 'IngestFile', status: 'COMPLETED' })).toBe(1);
    expect(sample(after, 'folio_task_queue_oldest_age_seconds')).toBe(0);
    // The searches loaded the workspace's pages: three embedded and the uploaded file's one.
    expect(sample(after, 'folio_vector_index_pages')).toBe(4);
    expect(sample(after, 'folio_vector_index_bytes', { kind: 'used' })).toBeGreaterThan(0);
    expect(sample(after, 'folio_db_pool_connections', { state: 'max' })).toBe(engine === 'pglite' ? 1 : 10);
    // The webhook dispatcher and the task worker poll through the same pool (one connection on
    // the embedded engine), so a scrape may catch a statement waiting; none waits for long.
    await until(scrape, (body) => sample(body, 'folio_db_pool_connections', { state: 'waiting' }) === 0, 5000);
    expect(sample(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts webhook delivery attempts by outcome', async () => {
    const made = await call(t.app, 'POST', '/api/v1/webhooks', { key: KEYS.admin, body: { url: `${receiver.url}/hook`, events: ['document.deleted'] } });
    expect(made.statusCode, made.body).toBe(201);
    const stored = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body: { content: 'Deleted soon.', embedding: vector(9) } });
    expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${stored.json().data.document_id}`)).statusCode).toBe(200);
    await receiver.waitFor((received) => received.length === 2);
    // The success is recorded after the receiver answers: wait for the counter, not the request.
    const text = await until(scrape, (body) => sample(body, 'folio_webhook_deliveries_total', { outcome: 'succeeded' }) === 1, 5000);
    expect(sample(text, 'folio_webhook_deliveries_total', { outcome: 'retrying' })).toBe(1);
    expect(sample(text, 'folio_webhook_deliveries_total', { outcome: 'succeeded' })).toBe(1);
    expect(sample(text, 'folio_webhook_deliveries_total', { outcome: 'failed' }) ?? 0).toBe(0);
  });

  it('reports how long the oldest runnable task has waited', async () => {
    await t.runtime.worker!.stop();
    const upload = multipartBody({}, { filename: 'wait.txt', contentType: 'text/plain', data: Buffer.from('Waiting in the queue.') });
    const accepted = await call(t.app, 'POST', '/api/v1/documents/ingest', { rawBody: upload.payload, headers: upload.headers });
    expect(accepted.statusCode, accepted.body).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const text = await scrape();
    expect(sample(text, 'folio_task_queue_oldest_age_seconds')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'folio_tasks', { kind: 'IngestFile', status: 'PENDING' })).toBe(1);
  });
});
