// Builds the real application on a test store (PGlite in memory or a fresh PostgreSQL
// schema) with bootstrap keys for two workspaces and every scope.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import type { App } from '../../src/http/app.js';
import type { RateLimiter } from '../../src/http/rate-limit.js';
import { startRuntime, type Role, type Runtime } from '../../src/runtime.js';
import type { Engine } from '../../src/store/engine.js';
import type { WorkerOptions } from '../../src/tasks/worker.js';
import type { DeliveryOptions } from '../../src/webhooks/delivery.js';
import { openTestStore, type TestStore } from './stores.js';

export const KEYS = {
  write: 'test-write-key',
  read: 'test-read-key',
  admin: 'test-admin-key',
  other: 'test-other-workspace-key',
} as const;

export const API_KEYS_ENV = `${KEYS.write}:alpha:write,${KEYS.read}:alpha:read,${KEYS.admin}:alpha:admin,${KEYS.other}:beta:write`;

export interface TestApp {
  app: App;
  runtime: Runtime;
  store: TestStore;
  config: Config;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  rateLimiter?: RateLimiter | null;
  store?: TestStore;
  role?: Role;
  worker?: Partial<WorkerOptions>;
  webhooks?: Partial<DeliveryOptions>;
}

/** The real service on a test store; data under a temporary FOLIO_DATA_DIR unless env sets one. */
export async function startTestApp(engine: Engine, options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-test-'));
  const config = loadConfig({ FOLIO_API_KEYS: API_KEYS_ENV, FOLIO_RATE_LIMIT: '0', FOLIO_DATA_DIR: dataDir, ...options.env });
  const store = options.store ?? (await openTestStore(engine));
  const runtime = await startRuntime(config, store, {
    role: options.role ?? 'all',
    logger: false,
    rateLimiter: options.rateLimiter,
    worker: { pollMs: 100, retryBaseMs: 100, ...options.worker },
    webhooks: options.webhooks,
    scanThreads: 2,
  });
  return {
    app: runtime.app!,
    runtime,
    store,
    config,
    close: async () => {
      await runtime.close();
      if (!options.store) await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is: a malformed JSON text, or a multipart body from multipart.ts (with its headers). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/** One request through the app; `key: null` sends no X-API-Key. */
export async function call(app: App, method: string, url: string, options: CallOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? KEYS.write : options.key;
  if (key !== null) headers['x-api-key'] = key;
  let payload: string | Buffer | undefined;
  if (options.rawBody !== undefined) payload = options.rawBody;
  else if (options.body !== undefined) payload = JSON.stringify(options.body);
  if (payload !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  return app.inject({ method: method as 'GET', url, headers, payload });
}

/** A deterministic pseudo-random unit-ish vector of 1536 dims. */
export function vector(seed: number, dims = 1536): number[] {
  let state = seed * 2654435761 + 1;
  const out: number[] = [];
  for (let i = 0; i < dims; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    out.push(state / 2147483648 - 0.5);
  }
  return out;
}
