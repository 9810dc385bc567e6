// Webhook events survive SIGKILL: a real `folio serve` on each engine commits a task's
// completion and a deletion, is killed with SIGKILL before it has delivered them (before any
// attempt, or after refused first attempts while the receiver was down), and once restarted it
// delivers both, signed, once each.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vector } from '../helpers/app.js';
import { freePort, startServer, type Server } from '../helpers/process.js';
import { ENGINES, POSTGRES_URL, createSchema, dropSchema, migratedDataDir, newSchemaName } from '../helpers/stores.js';
import { until } from '../helpers/poll.js';
import { startReceiver, verifyFolioSignature, type Receiver } from '../helpers/webhook-receiver.js';

const KEY = 'webhooks-process-key';

interface Delivery {
  event_type: string;
  status: string;
  attempt_count: number;
  attempts: { attempt: number; response_code: number | null; error: string | null }[];
}

async function api(server: Server, method: string, pathName: string, body?: unknown): Promise<{ status: number; json: { data: unknown } }> {
  const res = await fetch(`${server.url}${pathName}`, {
    method,
    headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { data: unknown } };
}

async function deliveriesOf(server: Server, hookId: number): Promise<Delivery[]> {
  return (await api(server, 'GET', `/api/v1/webhooks/${hookId}/deliveries`)).json.data as Delivery[];
}


describe.each(ENGINES)('webhook events across SIGKILL (%s)', { timeout: 300_000 }, (engine) => {
  let dataDir: string;
  let schema: string | null = null;
  let env: Record<string, string>;
  let receiver: Receiver | null = null;
  let server: Server | null = null;

  beforeAll(async () => {
    // The embedded database is made before the first start, which is not what this tests.
    dataDir = engine === 'pglite' ? await migratedDataDir('folio-webhooks-') : fs.mkdtempSync(path.join(os.tmpdir(), 'folio-webhooks-'));
    env = {
      FOLIO_DATA_DIR: dataDir,
      FOLIO_API_KEYS: `${KEY}:hooked:admin`,
      FOLIO_RATE_LIMIT: '0',
      FOLIO_OCR: 'off',
      FOLIO_URL_ALLOWLIST: '127.0.0.1',
      // The first retry comes about 2 s after the refused attempt: the kill lands before it.
      FOLIO_WEBHOOK_RETRY_BASE_MS: '2000',
    };
    if (engine === 'postgres') {
      schema = newSchemaName();
      await createSchema(schema);
      env.DATABASE_URL = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    }
  });

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await receiver?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (schema) await dropSchema(schema);
  });

  it('delivers events killed before their first attempt once restarted', async () => {
    receiver = await startReceiver();
    // An API-only process records events but runs no delivery loop: the kill comes before any attempt.
    server = await startServer(env, undefined, ['--role', 'api']);
    const created = await api(server, 'POST', '/api/v1/webhooks', { url: `${receiver.url}/first`, events: ['task.completed', 'document.deleted'] });
    expect(created.status).toBe(201);
    const hook = created.json.data as { id: number; secret: string };
    const ingested = await api(server, 'POST', '/api/v1/documents/ingest/embedding', { embedding: vector(5), content: 'Killed before sending.' });
    expect(ingested.status).toBe(201);
    const receipt = ingested.json.data as { task_identifier: string; document_id: number };
    expect((await api(server, 'DELETE', `/api/v1/documents/internal/${receipt.document_id}`)).status).toBe(200);
    const pending = await deliveriesOf(server, hook.id);
    expect(pending.map((d) => [d.status, d.attempt_count])).toEqual([
      ['pending', 0],
      ['pending', 0],
    ]);
    await server.stop('SIGKILL');
    server = null;

    server = await startServer(env);
    const received = await receiver.waitFor((all) => all.length >= 2, 60_000);
    expect(received.map((r) => r.event.type).sort()).toEqual(['document.deleted', 'task.completed']);
    for (const r of received) expect(verifyFolioSignature(hook.secret, String(r.headers['folio-signature']), r.body)).toBe(true);
    const recorded = await until(() => deliveriesOf(server!, hook.id), (list) => list.every((d) => d.status === 'succeeded'), 60_000);
    expect(recorded.map((d) => d.attempt_count)).toEqual([1, 1]);
    await api(server, 'DELETE', `/api/v1/webhooks/${hook.id}`);
    await server.stop('SIGKILL');
    server = null;
    await receiver.close();
    receiver = null;
  });

  it('delivers the events committed before the kill once restarted', async () => {
    const port = await freePort(); // the receiver's, not listening yet
    server = await startServer(env);
    const created = await api(server, 'POST', '/api/v1/webhooks', { url: `http://127.0.0.1:${port}/hook`, events: ['task.completed', 'document.deleted'] });
    expect(created.status).toBe(201);
    const hook = created.json.data as { id: number; secret: string };
    const ingested = await api(server, 'POST', '/api/v1/documents/ingest/embedding', { embedding: vector(3), content: 'Survives a crash.', external_id: 'crash' });
    expect(ingested.status).toBe(201);
    const receipt = ingested.json.data as { task_identifier: string; document_id: number };
    expect((await api(server, 'DELETE', `/api/v1/documents/internal/${receipt.document_id}`)).status).toBe(200);

    // Both events are committed and their first attempts refused: the receiver is down.
    await until(() => deliveriesOf(server!, hook.id), (list) => list.length === 2 && list.every((d) => d.attempt_count >= 1), 60_000);
    await server.stop('SIGKILL');
    server = null;

    receiver = await startReceiver(port);
    server = await startServer(env);
    const received = await receiver.waitFor((all) => all.some((r) => r.event.type === 'task.completed') && all.some((r) => r.event.type === 'document.deleted'), 60_000);
    const completed = received.find((r) => r.event.type === 'task.completed')!;
    const deleted = received.find((r) => r.event.type === 'document.deleted')!;
    expect(completed.event.data).toMatchObject({ task_identifier: receipt.task_identifier, status: 'COMPLETED', document_ids: [receipt.document_id] });
    expect(deleted.event.data).toEqual({ document_ids: [receipt.document_id] });
    for (const r of received) {
      expect(verifyFolioSignature(hook.secret, String(r.headers['folio-signature']), r.body)).toBe(true);
      expect(r.headers['folio-event-id']).toBe(r.event.id);
    }

    const recorded = await until(() => deliveriesOf(server!, hook.id), (list) => list.length === 2 && list.every((d) => d.status === 'succeeded'), 60_000);
    for (const delivery of recorded) {
      expect(delivery.attempt_count).toBeGreaterThanOrEqual(2);
      expect(delivery.attempts[0]).toMatchObject({ attempt: 1, response_code: null, error: expect.stringContaining('refused the connection') });
      expect(delivery.attempts.at(-1)).toMatchObject({ response_code: 200, error: null });
    }
    // Each event was sent once to the receiver that was up.
    expect(received.filter((r) => r.event.type === 'task.completed')).toHaveLength(1);
    expect(received.filter((r) => r.event.type === 'document.deleted')).toHaveLength(1);
  });
});
