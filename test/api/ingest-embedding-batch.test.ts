// The batch embedding ingest over HTTP, on both engines: a large batch stored in a few
// transactions and searchable, broken items answered in place as the single ingest would
// answer them alone while the others are stored, versions of a repeated external id in order,
// bodies refused as a whole, scopes, the route's own body limit, and webhook events.
import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';
import { ENGINES } from '../helpers/stores.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const BATCH = '/api/v1/documents/ingest/embedding/batch';
const SINGLE = '/api/v1/documents/ingest/embedding';

interface Stored {
  task_identifier: string;
  file_path: string;
  external_id: string | null;
  document_id: number;
}

interface ItemError {
  error_code: string;
  message: string;
  detail?: { loc: string[]; msg: string; type: string }[];
}

type Result = { index: number; status: number; document: Stored } | { index: number; status: number; error: ItemError };

interface BatchAnswer {
  results: Result[];
  created: number;
  failed: number;
}

const stored = (result: Result): Stored => {
  if (!('document' in result)) throw new Error(`item ${result.index} failed: ${JSON.stringify(result.error)}`);
  return result.document;
};

const failure = (result: Result): ItemError => {
  if (!('error' in result)) throw new Error(`item ${result.index} was stored`);
  return result.error;
};

/**
 * A vector of its own for each i below 1536, nearest to itself by far (a spike at i): `vector`
 * repeats itself for some pairs of nearby seeds.
 */
function distinct(i: number): number[] {
  const v = vector(7);
  v[i] += 40;
  return v;
}

/** An object nested `depth` levels deep. */
const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });

