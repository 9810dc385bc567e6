// One regression test per class of malformed request the fuzz found answering 500 or outside
// the documented shapes: NUL characters, JSON nested too deep, broken multipart bodies,
// undecodable or overlong paths, oversized headers and bodies over real sockets.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/stores.js';

function expectEnvelopeError(res: { statusCode: number; json(): unknown }, status: number, code: string): void {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toMatchObject({ data: null, success: false, error: { error_code: code }, meta: { version: '1.0.0' } });
}

function expectIssue(res: { statusCode: number; json(): unknown }, loc: string[], type: string): void {
  expect(res.statusCode).toBe(422);
  expect((res.json() as { detail: unknown[] }).detail).toContainEqual(expect.objectContaining({ loc, type }));
}

const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

function form(boundary: string, body: string): { rawBody: string; headers: Record<string, string> } {
  return { rawBody: body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const FILE_PART = '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello';

describe.each(ENGINES)('malformed requests (%s)', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine);
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
      body: { embedding: vector(1), content: 'hello world', external_id: 'e1' },
    });
    expect(res.statusCode).toBe(201);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('refuses a NUL in any path parameter with a 422 naming it', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/api/v1/tasks/status/1%00', 'task_identifier'],
      ['GET', '/api/v1/documents/task/%00', 'task_identifier'],
      ['GET', '/api/v1/documents/external/%00/versions', 'external_id'],
      ['DELETE', '/api/v1/documents/external/1%00', 'external_id'],
      ['GET', '/api/v1/extractions/results/task/1%00', 'task_identifier'],
      ['GET', '/api/v1/documents/delete/external/%00/preview', 'external_id'],
      ['PATCH', '/api/v1/documents/external/a%00b/metadata', 'external_id'],
    ];
    for (const [method, url, name] of cases) {
      const res = await call(t.app, method, url, method === 'PATCH' ? { body: { metadata: {} } } : {});
      expectIssue(res, ['path', name], 'string_unicode');
    }
  });

  it('refuses a NUL in any string bound for the database: query, metadata, external id, filter, label', async () => {
    expectIssue(
      await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { query: 'a\u0000b', alpha: 0 } }),
      ['body', 'query'],
      'string_unicode',
    );
    expectIssue(
      await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { query: 'hello', metadata_filter: { k: { $in: ['x', 'a\u0000'] } } } }),
      ['body', 'metadata_filter', 'k', '$in', '1'],
      'string_unicode',
    );
    expectIssue(
      await call(t.app, 'POST', '/api/v1/documents/delete/preview', { body: { metadata_filter: { 'k\u0000': 1 } } }),
      ['body', 'metadata_filter', 'k\u0000'],
      'string_unicode',
    );
    expectIssue(
      await call(t.app, 'POST', '/api/v1/documents/answer', { body: { question: 'what?', metadata_filter: { k: 'a\u0000b' } } }),
      ['body', 'metadata_filter', 'k'],
      'string_unicode',
    );
    expectIssue(
      await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body: { embedding: vector(2), content: 'x', external_id: 'a\u0000', metadata: { v: '\u0000' } } }),
      ['body', 'external_id'],
      'string_unicode',
    );
    expectIssue(
      await call(t.app, 'POST', '/api/v1/keys', { key: KEYS.admin, body: { scope: 'read', label: 'a\u0000b' } }),
      ['body', 'label'],
      'string_unicode',
    );
  });

  it('answers a wrong JSON type in the body of POST /keys with a 422', async () => {
    expectIssue(await call(t.app, 'POST', '/api/v1/keys', { key: KEYS.admin, body: { scope: 1 } }), ['body', 'scope'], 'enum');
    expect((await call(t.app, 'POST', '/api/v1/keys', { key: KEYS.admin, body: [] })).statusCode).toBe(422);
    expect((await call(t.app, 'POST', '/api/v1/keys', { key: KEYS.admin, body: 'read' })).statusCode).toBe(422);
  });

  it('refuses JSON nested 50,000 levels deep with a 422 naming the depth limit', async () => {
    const bodies: [string, string, string][] = [
      ['POST', '/api/v1/documents/ingest/embedding', `{"content":"x","metadata":${deepObject(50_000)}}`],
      ['POST', '/api/v1/extractions', `{"name":"x","schema":${deepObject(50_000)}}`],
      ['PATCH', '/api/v1/documents/external/e1/metadata', `{"metadata":${deepObject(50_000)}}`],
      ['POST', '/api/v1/documents/search/pages', `{"query":"x","metadata_filter":${'['.repeat(50_000)}${']'.repeat(50_000)}}`],
    ];
    for (const [method, url, rawBody] of bodies) {
      const res = await call(t.app, method, url, { rawBody });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ type: 'json_too_deep', msg: 'JSON is nested deeper than 64 levels' });
    }
    // A megabyte of `[` is refused by a scan before JSON.parse would spend 200 ms on it.
    const brackets = await call(t.app, 'POST', '/api/v1/documents/search/pages', { rawBody: '['.repeat(1_000_000) });
    expect(brackets.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_too_deep' });
    // The metadata field of an upload is JSON too.
    const upload = await call(t.app, 'POST', '/api/v1/documents/ingest', form('XX', `--XX\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${deepObject(100)}\r\n${FILE_PART}\r\n--XX--\r\n`));
    expect(upload.statusCode).toBe(422);
    expect(upload.json().detail[0]).toMatchObject({ loc: ['body', 'metadata'], type: 'json_too_deep' });
    // Nesting within the limit is stored as sent.
    const ok = await call(t.app, 'PATCH', '/api/v1/documents/external/e1/metadata', { rawBody: `{"metadata":${deepObject(60)}}` });
    expect(ok.statusCode).toBe(200);
  });

  it('answers a multipart body that does not match its boundary, or ends early, with a 400', async () => {
    const broken = [
      form('YY', `${FILE_PART}\r\n--XX--\r\n`),
      form('XX', FILE_PART),
      { rawBody: 'garbage', headers: { 'content-type': 'multipart/form-data' } },
    ];
    for (const body of broken) {
      expectEnvelopeError(await call(t.app, 'POST', '/api/v1/documents/ingest', body), 400, 'INVALID_REQUEST');
      const run = await call(t.app, 'POST', '/api/v1/extractions/run/file', body);
      expect(run.statusCode).toBe(400);
      expect(run.json()).toEqual({ error_code: 'INVALID_REQUEST', message: expect.stringMatching(/multipart|boundary/i) });
    }
  });

  it('answers undecodable and overlong paths in the envelope', async () => {
    expectEnvelopeError(await call(t.app, 'GET', '/api/v1/documents/external/%C0%AE'), 400, 'INVALID_REQUEST');
    expectEnvelopeError(await call(t.app, 'GET', '/api/v1/documents/external/%ff'), 400, 'INVALID_REQUEST');
    expectEnvelopeError(await call(t.app, 'GET', `/api/v1/documents/external/${'a'.repeat(5000)}`), 414, 'URI_TOO_LONG');
    // The longest external id the API takes, percent-encoded 4-byte characters, still routes.
    const longest = encodeURIComponent('💩'.repeat(127) + 'x');
    expectEnvelopeError(await call(t.app, 'GET', `/api/v1/documents/external/${longest}`), 404, 'RESOURCE_NOT_FOUND');
  });
});

