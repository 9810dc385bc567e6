// The folio command as users run it: data surviving a restart of the embedded engine, the
// data-dir lock, key management from the CLI, migrations, and serving on the server engine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vector } from '../helpers/app.js';
import { runFolio, startServer } from '../helpers/process.js';
import { ENGINES, POSTGRES_URL, createSchema, dropSchema, migratedDataDir, newSchemaName } from '../helpers/stores.js';

const KEY = 'process-test-key';

async function ingest(url: string, content: string): Promise<number> {
  const res = await fetch(`${url}/api/v1/documents/ingest/embedding`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ embedding: vector(5), content, external_id: 'durable' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { document_id: number } }).data.document_id;
}

describe('folio on the embedded engine', { timeout: 300_000 }, () => {
  let dataDir: string;
  const env = () => ({ FOLIO_DATA_DIR: dataDir, FOLIO_API_KEYS: `${KEY}:proc:write` });

  // Made before the first start (initdb is what the first-start test below covers).
  beforeAll(async () => {
    dataDir = await migratedDataDir('folio-proc-');
  });
  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps data across a restart and refuses a second process on the same data dir', async () => {
    const first = await startServer(env());
    let id: number;
    try {
      id = await ingest(first.url, 'Durable words.');
      const second = await runFolio(['serve'], { ...env(), PORT: '0' });
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/in use by process \d+/);
      const keys = await runFolio(['keys', 'list'], env());
      expect(keys.code).toBe(1);
      expect(keys.stderr).toMatch(/in use/);
    } finally {
      expect(await first.stop('SIGTERM')).toBe(0);
    }
    expect(fs.existsSync(path.join(dataDir, 'folio.lock'))).toBe(false);

    const again = await startServer(env());
    try {
      const res = await fetch(`${again.url}/api/v1/documents/internal/${id}`, { headers: { 'x-api-key': KEY } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: { external_id: string; pages: { content: string }[] } };
      expect(body.data.external_id).toBe('durable');
      expect(body.data.pages[0].content).toBe('Durable words.');
    } finally {
      await again.stop();
    }
  });

  it('creates, lists and revokes durable keys from the CLI', async () => {
    const created = await runFolio(['keys', 'create', '--workspace', 'cli', '--scope', 'read', '--label', 'ops'], env());
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^folio_[\w-]{43}$/);

    const listed = await runFolio(['keys', 'list'], env());
    expect(listed.stdout).toContain(key.slice(0, 12));
    expect(listed.stdout).not.toContain(key);
    const id = listed.stdout.split('\n').find((l) => l.includes(key.slice(0, 12)))!.split('\t')[0];

    const server = await startServer(env());
    try {
      const ok = await fetch(`${server.url}/api/v1/tasks/status/none`, { headers: { 'x-api-key': key } });
      expect(ok.status).toBe(404);
      const forbidden = await fetch(`${server.url}/api/v1/documents/internal/1`, { method: 'DELETE', headers: { 'x-api-key': key } });
      expect(forbidden.status).toBe(403);
    } finally {
      await server.stop();
    }

    expect((await runFolio(['keys', 'revoke', id], env())).code).toBe(0);
    expect((await runFolio(['keys', 'list'], env())).stdout).toMatch(/revoked/);
    expect((await runFolio(['keys', 'revoke', id], env())).code).toBe(1);
    const bad = await runFolio(['keys', 'create', '--workspace', 'cli', '--scope', 'root'], env());
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--scope');
  });

  it('migrates and reports an up-to-date database', async () => {
    const res = await runFolio(['migrate'], env());
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('up to date');
  });

  it('issues an admin key on a first start without keys', async () => {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-first-'));
    try {
      const server = await startServer({ FOLIO_DATA_DIR: fresh });
      try {
        const key = /folio_[\w-]{43}/.exec(server.output())?.[0];
        expect(key).toBeDefined();
        const res = await fetch(`${server.url}/api/v1/keys`, { headers: { 'x-api-key': key! } });
        expect(res.status).toBe(200);
      } finally {
        await server.stop();
      }
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('exits with a clear message on invalid configuration', async () => {
    const res = await runFolio(['serve'], { FOLIO_DATA_DIR: dataDir, FOLIO_API_KEYS: 'k:w:superuser' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('FOLIO_API_KEYS');
  });
});

describe.skipIf(!ENGINES.includes('postgres'))('folio on the PostgreSQL server', { timeout: 180_000 }, () => {
  let schema: string;
  beforeAll(async () => {
    schema = newSchemaName();
    await createSchema(schema);
  });
  afterAll(async () => {
    await dropSchema(schema);
  });

  it('migrates and serves with DATABASE_URL', async () => {
    const url = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const migrated = await runFolio(['migrate'], { DATABASE_URL: url });
    expect(migrated.code, migrated.stderr).toBe(0);
    const server = await startServer({ DATABASE_URL: url, FOLIO_API_KEYS: `${KEY}:pg:write` });
    try {
      const id = await ingest(server.url, 'On the server.');
      const ready = await fetch(`${server.url}/ready`);
      expect(await ready.json()).toMatchObject({ status: 'ready', engine: 'postgres' });
      const res = await fetch(`${server.url}/api/v1/documents/internal/${id}`, { headers: { 'x-api-key': KEY } });
      expect(res.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