describe.each(ENGINES)('batch embedding ingest on %s', (engine) => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp(engine, { env: { FOLIO_URL_ALLOWLIST: '127.0.0.1' } });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  async function batch(documents: unknown[], key: string = KEYS.write): Promise<BatchAnswer> {
    const res = await call(t.app, 'POST', BATCH, { key, body: { documents } });
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ success: true, error: null, meta: { version: '1.0.0' } });
    return body.data as BatchAnswer;
  }

  async function documentCount(): Promise<number> {
    const row = await t.store.db.selectFrom('documents').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it('stores 300 documents in a few transactions, each retrievable and searchable when the answer comes', async () => {
    const n = 300;
    const documents = Array.from({ length: n }, (_, i) => ({
      embedding: distinct(i),
      content: `Batch page ${i}. The harbour log of day ${i}.\n\nA second paragraph.`,
      metadata: { i, parity: i % 2 ? 'odd' : 'even' },
      ...(i % 3 === 0 ? { external_id: `bulk-${i}` } : {}),
    }));
    const data = await batch(documents);
    expect(data.created).toBe(n);
    expect(data.failed).toBe(0);
    expect(data.results.map((r) => [r.index, r.status])).toEqual(documents.map((_, i) => [i, 201]));
    const receipts = data.results.map(stored);
    expect(new Set(receipts.map((r) => r.document_id)).size).toBe(n);
    for (const [i, receipt] of receipts.entries()) {
      expect(receipt.task_identifier).toMatch(/^IngestEmbedding:[0-9a-f-]{36}$/);
      expect(receipt.file_path).toBe(`embedding/${receipt.task_identifier.split(':')[1]}`);
      expect(receipt.external_id).toBe(i % 3 === 0 ? `bulk-${i}` : null);
    }

    // Committed: the store's own connection sees every row, written by a few transactions (one
    // per 128 documents at most), not one each.
    const ids = receipts.map((r) => r.document_id);
    const rows = await sql<{ n: string; transactions: string }>`
      SELECT count(*) AS n, count(DISTINCT xmin::text) AS transactions FROM documents WHERE id IN (${sql.join(ids)})`.execute(t.store.db);
    expect(Number(rows.rows[0].n)).toBe(n);
    expect(Number(rows.rows[0].transactions)).toBeLessThanOrEqual(Math.ceil(n / 128));

    for (const [i, receipt] of receipts.entries()) {
      const doc = await call(t.app, 'GET', `/api/v1/documents/task/${receipt.task_identifier}`);
      expect(doc.statusCode, doc.body).toBe(200);
      expect(doc.json().data).toMatchObject({
        id: receipt.document_id,
        external_id: receipt.external_id,
        file_path: receipt.file_path,
        document_metadata: documents[i].metadata,
        pages: [{ content: documents[i].content, page_number: 1 }],
      });
      if (i % 10 === 0) {
        const status = await call(t.app, 'GET', `/api/v1/tasks/status/${receipt.task_identifier}`);
        expect(status.json().data).toMatchObject({ status: 'COMPLETED', progress: 100 });
        const found = await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { embedding: distinct(i), top_k: 1 } });
        expect(found.json().data.results[0].document_id).toBe(receipt.document_id);
      }
    }
    const latest = await call(t.app, 'GET', '/api/v1/documents/external/bulk-150');
    expect(latest.json().data.id).toBe(receipts[150].document_id);
    const keywords = await call(t.app, 'POST', '/api/v1/documents/search/pages', {
      body: { query: 'harbour log', alpha: 0, top_k: 5, metadata_filter: { i: 42 } },
    });
    expect(keywords.json().data.results.map((r: { document_id: number }) => r.document_id)).toEqual([receipts[42].document_id]);
  });

  it('answers each broken item in its place as the single ingest answers it alone, and stores the others', async () => {
    const before = await documentCount();
    const ok = (seed: number, extra: Record<string, unknown> = {}) => ({ embedding: vector(seed), content: `Mixed ${seed}.`, ...extra });
    const documents: Record<string, unknown>[] = [
      ok(20_001, { external_id: 'mixed' }),
      { embedding: vector(1, 1535), content: 'Too short a vector.' },
      { embedding: vector(20_002) },
      ok(20_003, { metadata: [1, 2] }),
      { embedding: new Array(1536).fill(0), content: 'A zero vector.' },
      ok(20_005, { metadata: { team: 'x' } }),
      { embedding: vector(20_006), content: 'a\u0000b' },
      ok(20_007, { external_id: 'e'.repeat(256) }),
      ok(20_008, { external_id: 'mixed', metadata: null }),
      { embedding: vector(20_009).map((v, i) => (i === 5 ? String(v) : v)), content: 'A string in the vector.' },
      ok(20_010, { metadata: { a: 'x\ud800' } }),
      ok(20_011, { content: 'x'.repeat(3001), metadata: 'no' }),
    ];
    const broken = [1, 2, 3, 4, 6, 7, 9, 10, 11];
    const data = await batch(documents);
    expect(data.results.map((r) => [r.index, r.status])).toEqual(documents.map((_, i) => [i, broken.includes(i) ? 422 : 201]));
    expect(data).toMatchObject({ created: documents.length - broken.length, failed: broken.length });
    expect(await documentCount()).toBe(before + documents.length - broken.length);

    for (const i of broken) {
      const error = failure(data.results[i]);
      const alone = await call(t.app, 'POST', SINGLE, { body: documents[i] });
      expect(alone.statusCode, `item ${i}`).toBe(422);
      expect(error.detail, `item ${i}`).toEqual(alone.json().detail);
      expect(error.error_code).toBe('VALIDATION_ERROR');
      expect(error.message).toBe(error.detail!.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
    }
    expect(failure(data.results[1]).detail).toContainEqual(expect.objectContaining({ loc: ['body', 'embedding'], type: 'too_short' }));
    expect(failure(data.results[2]).detail).toContainEqual(expect.objectContaining({ loc: ['body', 'content'], type: 'missing' }));
    expect(failure(data.results[4]).detail).toContainEqual(expect.objectContaining({ loc: ['body', 'embedding'], type: 'value_error' }));
    expect(failure(data.results[6]).detail).toContainEqual(expect.objectContaining({ loc: ['body', 'content'], type: 'string_unicode' }));
    expect(failure(data.results[11]).detail?.map((d) => d.loc.join('.')).sort()).toEqual(['body.content', 'body.metadata']);

    // The repeated external id: two versions, the later item the latest.
    const versions = await call(t.app, 'GET', '/api/v1/documents/external/mixed/versions');
    expect(versions.json().data.map((d: { id: number }) => d.id)).toEqual([stored(data.results[8]).document_id, stored(data.results[0]).document_id]);
    const five = await call(t.app, 'GET', `/api/v1/documents/internal/${stored(data.results[5]).document_id}`);
    expect(five.json().data).toMatchObject({ document_metadata: { team: 'x' }, pages: [{ content: 'Mixed 20005.' }] });
  });

  it('answers an item nested too deep in its place, and one too deep for any body refuses the batch', async () => {
    const data = await batch([{ embedding: vector(30_000), content: 'Deep.', metadata: nested(80) }, { embedding: vector(30_001), content: 'Shallow.', metadata: nested(60) }]);
    expect(data.results.map((r) => r.status)).toEqual([422, 201]);
    expect(failure(data.results[0]).detail![0]).toMatchObject({ type: 'json_too_deep' });
    expect(failure(data.results[0]).detail![0].loc[0]).toBe('body');
    const alone = await call(t.app, 'POST', SINGLE, { body: { embedding: vector(30_000), content: 'Deep.', metadata: nested(80) } });
    expect(alone.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_too_deep' });

    const before = await documentCount();
    const res = await call(t.app, 'POST', BATCH, { body: { documents: [{ embedding: vector(30_002), content: 'Fine.' }, { content: 'x', metadata: nested(200) }] } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_too_deep' });
    expect(await documentCount()).toBe(before);
  });

  it('makes versions of a repeated external id in the order of the items, across several transactions', async () => {
    const n = 260;
    const documents = Array.from({ length: n }, (_, i) => ({ embedding: vector(40_000 + i), content: `Version ${i}.`, external_id: `ordered-${i % 2}` }));
    const data = await batch(documents);
    expect(data.created).toBe(n);
    const ids = data.results.map((r) => stored(r).document_id);
    for (const parity of [0, 1]) {
      const versions = await call(t.app, 'GET', `/api/v1/documents/external/ordered-${parity}/versions`);
      const expected = ids.filter((_, i) => i % 2 === parity).reverse();
      expect(versions.json().data.map((d: { id: number }) => d.id)).toEqual(expected);
      const latest = await call(t.app, 'GET', `/api/v1/documents/external/ordered-${parity}`);
      expect(latest.json().data.pages[0].content).toBe(`Version ${n - 2 + parity}.`);
    }
  });

  it('refuses a malformed body as a whole with a 422 and stores nothing', async () => {
    const before = await documentCount();
    const good = { embedding: vector(50_000), content: 'Never stored.' };
    const cases: [string, { body?: unknown; rawBody?: string }, string[], string][] = [
      ['an array', { body: [good] }, ['body'], 'dict_type'],
      ['a string', { body: 'documents' }, ['body'], 'dict_type'],
      ['no documents', { body: { document: [good] } }, ['body', 'documents'], 'missing'],
      ['documents an object', { body: { documents: good } }, ['body', 'documents'], 'list_type'],
      ['documents empty', { body: { documents: [] } }, ['body', 'documents'], 'too_short'],
      ['1,001 documents', { body: { documents: [...new Array(1000).fill({}), good] } }, ['body', 'documents'], 'too_long'],
      ['an item not an object', { body: { documents: [good, 5] } }, ['body', 'documents', '1'], 'dict_type'],
      ['malformed JSON', { rawBody: '{"documents": [' }, ['body'], 'json_invalid'],
      ['an empty body', { rawBody: '' }, ['body'], 'missing'],
    ];
    for (const [name, options, loc, type] of cases) {
      const res = await call(t.app, 'POST', BATCH, { ...options, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode, name).toBe(422);
      const body = res.json();
      expect(Object.keys(body), name).toEqual(['detail']);
      expect(body.detail, name).toContainEqual(expect.objectContaining({ loc, type }));
    }
    expect(await documentCount()).toBe(before);
  });

  it('takes 1,000 items, answering each that breaks the rules on its own', async () => {
    const data = await batch(new Array(1000).fill({}));
    expect(data).toMatchObject({ created: 0, failed: 1000 });
    expect(data.results[999]).toMatchObject({
      index: 999,
      status: 422,
      error: {
        error_code: 'VALIDATION_ERROR',
        detail: expect.arrayContaining([expect.objectContaining({ loc: ['body', 'embedding'], type: 'missing' }), expect.objectContaining({ loc: ['body', 'content'], type: 'missing' })]),
      },
    });
  });

  it('needs a write key of the workspace, and stores in that workspace only', async () => {
    const body = { documents: [{ embedding: vector(60_000), content: 'Scoped.' }] };
    const read = await call(t.app, 'POST', BATCH, { key: KEYS.read, body });
    expect(read.statusCode).toBe(403);
    expect(read.json()).toMatchObject({ success: false, data: null, error: { error_code: 'FORBIDDEN' } });
    const none = await call(t.app, 'POST', BATCH, { key: null, body });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ success: false, error: { error_code: 'UNAUTHORIZED' } });

    const other = await batch(body.documents, KEYS.other);
    const id = stored(other.results[0]).document_id;
    expect((await call(t.app, 'GET', `/api/v1/documents/internal/${id}`, { key: KEYS.other })).statusCode).toBe(200);
    expect((await call(t.app, 'GET', `/api/v1/documents/internal/${id}`, { key: KEYS.read })).statusCode).toBe(404);
  });

  it('takes a body over the single route limit, and refuses one declared over its own at once', async () => {
    const documents = Array.from({ length: 50 }, (_, i) => ({ embedding: vector(70_000 + i), content: `Large body ${i}.` }));
    const text = JSON.stringify({ documents });
    expect(text.length).toBeGreaterThan(t.config.bodyLimit);
    const single = await call(t.app, 'POST', SINGLE, { rawBody: JSON.stringify({ ...documents[0], content: 'x'.repeat(t.config.bodyLimit) }) });
    expect(single.statusCode).toBe(413);
    const res = await call(t.app, 'POST', BATCH, { rawBody: text });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.json().data.created).toBe(50);

    const limit = t.config.bodyLimit * 64;
    const declared = await t.app.inject({
      method: 'POST',
      url: BATCH,
      headers: { 'x-api-key': KEYS.write, 'content-type': 'application/json', 'content-length': String(limit + 1) },
      payload: '{"documents": []}',
    });
    expect(declared.statusCode).toBe(413);
    expect(declared.json()).toMatchObject({ success: false, error: { error_code: 'PAYLOAD_TOO_LARGE', message: `Request body exceeds the limit of ${limit} bytes` } });
  });

  // Last: an endpoint watching the workspace sends later writes through the webhook path.
  it('records a task.completed event for each stored item, as the single ingest does', async () => {
    const hook = await call(t.app, 'POST', '/api/v1/webhooks', { key: KEYS.admin, body: { url: `${receiver.url}/batch`, events: ['task.completed'] } });
    expect(hook.statusCode, hook.body).toBe(201);
    const single = await call(t.app, 'POST', SINGLE, { body: { embedding: vector(80_000), content: 'One alone.' } });
    expect(single.statusCode).toBe(201);
    const data = await batch([
      { embedding: vector(80_001), content: 'Watched one.', external_id: 'watched' },
      { embedding: vector(1, 3), content: 'Broken.' },
      { embedding: vector(80_002), content: 'Watched two.' },
    ]);
    expect(data.results.map((r) => r.status)).toEqual([201, 422, 201]);
    const tasks = [single.json().data.task_identifier, stored(data.results[0]).task_identifier, stored(data.results[2]).task_identifier];
    const received = await receiver.waitFor((all) => all.filter((r) => r.path === '/batch').length >= 3, 30_000);
    const events = received.filter((r) => r.path === '/batch').map((r) => r.event);
    expect(events).toHaveLength(3);
    const byTask = new Map(events.map((e) => [e.data.task_identifier, e]));
    expect([...byTask.keys()].sort()).toEqual([...tasks].sort());
    const shape = (data: Record<string, unknown>) => Object.keys(data).sort();
    for (const task of tasks) {
      const event = byTask.get(task)!;
      expect(event.type).toBe('task.completed');
      expect(shape(event.data)).toEqual(shape(byTask.get(tasks[0])!.data));
      expect(event.data).toMatchObject({ status: 'COMPLETED', progress: 100 });
    }
    expect(byTask.get(tasks[1])!.data).toMatchObject({ title: 'Ingest embedding watched', document_ids: [stored(data.results[0]).document_id] });
  });
});

describe('batch embedding ingest: a body over the route limit sent without a declared length', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { FOLIO_BODY_LIMIT_BYTES: '4096' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => t?.close());

  it('answers 413 with the limit of the route', async () => {
    const port = (t.app.server.address() as net.AddressInfo).port;
    const limit = 4096 * 64;
    const chunk = JSON.stringify({ documents: [{ content: 'x'.repeat(limit) }] });
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(`POST ${BATCH} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEYS.write}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
        socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`);
      });
      socket.on('data', (data) => {
        text += data.toString();
        if (text.includes('\r\n\r\n') && text.trimEnd().endsWith('}')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.on('end', () => resolve(text));
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { error_code: 'PAYLOAD_TOO_LARGE', message: `Request body exceeds the limit of ${limit} bytes` } });
  });
});
