// Signed webhooks on each engine: endpoints (admin scope, secret shown once, URL and events
// validated, the address guard at creation), delivery of task and deletion events to a local
// receiver that checks signatures with the recipe of docs/guides/webhooks.md, retries until a success, giving up,
// the guard at delivery time, disabling, and workspaces kept apart. Order is never assumed.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { API_KEYS_ENV, KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../helpers/multipart.js';
import { ENGINES } from '../helpers/stores.js';
import { waitForTask } from '../helpers/tasks.js';
import { until } from '../helpers/poll.js';
import { startReceiver, verifyFolioSignature, type Received, type Receiver } from '../helpers/webhook-receiver.js';
import type { AttemptOutcome, AttemptReport } from '../../src/webhooks/delivery.js';

const BETA_ADMIN = 'test-beta-admin-key';
const ALL_EVENTS = ['task.completed', 'task.failed', 'document.deleted'];

interface Hook {
  id: number;
  secret: string;
}

interface DeliveryBody {
  id: number;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  response_code: number | null;
  duration_ms: number | null;
  error: string | null;
  next_attempt_at: string | null;
  attempts: { attempt: number; response_code: number | null; duration_ms: number; error: string | null }[];
}

async function createHook(t: TestApp, url: string, events: string[] = ALL_EVENTS, key: string = KEYS.admin): Promise<Hook> {
  const res = await call(t.app, 'POST', '/api/v1/webhooks', { key, body: { url, events } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as Hook;
}

async function deliveries(t: TestApp, id: number, key: string = KEYS.admin): Promise<DeliveryBody[]> {
  const res = await call(t.app, 'GET', `/api/v1/webhooks/${id}/deliveries`, { key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as DeliveryBody[];
}


async function ingestEmbedding(t: TestApp, content: string, key: string = KEYS.write, externalId?: string): Promise<{ task_identifier: string; document_id: number }> {
  const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { key, body: { embedding: vector(content.length + 7), content, external_id: externalId } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

const onPath = (path: string) => (r: Received) => r.path === path;

describe.each(ENGINES)('webhooks (%s)', { timeout: 120_000 }, (engine) => {
  let t: TestApp;
  let receiver: Receiver;
  const outcomes: AttemptOutcome[] = [];
  const created: { id: number; key: string }[] = [];

  async function hook(path: string, events: string[] = ALL_EVENTS, key: string = KEYS.admin): Promise<Hook> {
    const made = await createHook(t, `${receiver.url}${path}`, events, key);
    created.push({ id: made.id, key });
    return made;
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.respond = (request, previous) => {
      if (request.path === '/missing') return 404;
      if (request.path === '/flaky') return previous < 2 ? 500 : 200;
      if (request.path === '/down') return 503;
      return 200;
    };
    t = await startTestApp(engine, {
      env: { FOLIO_API_KEYS: `${API_KEYS_ENV},${BETA_ADMIN}:beta:admin`, FOLIO_URL_ALLOWLIST: '127.0.0.1', FOLIO_OCR: 'off' },
      webhooks: { retryBaseMs: 50, maxAttempts: 4, pollMs: 100, onAttempt: (report: AttemptReport) => outcomes.push(report.outcome) },
    });
  });

  afterEach(async () => {
    // Each test's endpoints go, so later events are not sent to them.
    for (const { id, key } of created.splice(0)) await call(t.app, 'DELETE', `/api/v1/webhooks/${id}`, { key });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('creates, lists and deletes endpoints; the secret is shown once', async () => {
    const res = await call(t.app, 'POST', '/api/v1/webhooks', {
      key: KEYS.admin,
      body: { url: `${receiver.url}/crud`, events: ['task.completed', 'task.completed'], description: 'CI hook' },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ success: true, error: null });
    const made = res.json().data;
    expect(made).toMatchObject({ url: `${receiver.url}/crud`, events: ['task.completed'], description: 'CI hook', disabled: false, disabled_at: null, disabled_reason: null });
    expect(made.secret).toMatch(/^whsec_[\w-]{40,}$/);

    const listed = await call(t.app, 'GET', '/api/v1/webhooks', { key: KEYS.admin });
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(made.secret);
    const item = listed.json().data.find((h: { id: number }) => h.id === made.id);
    expect(item).toMatchObject({ id: made.id, url: `${receiver.url}/crud`, disabled: false, last_success_at: null, failing_since: null });
    expect(item).not.toHaveProperty('secret');
    expect(await deliveries(t, made.id)).toEqual([]);

    const deleted = await call(t.app, 'DELETE', `/api/v1/webhooks/${made.id}`, { key: KEYS.admin });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().data).toEqual({ id: made.id, deleted: true });
    const again = await call(t.app, 'DELETE', `/api/v1/webhooks/${made.id}`, { key: KEYS.admin });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ success: false, error: { error_code: 'RESOURCE_NOT_FOUND' } });
    expect((await call(t.app, 'GET', `/api/v1/webhooks/${made.id}/deliveries`, { key: KEYS.admin })).statusCode).toBe(404);
  });

  it('needs the admin scope', async () => {
    const body = { url: `${receiver.url}/scopes`, events: ['task.completed'] };
    for (const key of [KEYS.write, KEYS.read]) {
      const res = await call(t.app, 'POST', '/api/v1/webhooks', { key, body });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ success: false, error: { error_code: 'FORBIDDEN' } });
      expect((await call(t.app, 'GET', '/api/v1/webhooks', { key })).statusCode).toBe(403);
      expect((await call(t.app, 'DELETE', '/api/v1/webhooks/1', { key })).statusCode).toBe(403);
      expect((await call(t.app, 'GET', '/api/v1/webhooks/1/deliveries', { key })).statusCode).toBe(403);
    }
    expect((await call(t.app, 'GET', '/api/v1/webhooks', { key: null })).statusCode).toBe(401);
  });

  it('checks the URL and the events (422 with loc) and refuses private addresses not allow-listed (400)', async () => {
    const post = (body: unknown) => call(t.app, 'POST', '/api/v1/webhooks', { key: KEYS.admin, body });
    const cases: [unknown, string[]][] = [
      [{ url: 'ftp://example.com/hook', events: ['task.completed'] }, ['body', 'url']],
      [{ url: 'not a url', events: ['task.completed'] }, ['body', 'url']],
      [{ url: `${receiver.url}/v`, events: [] }, ['body', 'events']],
      [{ url: `${receiver.url}/v`, events: ['task.completed', 'task.exploded'] }, ['body', 'events', '1']],
      [{ url: `${receiver.url}/v` }, ['body', 'events']],
      [{ events: ['task.completed'] }, ['body', 'url']],
    ];
    for (const [body, loc] of cases) {
      const res = await post(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().detail[0].loc, JSON.stringify(body)).toEqual(loc);
    }
    for (const url of ['http://10.1.2.3/hook', 'http://localhost:9/hook', 'http://169.254.169.254/latest']) {
      const res = await post({ url, events: ['task.completed'] });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toMatchObject({ success: false, error: { error_code: 'INVALID_REQUEST', message: expect.stringContaining('Folio will not deliver to') } });
    }
    const listed = await call(t.app, 'GET', '/api/v1/webhooks', { key: KEYS.admin });
    expect(listed.json().data).toEqual([]);
  });

  it('delivers signed task.completed and document.deleted events', async () => {
    const made = await hook('/signed');
    const ingested = await ingestEmbedding(t, 'A page about webhooks.', KEYS.write, 'hooked');
    const [completed] = await receiver.waitFor((all) => all.some((r) => r.path === '/signed' && r.event.type === 'task.completed'));
    const sent = receiver.received.find((r) => r.path === '/signed' && r.event.type === 'task.completed')!;
    expect(completed).toBeDefined();
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers['user-agent']).toMatch(/^Folio/);
    expect(sent.headers['folio-event-id']).toBe(sent.event.id);
    expect(verifyFolioSignature(made.secret, String(sent.headers['folio-signature']), sent.body)).toBe(true);
    expect(verifyFolioSignature('whsec_wrong', String(sent.headers['folio-signature']), sent.body)).toBe(false);
    expect(verifyFolioSignature(made.secret, String(sent.headers['folio-signature']), `${sent.body} `)).toBe(false);
    expect(Object.keys(sent.event).sort()).toEqual(['created_at', 'data', 'id', 'type']);
    expect(new Date(sent.event.created_at).toISOString()).toBe(sent.event.created_at);
    const status = (await call(t.app, 'GET', `/api/v1/tasks/status/${ingested.task_identifier}`)).json().data;
    expect(sent.event.data).toEqual({ task_identifier: ingested.task_identifier, kind: 'IngestEmbedding', ...status, document_ids: [ingested.document_id] });

    const second = await ingestEmbedding(t, 'A second version of it.', KEYS.write, 'hooked');
    expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${ingested.document_id}`)).statusCode).toBe(200);
    const third = await ingestEmbedding(t, 'A third version of it.', KEYS.write, 'hooked');
    expect((await call(t.app, 'DELETE', '/api/v1/documents/external/hooked?latest_only=false')).statusCode).toBe(200);
    const deletions = (await receiver.waitFor((all) => all.filter((r) => r.path === '/signed' && r.event.type === 'document.deleted').length === 2))
      .filter((r) => r.path === '/signed' && r.event.type === 'document.deleted')
      .map((r) => (r.event.data.document_ids as number[]).slice().sort((a, b) => a - b));
    expect(deletions).toEqual(expect.arrayContaining([[ingested.document_id], [second.document_id, third.document_id].sort((a, b) => a - b)]));
    for (const r of receiver.received.filter(onPath('/signed'))) {
      expect(verifyFolioSignature(made.secret, String(r.headers['folio-signature']), r.body)).toBe(true);
    }

    const recorded = await until(() => deliveries(t, made.id), (list) => list.length === 5 && list.every((d) => d.status === 'succeeded'));
    expect(recorded.map((d) => d.id)).toEqual(recorded.map((d) => d.id).sort((a, b) => b - a));
    expect(recorded[0]).toMatchObject({ event_type: 'document.deleted', attempt_count: 1, response_code: 200, error: null, next_attempt_at: null });
    expect(recorded.find((d) => d.event_id === sent.event.id)).toMatchObject({ event_type: 'task.completed', status: 'succeeded', attempts: [{ attempt: 1, response_code: 200, error: null }] });
    const listed = (await call(t.app, 'GET', '/api/v1/webhooks', { key: KEYS.admin })).json().data.find((h: { id: number }) => h.id === made.id);
    expect(listed.last_success_at).not.toBeNull();
    expect(outcomes).toContain('succeeded');
  });

  it('tells of file ingestion, failed tasks and extraction runs, only the events subscribed to', async () => {
    const made = await hook('/tasks', ['task.completed', 'task.failed']);
    const body = multipartBody({ external_id: 'filed' }, { filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('Webhooks tell receivers what happened.\n\nA second paragraph.') });
    const upload = await t.app.inject({ method: 'POST', url: '/api/v1/documents/ingest', headers: { ...body.headers, 'x-api-key': KEYS.write }, payload: body.payload });
    expect(upload.statusCode, upload.body).toBe(201);
    const fileTask = upload.json().data.task_identifier as string;
    const urlRes = await call(t.app, 'POST', '/api/v1/documents/ingest/url', { body: { url: `${receiver.url}/missing` } });
    expect(urlRes.statusCode, urlRes.body).toBe(201);
    const urlTask = urlRes.json().data.task_identifier as string;
    expect((await waitForTask(t.app, fileTask)).status).toBe('COMPLETED');
    expect((await waitForTask(t.app, urlTask)).status).toBe('FAILED');
    const document = (await call(t.app, 'GET', `/api/v1/documents/task/${fileTask}`)).json().data;

    const extraction = await call(t.app, 'POST', '/api/v1/extractions', { body: { name: 'Notes', schema: { type: 'object', properties: { topic: { type: 'string', description: 'What the notes are about' } } } } });
    expect(extraction.statusCode, extraction.body).toBe(201);
    const run = await call(t.app, 'POST', '/api/v1/extractions/run/document', { body: { extraction_id: extraction.json().data.id, document_id: document.id } });
    expect(run.statusCode, run.body).toBe(201);
    const runTask = run.json().data.task_identifier as string;
    const runStatus = await waitForTask(t.app, runTask);
    expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${document.id}`)).statusCode).toBe(200);

    const byTask = (all: Received[], id: string) => all.find((r) => r.path === '/tasks' && r.event.data.task_identifier === id);
    const all = await receiver.waitFor((list) => [fileTask, urlTask, runTask].every((id) => byTask(list, id)));
    expect(byTask(all, fileTask)!.event).toMatchObject({ type: 'task.completed', data: { kind: 'IngestFile', status: 'COMPLETED', progress: 100, document_ids: [document.id] } });
    const failed = byTask(all, urlTask)!.event;
    const failedStatus = (await call(t.app, 'GET', `/api/v1/tasks/status/${urlTask}`)).json().data;
    expect(failed).toMatchObject({ type: 'task.failed', data: { kind: 'IngestUrl', ...failedStatus, document_ids: [] } });
    expect(failed.data.message).toContain('404');
    const ran = byTask(all, runTask)!.event;
    expect(ran).toMatchObject({ type: 'task.completed', data: { kind: 'RunExtraction', ...runStatus } });
    expect(ran.data).not.toHaveProperty('document_ids');
    for (const r of all.filter((x) => x.path === '/tasks')) expect(verifyFolioSignature(made.secret, String(r.headers['folio-signature']), r.body)).toBe(true);
    // The deletion is not among the events this endpoint takes: it never had a delivery.
    await until(() => deliveries(t, made.id), (list) => list.length === 3 && list.every((d) => d.status === 'succeeded'));
    expect((await deliveries(t, made.id)).map((d) => d.event_type).sort()).toEqual(['task.completed', 'task.completed', 'task.failed']);
  });

  it('retries a receiver that answers 500 twice, then records its one success', async () => {
    const made = await hook('/flaky', ['task.completed']);
    const ingested = await ingestEmbedding(t, 'Flaky receivers get retries.');
    const sent = (await receiver.waitFor((all) => all.filter(onPath('/flaky')).length >= 3)).filter(onPath('/flaky'));
    const [delivery] = await until(() => deliveries(t, made.id), (list) => list.length === 1 && list[0].status !== 'pending');
    expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 3, response_code: 200, error: null, next_attempt_at: null, event_type: 'task.completed' });
    expect(delivery.attempts.map((a) => [a.attempt, a.response_code])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    expect(delivery.attempts[0].error).toContain('500');
    expect(delivery.attempts.every((a) => Number.isInteger(a.duration_ms) && a.duration_ms >= 0)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.filter(onPath('/flaky'))).toHaveLength(3);
    expect(new Set(sent.map((r) => r.headers['folio-event-id']))).toEqual(new Set([delivery.event_id]));
    expect(sent[0].event.data.task_identifier).toBe(ingested.task_identifier);
    for (const r of sent) expect(verifyFolioSignature(made.secret, String(r.headers['folio-signature']), r.body)).toBe(true);
  });

  it('marks a delivery failed after its last attempt', async () => {
    const made = await hook('/down', ['task.completed']);
    await ingestEmbedding(t, 'Nobody is listening.');
    const [delivery] = await until(() => deliveries(t, made.id), (list) => list.length === 1 && list[0].status !== 'pending');
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 4, response_code: 503, next_attempt_at: null });
    expect(delivery.error).toContain('503');
    expect(receiver.received.filter(onPath('/down'))).toHaveLength(4);
    const listed = (await call(t.app, 'GET', '/api/v1/webhooks', { key: KEYS.admin })).json().data.find((h: { id: number }) => h.id === made.id);
    expect(listed).toMatchObject({ disabled: false, last_success_at: null, failing_since: expect.any(String) });
    expect(outcomes).toEqual(expect.arrayContaining(['retrying', 'failed']));
  });

  it('keeps workspaces apart', async () => {
    const alpha = await hook('/alpha');
    const beta = await hook('/beta', ALL_EVENTS, BETA_ADMIN);
    const betaDoc = await ingestEmbedding(t, 'Beta business only.', KEYS.other);
    const alphaDoc = await ingestEmbedding(t, 'Alpha business only.', KEYS.write);
    await receiver.waitFor((all) => all.some((r) => r.path === '/beta') && all.some((r) => r.path === '/alpha'));
    await until(() => deliveries(t, beta.id, BETA_ADMIN), (list) => list.length === 1 && list[0].status === 'succeeded');
    await until(() => deliveries(t, alpha.id), (list) => list.length === 1 && list[0].status === 'succeeded');
    expect(receiver.received.filter(onPath('/beta')).map((r) => r.event.data.task_identifier)).toEqual([betaDoc.task_identifier]);
    expect(receiver.received.filter(onPath('/alpha')).map((r) => r.event.data.task_identifier)).toEqual([alphaDoc.task_identifier]);

    const alphaList = (await call(t.app, 'GET', '/api/v1/webhooks', { key: KEYS.admin })).json().data.map((h: { id: number }) => h.id);
    expect(alphaList).toEqual([alpha.id]);
    const betaList = (await call(t.app, 'GET', '/api/v1/webhooks', { key: BETA_ADMIN })).json().data.map((h: { id: number }) => h.id);
    expect(betaList).toEqual([beta.id]);
    const foreign = await call(t.app, 'GET', `/api/v1/webhooks/${beta.id}/deliveries`, { key: KEYS.admin });
    const missing = await call(t.app, 'GET', '/api/v1/webhooks/987654/deliveries', { key: KEYS.admin });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.error_code).toBe(missing.json().error.error_code);
    expect((await call(t.app, 'DELETE', `/api/v1/webhooks/${beta.id}`, { key: KEYS.admin })).statusCode).toBe(404);
    expect(await deliveries(t, beta.id, BETA_ADMIN)).toHaveLength(1);
  });
});

