// A request's log lines carry the principal that authenticated it (workspace and key id)
// beside its request id, and only that request's: auth.ts adds the fields to the logger
// Fastify made for the request rather than making another.
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAuth } from '../../src/http/auth.js';
import { KeyResolver } from '../../src/workspaces/keys.js';
import { openTestStore, type TestStore } from '../helpers/stores.js';

describe('request log fields', () => {
  let store: TestStore;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    store = await openTestStore('pglite');
  });
  afterAll(async () => {
    await store.close();
  });

  it('names the workspace and key of the request, and no other request', async () => {
    const keys = new KeyResolver(store.db);
    await keys.loadBootstrapKeys([
      { key: 'key-alpha', workspace: 'alpha', scope: 'read' },
      { key: 'key-beta', workspace: 'beta', scope: 'read' },
    ]);
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const app = Fastify({ loggerInstance: pino({ level: 'info' }, sink) as FastifyBaseLogger });
    registerAuth(app, keys, null);
    app.get('/seen', { config: { scope: 'read' } }, async (request) => {
      request.log.info({ mark: request.headers['x-mark'] }, 'seen');
      return {};
    });
    app.get('/open', async (request) => {
      request.log.info({ mark: request.headers['x-mark'] }, 'seen');
      return {};
    });
    try {
      for (const [key, mark] of [['key-alpha', 'a1'], ['key-beta', 'b1'], ['key-alpha', 'a2']]) {
        const response = await app.inject({ method: 'GET', url: '/seen', headers: { 'x-api-key': key, 'x-mark': mark } });
        expect(response.statusCode).toBe(200);
      }
      expect((await app.inject({ method: 'GET', url: '/open', headers: { 'x-mark': 'open' } })).statusCode).toBe(200);
    } finally {
      await app.close();
    }

    const seen = lines.filter((line) => line.msg === 'seen');
    expect(seen.map((line) => [line.mark, line.workspace, typeof line.key])).toEqual([
      ['a1', 'alpha', 'string'],
      ['b1', 'beta', 'string'],
      ['a2', 'alpha', 'string'],
      ['open', undefined, 'undefined'],
    ]);
    expect(seen[0].key).toBe(seen[2].key);
    expect(seen[0].key).not.toBe(seen[1].key);
    expect(new Set(seen.map((line) => line.reqId)).size).toBe(4);
  });
});
