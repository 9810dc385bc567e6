// Acknowledged writes survive SIGKILL: `folio serve` on each engine takes concurrent
// embedding ingests, metadata patches and deletes, is killed mid-stream (twice), and after
// each restart every write it answered 2xx is there and every acknowledged delete stays done.
// On the embedded engine each restart also takes over the data directory's lock the killed
// process left behind.
// A process killed after it read its page index from a snapshot leaves that snapshot to the next
// start, which reads it again and catches up instead of loading every page.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vector } from '../helpers/app.js';
import { until } from '../helpers/poll.js';
import { startServer, type Server } from '../helpers/process.js';
import type { Engine } from '../../src/store/engine.js';
import { ENGINES, POSTGRES_URL, createSchema, dropSchema, migratedDataDir, newSchemaName } from '../helpers/stores.js';

const KEY = 'durability-key';
const CLIENTS = 6;
const KILLS = 2;
const ACKED_PER_ROUND = 16;

interface Acknowledged {
  /** external id -> the metadata value `v` last acknowledged for it */
  versions: Map<string, number>;
  deleted: Set<string>;
  /** deletes cut off by the kill: they may or may not have landed */
  inFlightDeletes: Set<string>;
}

async function request(url: string, method: string, pathName: string, body?: unknown): Promise<number> {
  try {
    const res = await fetch(`${url}${pathName}`, {
      method,
      headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0; // the server died under the request: not acknowledged
  }
}

/** One client's writes until the server stops answering; records what was acknowledged. */
async function writeUntilDead(url: string, client: number, round: number, acked: Acknowledged): Promise<void> {
  for (let i = 0; ; i++) {
    const id = `c${client}-r${round}-${i}`;
    const created = await request(url, 'POST', '/api/v1/documents/ingest/embedding', {
      embedding: vector(client * 1000 + i),
      content: `Document ${id}.`,
      external_id: id,
      metadata: { v: 0 },
    });
    if (created === 0) return;
    expect(created).toBe(201);
    acked.versions.set(id, 0);
    const patched = await request(url, 'PATCH', `/api/v1/documents/external/${id}/metadata`, { metadata: { v: 1 } });
    if (patched === 0) return;
    expect(patched).toBe(200);
    acked.versions.set(id, 1);
    if (i % 3 === 0) {
      const deleted = await request(url, 'DELETE', `/api/v1/documents/external/${id}`);
      if (deleted === 0) {
        acked.versions.delete(id);
        acked.inFlightDeletes.add(id);
        return;
      }
      expect(deleted).toBe(200);
      acked.versions.delete(id);
      acked.deleted.add(id);
    }
  }
}

async function verify(url: string, acked: Acknowledged): Promise<void> {
  for (const [id, v] of acked.versions) {
    const res = await fetch(`${url}/api/v1/documents/external/${id}`, { headers: { 'x-api-key': KEY } });
    expect(res.status, id).toBe(200);
    const doc = ((await res.json()) as { data: { document_metadata: { v: number }; pages: { content: string }[] } }).data;
    // A patch in flight when the process died may or may not have landed; an acknowledged one has.
    expect(doc.document_metadata.v, id).toBeGreaterThanOrEqual(v);
    expect(doc.pages[0].content).toBe(`Document ${id}.`);
  }
  for (const id of acked.deleted) {
    const res = await fetch(`${url}/api/v1/documents/external/${id}`, { headers: { 'x-api-key': KEY } });
    expect(res.status, id).toBe(404);
  }
  for (const id of acked.inFlightDeletes) {
    const res = await fetch(`${url}/api/v1/documents/external/${id}`, { headers: { 'x-api-key': KEY } });
    expect([200, 404], id).toContain(res.status);
  }
  const search = await fetch(`${url}/api/v1/documents/search/pages`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'Document', alpha: 0, top_k: 5 }),
  });
  expect(search.status).toBe(200);
}

/**
 * The environment of `folio serve` on a data directory (and, on the server engine, a schema) of
 * the describe block's own, made before its tests and removed after them.
 */