describe('malformed requests over a real socket', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp(ENGINES.at(-1)!);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    await t?.close();
  });

  function raw(request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(request));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  function envelopeOf(answer: string): unknown {
    return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
  }

  it('answers headers over the size limit with a 431 in the envelope', async () => {
    const answer = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(envelopeOf(answer)).toMatchObject({ success: false, error: { error_code: 'HEADERS_TOO_LARGE' } });
  });

  it('answers a request Node cannot parse with a 400 in the envelope', async () => {
    const answer = await raw('GARBAGE\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(envelopeOf(answer)).toMatchObject({ success: false, error: { error_code: 'INVALID_REQUEST' } });
  });

  it('lets a client that sends a whole oversized body read the 413', async () => {
    const body = Buffer.alloc(8 * 1024 * 1024, 'a');
    const answer = await new Promise<{ status?: number; body: string; error?: string }>((resolve) => {
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/api/v1/documents/search/pages', headers: { 'x-api-key': KEYS.write, 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode, body: text }));
        },
      );
      req.on('error', (error) => resolve({ body: '', error: error.message }));
      req.end(body);
    });
    expect(answer.error).toBeUndefined();
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { error_code: 'PAYLOAD_TOO_LARGE' } });
  });
});

describe('the embedded database stopped under a running service', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp('pglite');
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 503 in the envelope, and /ready says so, instead of hanging or a 500', async () => {
    expect((await call(t.app, 'GET', '/ready', { key: null })).statusCode).toBe(200);
    // Its thread ends: every statement from now on fails as a lost connection would.
    await t.store.close();
    const list = await call(t.app, 'GET', '/api/v1/documents/internal/1');
    expect(list.statusCode).toBe(503);
    expect(list.json()).toMatchObject({ success: false, data: null, error: { error_code: 'SERVICE_UNAVAILABLE' } });
    const ingest = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body: { embedding: vector(3), content: 'After the end.' } });
    expect(ingest.statusCode).toBe(503);
    expect((await call(t.app, 'GET', '/ready', { key: null })).statusCode).toBe(503);
  });
});