describe.each(ENGINES)('webhook endpoints that keep failing (%s)', { timeout: 120_000 }, (engine) => {
  let t: TestApp;
  let receiver: Receiver;
  const reports: AttemptReport[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    // Endpoints are created under the allow-list, but the delivery loop's guard refuses them,
    // as it would a host whose DNS now points somewhere private.
    t = await startTestApp(engine, {
      env: { FOLIO_URL_ALLOWLIST: '127.0.0.1' },
      webhooks: { allowlist: [], retryBaseMs: 50, maxAttempts: 3, pollMs: 100, disableAfterMs: 3000, onAttempt: (report) => reports.push(report) },
    });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('refuses at delivery time what the guard refuses, and disables an endpoint whose attempts all failed long enough', async () => {
    const made = await createHook(t, `${receiver.url}/guarded`, ['task.completed']);
    await ingestEmbedding(t, 'Refused at the door.');
    const [first] = await until(() => deliveries(t, made.id), (list) => list.length === 1 && list[0].status !== 'pending');
    expect(first).toMatchObject({ status: 'failed', attempt_count: 3, response_code: null });
    expect(first.error).toContain('loopback');
    expect(first.attempts.every((a) => a.error?.includes('Folio will not deliver to'))).toBe(true);
    expect(receiver.received).toEqual([]);
    expect(reports.map((r) => r.outcome)).toEqual(['retrying', 'retrying', 'failed']);

    // Past the disabling window since the first failure: the next failed attempt disables it.
    await new Promise((r) => setTimeout(r, 3100));
    await ingestEmbedding(t, 'Still refused.');
    const hook = await until(
      async () => (await call(t.app, 'GET', '/api/v1/webhooks', { key: KEYS.admin })).json().data[0],
      (h) => h.disabled === true,
    );
    expect(hook).toMatchObject({ id: made.id, disabled: true, disabled_at: expect.any(String), disabled_reason: expect.stringContaining('failed') });
    const after = await deliveries(t, made.id);
    expect(after).toHaveLength(2);
    expect(after.every((d) => d.status === 'failed')).toBe(true);
    expect(after[0].error).toContain('disabled');

    // A disabled endpoint gets no more deliveries.
    await ingestEmbedding(t, 'Nobody is told.');
    await new Promise((r) => setTimeout(r, 300));
    expect(await deliveries(t, made.id)).toHaveLength(2);
  });
});
