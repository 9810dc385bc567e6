// Keys, scopes and workspaces over HTTP: 401 without a valid key, 403 without the scope,
// 404 for another workspace's ids, and key management by a workspace admin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/stores.js';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';

describe.each(ENGINES)('authentication and workspaces on %s', (engine) => {
  let t: TestApp;
  let docId: number;
  let pageId: number;
  let taskId: string;

  beforeAll(async () => {
    t = await startTestApp(engine);
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
      body: { embedding: vector(9), content: 'Private text.', external_id: 'secret', metadata: { owner: 'alpha' } },
    });
    docId = res.json().data.document_id;
    taskId = res.json().data.task_identifier;
    pageId = (await t.store.db.selectFrom('pages').select('id').where('document_id', '=', docId).executeTakeFirstOrThrow()).id;
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 401 without a key and with an unknown key, in the envelope', async () => {
    for (const key of [null, 'not-a-key', '']) {
      const res = await call(t.app, 'GET', `/api/v1/documents/internal/${docId}`, { key });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ success: false, data: null, error: { error_code: 'UNAUTHORIZED' } });
    }
  });

  it('answers 401 with the bare shape on the content endpoints', async () => {
    const res = await call(t.app, 'GET', `/api/v1/documents/content/pages/${pageId}`, { key: null });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error_code: 'UNAUTHORIZED', message: expect.any(String) });
  });

  it('checks authentication before validating the body', async () => {
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { key: null, rawBody: '{broken' });
    expect(res.statusCode).toBe(401);
  });

  it('lets a read key read but answers 403 to its writes', async () => {
    expect((await call(t.app, 'GET', `/api/v1/documents/internal/${docId}`, { key: KEYS.read })).statusCode).toBe(200);
    expect((await call(t.app, 'POST', '/api/v1/documents/delete/preview', { key: KEYS.read, body: {} })).statusCode).toBe(200);
    const writes: [string, string, unknown][] = [
      ['POST', '/api/v1/documents/ingest/embedding', { embedding: vector(1), content: 'x' }],
      ['PATCH', '/api/v1/documents/external/secret/metadata', { metadata: { a: 1 } }],
      ['DELETE', `/api/v1/documents/internal/${docId}`, undefined],
      ['DELETE', '/api/v1/documents/external/secret', undefined],
      ['GET', '/api/v1/keys', undefined],
    ];
    for (const [method, url, body] of writes) {
      const res = await call(t.app, method, url, { key: KEYS.read, body });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().error.error_code).toBe('FORBIDDEN');
    }
    expect((await call(t.app, 'GET', `/api/v1/documents/internal/${docId}`)).statusCode).toBe(200);
  });

  it("answers 404 for another workspace's ids, exactly as for missing ones", async () => {
    const urls = [
      `/api/v1/documents/internal/${docId}`,
      `/api/v1/documents/task/${taskId}`,
      '/api/v1/documents/external/secret',
      '/api/v1/documents/external/secret/versions',
      `/api/v1/tasks/status/${taskId}`,
      '/api/v1/documents/delete/external/secret/preview',
    ];
    for (const url of urls) {
      const res = await call(t.app, 'GET', url, { key: KEYS.other });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error.error_code).toBe('RESOURCE_NOT_FOUND');
    }
    expect((await call(t.app, 'GET', `/api/v1/documents/content/pages/${pageId}`, { key: KEYS.other })).statusCode).toBe(404);
    expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${docId}`, { key: KEYS.other })).statusCode).toBe(404);
    expect((await call(t.app, 'PATCH', '/api/v1/documents/external/secret/metadata', { key: KEYS.other, body: { metadata: { owner: 'beta' } } })).statusCode).toBe(404);
    const preview = await call(t.app, 'POST', '/api/v1/documents/delete/preview', { key: KEYS.other, body: { metadata_filter: { owner: 'alpha' } } });
    expect(preview.json().data).toEqual({ document_count: 0, document_ids: [] });
    // Untouched by the foreign key.
    const own = await call(t.app, 'GET', `/api/v1/documents/internal/${docId}`);
    expect(own.json().data.document_metadata).toEqual({ owner: 'alpha' });
  });

  it('lets an admin create, list and revoke keys of its own workspace', async () => {
    const created = await call(t.app, 'POST', '/api/v1/keys', { key: KEYS.admin, body: { scope: 'read', label: 'ci' } });
    expect(created.statusCode, created.body).toBe(201);
    const { key, id, workspace, scope } = created.json().data;
    expect(key).toMatch(/^folio_/);
    expect({ workspace, scope }).toEqual({ workspace: 'alpha', scope: 'read' });

    expect((await call(t.app, 'GET', `/api/v1/documents/internal/${docId}`, { key })).statusCode).toBe(200);
    expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${docId}`, { key })).statusCode).toBe(403);

    const listed = await call(t.app, 'GET', '/api/v1/keys', { key: KEYS.admin });
    expect(listed.json().data).toContainEqual(expect.objectContaining({ id, scope: 'read', label: 'ci', revoked_at: null }));
    expect(JSON.stringify(listed.json())).not.toContain(key);

    // The stored form is a hash, never the key.
    const stored = await t.store.db.selectFrom('api_keys').select('key_hash').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.key_hash).not.toContain(key);
    expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/);

    expect((await call(t.app, 'DELETE', `/api/v1/keys/${id}`, { key: KEYS.other })).statusCode).toBe(403);
    const revoked = await call(t.app, 'DELETE', `/api/v1/keys/${id}`, { key: KEYS.admin });
    expect(revoked.statusCode).toBe(200);
    expect((await call(t.app, 'GET', `/api/v1/documents/internal/${docId}`, { key })).statusCode).toBe(401);
    expect((await call(t.app, 'DELETE', `/api/v1/keys/${id}`, { key: KEYS.admin })).statusCode).toBe(404);
  });

  it('answers 422 for a key scope that does not exist', async () => {
    const res = await call(t.app, 'POST', '/api/v1/keys', { key: KEYS.admin, body: { scope: 'root' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc[0]).toBe('body');
  });

  it('serves /health, /ready, /openapi.json and /docs without a key', async () => {
    expect((await call(t.app, 'GET', '/health', { key: null })).json()).toEqual({ status: 'ok' });
    expect((await call(t.app, 'GET', '/ready', { key: null })).json()).toMatchObject({ status: 'ready', engine });
    const spec = await call(t.app, 'GET', '/openapi.json', { key: null });
    expect(spec.statusCode).toBe(200);
    const paths = Object.keys(spec.json().paths);
    for (const p of [
      '/api/v1/documents/ingest/embedding',
      '/api/v1/documents/task/{task_identifier}',
      '/api/v1/documents/internal/{document_id}',
      '/api/v1/documents/external/{external_id}',
      '/api/v1/documents/external/{external_id}/versions',
      '/api/v1/documents/content/pages/{page_id}',
      '/api/v1/documents/content/paragraphs/{paragraph_id}',
      '/api/v1/documents/external/{external_id}/metadata',
      '/api/v1/documents/delete/external/{external_id}/preview',
      '/api/v1/documents/delete/preview',
      '/api/v1/tasks/status/{task_identifier}',
    ]) {
      expect(paths).toContain(p);
    }
    expect(spec.json().components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    const docs = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toContain('text/html');
  });

  it('echoes a request id header, or makes one', async () => {
    const given = await call(t.app, 'GET', '/health', { key: null, headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers['x-request-id']).toBe('abc-123');
    const made = await call(t.app, 'GET', '/health', { key: null });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