function servedStore(engine: Engine, prefix: string, extra: Record<string, string> = {}): { env: Record<string, string> } {
  const store = { env: {} as Record<string, string> };
  let dataDir: string;
  let schema: string | null = null;
  beforeAll(async () => {
    // The embedded database is made before the first start, which is not what these tests are about.
    dataDir = engine === 'pglite' ? await migratedDataDir(prefix) : fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    store.env = { FOLIO_DATA_DIR: dataDir, FOLIO_API_KEYS: `${KEY}:durable:write`, FOLIO_RATE_LIMIT: '0', ...extra };
    if (engine === 'postgres') {
      schema = newSchemaName();
      await createSchema(schema);
      store.env.DATABASE_URL = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    }
  });
  afterAll(async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (schema) await dropSchema(schema);
  });
  return store;
}

describe.each(ENGINES)('acknowledged writes across SIGKILL (%s)', { timeout: 300_000 }, (engine) => {
  const store = servedStore(engine, 'folio-durability-');

  it('loses none of them and keeps every acknowledged delete', async () => {
    const acked: Acknowledged = { versions: new Map(), deleted: new Set(), inFlightDeletes: new Set() };
    for (let round = 0; round < KILLS; round++) {
      const server: Server = await startServer(store.env);
      const writers = Array.from({ length: CLIENTS }, (_, c) => writeUntilDead(server.url, c, round, acked));
      // Killed after a while of writing and a count of acknowledged writes, so that a slow
      // machine also kills mid-stream with enough acknowledged to check.
      const started = Date.now();
      try {
        await until(
          async () => acked.versions.size + acked.deleted.size,
          (count) => count >= ACKED_PER_ROUND * (round + 1) && Date.now() - started >= 1500 + 500 * round,
          120_000,
        );
      } finally {
        await server.stop('SIGKILL');
        await Promise.all(writers);
      }
    }
    expect(acked.versions.size + acked.deleted.size).toBeGreaterThanOrEqual(ACKED_PER_ROUND * KILLS - CLIENTS);
    const restarted = await startServer(store.env);
    try {
      await verify(restarted.url, acked);
    } finally {
      await restarted.stop();
    }
  });
});

describe.each(ENGINES)('the page index across SIGKILL (%s)', { timeout: 300_000 }, (engine) => {
  // At info, the log says where each start read its page index from.
  const store = servedStore(engine, 'folio-index-kill-', { LOG_LEVEL: 'info' });

  async function ingest(url: string, from: number, to: number): Promise<void> {
    for (let n = from; n < to; n++) {
      expect(await request(url, 'POST', '/api/v1/documents/ingest/embedding', { embedding: vector(n), content: `Lighthouse log ${n}: the keeper saw fog.` })).toBe(201);
    }
  }

  /** The pages a keyword search for the log's words finds. */
  async function logged(url: string): Promise<number> {
    const res = await fetch(`${url}/api/v1/documents/search/pages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'lighthouse keeper fog', alpha: 0, top_k: 100 }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { results: unknown[] } }).data.results.length;
  }

  const restoredFromSnapshot = (output: string) => output.includes('page index read from its snapshot');

  it('starts from the snapshot the killed process read, with what it acknowledged since', async () => {
    const first = await startServer(store.env);
    await ingest(first.url, 0, 30);
    expect(await logged(first.url)).toBe(30);
    expect(await first.stop()).toBe(0);
    const second = await startServer(store.env);
    try {
      expect(await logged(second.url)).toBe(30);
      expect(restoredFromSnapshot(second.output())).toBe(true);
      await ingest(second.url, 30, 42);
      expect(await logged(second.url)).toBe(42);
    } finally {
      await second.stop('SIGKILL');
    }
    const third = await startServer(store.env);
    try {
      expect(await logged(third.url)).toBe(42);
      expect(restoredFromSnapshot(third.output())).toBe(true);
    } finally {
      await third.stop();
    }
  });
});
