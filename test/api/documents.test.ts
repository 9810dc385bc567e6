// The document API over HTTP, on both engines: embedding ingest and its validation,
// retrieval, content drill-down, versions, metadata patch, deletion and previews.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/stores.js';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';

describe.each(ENGINES)('document API on %s', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(async () => {
    await t.close();
  });

  async function ingest(body: Record<string, unknown>, key: string = KEYS.write) {
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { key, body: { embedding: vector(1), content: 'Some text.', ...body } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { task_identifier: string; file_path: string; external_id: string | null; document_id: number };
  }

  async function documentCount(): Promise<number> {
    const row = await t.store.db.selectFrom('documents').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  describe('POST /documents/ingest/embedding', () => {
    it('stores the document synchronously and answers 201 in the envelope', async () => {
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
        body: { embedding: vector(2), content: 'Alpha beta.\n\nGamma delta. Epsilon.', metadata: { kind: 'memo', n: 3 }, external_id: 'ext-1' },
      });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(body.success).toBe(true);
      expect(body.error).toBeNull();
      expect(body.meta.version).toBe('1.0.0');
      expect(new Date(body.meta.timestamp).toISOString()).toBe(body.meta.timestamp);
      expect(body.data.task_identifier).toMatch(/^IngestEmbedding:[0-9a-f-]{36}$/);
      expect(body.data.file_path).toBe(`embedding/${body.data.task_identifier.split(':')[1]}`);
      expect(body.data.external_id).toBe('ext-1');

      const doc = await call(t.app, 'GET', `/api/v1/documents/task/${body.data.task_identifier}`);
      expect(doc.statusCode).toBe(200);
      const data = doc.json().data;
      expect(data).toMatchObject({
        external_id: 'ext-1',
        file_path: body.data.file_path,
        file_url: null,
        document_metadata: { kind: 'memo', n: 3 },
        pages: [{ content: 'Alpha beta.\n\nGamma delta. Epsilon.', page_number: 1 }],
      });
      // Each page carries its id, which leads to its paragraphs and sentences.
      const page = await call(t.app, 'GET', `/api/v1/documents/content/pages/${data.pages[0].id}?include_paragraphs=true`);
      expect(page.statusCode, page.body).toBe(200);
      expect(page.json()).toMatchObject({ id: data.pages[0].id, document_id: data.id, page_number: 1, paragraphs: [{ paragraph_index: 0 }, { paragraph_index: 1 }] });

      const status = await call(t.app, 'GET', `/api/v1/tasks/status/${body.data.task_identifier}`);
      expect(status.statusCode).toBe(200);
      expect(status.json().data).toMatchObject({ status: 'COMPLETED', progress: 100 });
      expect(typeof status.json().data.title).toBe('string');
      expect(typeof status.json().data.message).toBe('string');
    });

    it('stores the embedding normalised as float32', async () => {
      const raw = vector(3).map((v) => v * 40);
      const receipt = await ingest({ embedding: raw });
      const page = await t.store.db.selectFrom('pages').select(['embedding', 'embedding_model']).where('document_id', '=', receipt.document_id).executeTakeFirstOrThrow();
      const stored = new Float32Array(new Uint8Array(page.embedding!).buffer);
      expect(stored.length).toBe(1536);
      const norm = Math.sqrt(stored.reduce((s, v) => s + v * v, 0));
      expect(norm).toBeCloseTo(1, 5);
      const rawNorm = Math.sqrt(raw.reduce((s, v) => s + v * v, 0));
      for (const i of [0, 1, 700, 1535]) expect(stored[i]).toBeCloseTo(raw[i] / rawNorm, 6);
      expect(page.embedding_model).toBe('precomputed');
    });

    it('stores each page’s tsvector as to_tsvector makes it, computed beforehand or not, and finds it by keyword', async () => {
      const contents = [
        'The well-known keepers tended 45.3% of the lighthouses.\n\nThey said--rightly--that storms came.',
        'Lighthouse keepers: write to info@example.com or see e.g. https://example.com/x (covid-19, café).',
      ];
      const receipts = await Promise.all(contents.map((content, i) => ingest({ content, external_id: `tsv-${i}` })));
      const rows = await Promise.all(
        receipts.map(async (r) => {
          const query = sql<{ same: boolean; tsv: string }>`
            SELECT tsv = to_tsvector('english', content) AS same, tsv::text AS tsv FROM pages WHERE document_id = ${r.document_id}
          `;
          return (await query.execute(t.store.db)).rows[0];
        }),
      );
      expect(rows.map((r) => r.same)).toEqual([true, true]);
      expect(rows[0].tsv).toContain("'well-known':2");
      const search = await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { query: 'lighthouse keepers', alpha: 0, top_k: 10 } });
      expect(search.statusCode, search.body).toBe(200);
      const found = (search.json().data.results as { document_id: number }[]).map((r) => r.document_id);
      expect(found).toEqual(expect.arrayContaining(receipts.map((r) => r.document_id)));
    });

    it('stores concurrent ingests together, each with its own document, task and answer', async () => {
      const n = 60;
      const answers = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
            body: { embedding: vector(1000 + i), content: `Concurrent page ${i}.`, metadata: { i }, external_id: i % 2 ? `conc-${i}` : null },
          }),
        ),
      );
      const receipts = answers.map((res) => {
        expect(res.statusCode, res.body).toBe(201);
        return res.json().data as { task_identifier: string; document_id: number; external_id: string | null };
      });
      expect(new Set(receipts.map((r) => r.document_id)).size).toBe(n);
      for (const [i, receipt] of receipts.entries()) {
        expect(receipt.external_id).toBe(i % 2 ? `conc-${i}` : null);
        const doc = await call(t.app, 'GET', `/api/v1/documents/task/${receipt.task_identifier}`);
        expect(doc.json().data).toMatchObject({ id: receipt.document_id, document_metadata: { i }, pages: [{ content: `Concurrent page ${i}.` }] });
        const status = await call(t.app, 'GET', `/api/v1/tasks/status/${receipt.task_identifier}`);
        expect(status.json().data).toMatchObject({ status: 'COMPLETED', progress: 100 });
        // Searchable as soon as acknowledged: its own embedding finds it first.
        const search = await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { embedding: vector(1000 + i), top_k: 1 } });
        expect(search.json().data.results[0].document_id).toBe(receipt.document_id);
      }
    });

    it('answers a bad request among concurrent good ones with its own 422, storing the others', async () => {
      const before = await documentCount();
      const bodies = Array.from({ length: 12 }, (_, i) => ({ embedding: i === 5 ? new Array(1536).fill(0) : vector(2000 + i), content: `Batch ${i}.` }));
      const answers = await Promise.all(bodies.map((body) => call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body })));
      expect(answers.map((res) => res.statusCode)).toEqual(bodies.map((_, i) => (i === 5 ? 422 : 201)));
      expect(await documentCount()).toBe(before + 11);
    });

    it('accepts null metadata and external_id, and reports null external_id', async () => {
      const receipt = await ingest({ metadata: null, external_id: null });
      expect(receipt.external_id).toBeNull();
      const doc = await call(t.app, 'GET', `/api/v1/documents/internal/${receipt.document_id}`);
      expect(doc.json().data.document_metadata).toEqual({});
    });

    it('accepts content of exactly 3000 characters and an external_id of 255', async () => {
      await ingest({ content: 'x'.repeat(3000), external_id: 'e'.repeat(255) });
    });

    const invalid: [string, Record<string, unknown>, string[], string][] = [
      ['missing embedding', { embedding: undefined }, ['body', 'embedding'], 'missing'],
      ['missing content', { content: undefined }, ['body', 'content'], 'missing'],
      ['1535 dimensions', { embedding: vector(1, 1535) }, ['body', 'embedding'], 'too_short'],
      ['1537 dimensions', { embedding: vector(1, 1537) }, ['body', 'embedding'], 'too_long'],
      ['strings in the embedding', { embedding: vector(1).map((v, i) => (i === 5 ? String(v) : v)) }, ['body', 'embedding', '5'], 'float_type'],
      ['a zero embedding', { embedding: new Array(1536).fill(0) }, ['body', 'embedding'], 'value_error'],
      ['content too long', { content: 'x'.repeat(3001) }, ['body', 'content'], 'string_too_long'],
      ['content not a string', { content: 42 }, ['body', 'content'], 'string_type'],
      ['metadata an array', { metadata: [1, 2] }, ['body', 'metadata'], 'dict_type'],
      ['metadata a string', { metadata: 'x' }, ['body', 'metadata'], 'dict_type'],
      ['external_id too long', { external_id: 'e'.repeat(256) }, ['body', 'external_id'], 'string_too_long'],
      ['external_id a number', { external_id: 7 }, ['body', 'external_id'], 'string_type'],
      ['NUL in content', { content: 'a\u0000b' }, ['body', 'content'], 'string_unicode'],
      ['NUL in a metadata key', { metadata: { 'a\u0000': 1 } }, ['body', 'metadata', 'a\u0000'], 'string_unicode'],
      ['a lone surrogate in metadata', { metadata: { a: 'x\ud800' } }, ['body', 'metadata', 'a'], 'string_unicode'],
    ];
    it.each(invalid)('answers 422 for %s and stores nothing', async (_name, override, loc, type) => {
      const before = await documentCount();
      const body = { embedding: vector(1), content: 'text', ...override };
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body });
      expect(res.statusCode, res.body).toBe(422);
      const detail = res.json().detail as { loc: string[]; msg: string; type: string }[];
      expect(detail).toContainEqual(expect.objectContaining({ loc, type }));
      for (const item of detail) expect(typeof item.msg).toBe('string');
      expect(await documentCount()).toBe(before);
    });

    it('answers 422 json_invalid for malformed JSON', async () => {
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { rawBody: '{"embedding": [1, 2,' });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
    });

    it('answers 422 for an empty body and for a JSON array body', async () => {
      const empty = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { rawBody: '', headers: { 'content-type': 'application/json' } });
      expect(empty.statusCode).toBe(422);
      expect(empty.json().detail[0]).toMatchObject({ loc: ['body'], type: 'missing' });
      const array = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body: [1, 2] });
      expect(array.statusCode).toBe(422);
    });

    it('answers 413 for a body over the limit and 415 for a non-JSON content type', async () => {
      const big = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { rawBody: JSON.stringify({ content: 'x'.repeat(2 * 1024 * 1024) }) });
      expect(big.statusCode).toBe(413);
      expect(big.json().error.error_code).toBe('PAYLOAD_TOO_LARGE');
      const text = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { rawBody: 'hello', headers: { 'content-type': 'text/plain' } });
      expect(text.statusCode).toBe(415);
      expect(text.json().error.error_code).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    it('segments the content into paragraphs and sentences with zero-based indices', async () => {
      const receipt = await ingest({ content: 'First sentence. Second one here.\n\nA new paragraph.' });
      const page = (await t.store.db.selectFrom('pages').select('id').where('document_id', '=', receipt.document_id).executeTakeFirstOrThrow()).id;
      const res = await call(t.app, 'GET', `/api/v1/documents/content/pages/${page}?include_paragraphs=true`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.success).toBeUndefined();
      expect(body).toMatchObject({ id: page, document_id: receipt.document_id, page_number: 1 });
      expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/);
      expect(body.paragraphs.map((p: { paragraph_index: number; content: string }) => [p.paragraph_index, p.content])).toEqual([
        [0, 'First sentence. Second one here.'],
        [1, 'A new paragraph.'],
      ]);
      const first = body.paragraphs[0];
      expect(first.page_id).toBe(page);
      expect(first.sentences.map((s: { sentence_index: number; content: string; paragraph_id: number }) => [s.sentence_index, s.content, s.paragraph_id])).toEqual([
        [0, 'First sentence.', first.id],
        [1, 'Second one here.', first.id],
      ]);

      const plain = await call(t.app, 'GET', `/api/v1/documents/content/pages/${page}`);
      expect(plain.json()).not.toHaveProperty('paragraphs');

      const para = await call(t.app, 'GET', `/api/v1/documents/content/paragraphs/${first.id}`);
      expect(para.statusCode).toBe(200);
      expect(para.json()).toEqual(first);
    });
  });

  describe('versions by external id', () => {
    it('keeps every version, returns the latest, lists newest first', async () => {
      const v1 = await ingest({ external_id: 'report', content: 'Version one.', metadata: { v: 1 } });
      const v2 = await ingest({ external_id: 'report', content: 'Version two.', metadata: { v: 2 } });
      const latest = await call(t.app, 'GET', '/api/v1/documents/external/report');
      expect(latest.statusCode).toBe(200);
      expect(latest.json().data).toMatchObject({ id: v2.document_id, document_metadata: { v: 2 }, pages: [{ content: 'Version two.', page_number: 1 }] });
      const versions = await call(t.app, 'GET', '/api/v1/documents/external/report/versions');
      expect(versions.json().data.map((d: { id: number }) => d.id)).toEqual([v2.document_id, v1.document_id]);
      expect(versions.json().data[0]).not.toHaveProperty('pages');
    });

    it('finds external ids with slashes and spaces when URL-encoded', async () => {
      const r = await ingest({ external_id: 'folder/a file.pdf' });
      const res = await call(t.app, 'GET', `/api/v1/documents/external/${encodeURIComponent('folder/a file.pdf')}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.id).toBe(r.document_id);
    });
  });

  describe('PATCH /documents/external/{id}/metadata', () => {
    it('applies a JSON merge patch to the latest version and bumps updated_at', async () => {
      const old = await ingest({ external_id: 'patch-me', metadata: { keep: 1, drop: 2, nested: { a: 1, b: 2 } } });
      const latest = await ingest({ external_id: 'patch-me', metadata: { keep: 1, drop: 2, nested: { a: 1, b: 2 }, tags: ['x'] } });
      const before = (await call(t.app, 'GET', `/api/v1/documents/internal/${latest.document_id}`)).json().data;
      const res = await call(t.app, 'PATCH', '/api/v1/documents/external/patch-me/metadata', {
        body: { metadata: { drop: null, nested: { b: null, c: 3 }, tags: ['y', 'z'], added: 'new' } },
      });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      expect(data.status).toBe(true);
      expect(data.data).toMatchObject({ id: latest.document_id, external_id: 'patch-me', document_metadata: { keep: 1, nested: { a: 1, c: 3 }, tags: ['y', 'z'], added: 'new' } });
      expect(data.data.document_metadata).not.toHaveProperty('drop');
      expect(data.data).not.toHaveProperty('pages');
      expect(Date.parse(data.data.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
      expect(data.data.created_at).toBe(before.created_at);
      const untouched = (await call(t.app, 'GET', `/api/v1/documents/internal/${old.document_id}`)).json().data;
      expect(untouched.document_metadata).toEqual({ keep: 1, drop: 2, nested: { a: 1, b: 2 } });
    });

    it('loses no update when patches run concurrently', async () => {
      await ingest({ external_id: 'concurrent', metadata: {} });
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call(t.app, 'PATCH', '/api/v1/documents/external/concurrent/metadata', { body: { metadata: { [`k${i}`]: i } } })),
      );
      for (const r of responses) expect(r.statusCode).toBe(200);
      const doc = (await call(t.app, 'GET', '/api/v1/documents/external/concurrent')).json().data;
      expect(Object.keys(doc.document_metadata).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`).sort());
    });

    it('answers 404 for an unknown external id and 422 without a metadata object', async () => {
      const missing = await call(t.app, 'PATCH', '/api/v1/documents/external/nope/metadata', { body: { metadata: { a: 1 } } });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().error.error_code).toBe('RESOURCE_NOT_FOUND');
      const bad = await call(t.app, 'PATCH', '/api/v1/documents/external/patch-me/metadata', { body: { metadata: [1] } });
      expect(bad.statusCode).toBe(422);
      expect(bad.json().detail[0].loc).toEqual(['body', 'metadata']);
      const none = await call(t.app, 'PATCH', '/api/v1/documents/external/patch-me/metadata', { body: {} });
      expect(none.statusCode).toBe(422);
      expect(none.json().detail[0]).toMatchObject({ loc: ['body', 'metadata'], type: 'missing' });
    });
  });

  describe('deletion', () => {
    it('deletes by internal id, then answers 404', async () => {
      const r = await ingest({});
      const res = await call(t.app, 'DELETE', `/api/v1/documents/internal/${r.document_id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ deleted_count: 1, deleted_ids: [r.document_id] });
      expect((await call(t.app, 'GET', `/api/v1/documents/internal/${r.document_id}`)).statusCode).toBe(404);
      expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${r.document_id}`)).statusCode).toBe(404);
      const pages = await t.store.db.selectFrom('pages').select('id').where('document_id', '=', r.document_id).execute();
      expect(pages).toEqual([]);
    });

    it('previews and deletes the latest version only, or all versions', async () => {
      const a = await ingest({ external_id: 'del' });
      const b = await ingest({ external_id: 'del' });
      const c = await ingest({ external_id: 'del' });
      const previewLatest = await call(t.app, 'GET', '/api/v1/documents/delete/external/del/preview');
      expect(previewLatest.json().data).toEqual({ document_count: 1, document_ids: [c.document_id] });
      const previewAll = await call(t.app, 'GET', '/api/v1/documents/delete/external/del/preview?latest_only=false');
      expect(previewAll.json().data).toEqual({ document_count: 3, document_ids: [a.document_id, b.document_id, c.document_id] });
      // Previews delete nothing.
      expect((await call(t.app, 'GET', '/api/v1/documents/external/del/versions')).json().data).toHaveLength(3);

      const latest = await call(t.app, 'DELETE', '/api/v1/documents/external/del?latest_only=true');
      expect(latest.json().data).toEqual({ deleted_count: 1, deleted_ids: [c.document_id] });
      expect((await call(t.app, 'GET', '/api/v1/documents/external/del')).json().data.id).toBe(b.document_id);
      const all = await call(t.app, 'DELETE', '/api/v1/documents/external/del?latest_only=false');
      expect(all.json().data).toEqual({ deleted_count: 2, deleted_ids: [a.document_id, b.document_id] });
      expect((await call(t.app, 'GET', '/api/v1/documents/external/del')).statusCode).toBe(404);
      expect((await call(t.app, 'DELETE', '/api/v1/documents/external/del')).statusCode).toBe(404);
      expect((await call(t.app, 'GET', '/api/v1/documents/delete/external/del/preview')).statusCode).toBe(404);
    });

    it('answers 422 for a latest_only that is not a boolean', async () => {
      const res = await call(t.app, 'DELETE', '/api/v1/documents/external/x?latest_only=maybe');
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ loc: ['query', 'latest_only'], type: 'bool_type' });
    });

    it('previews by metadata and date filters', async () => {
      const x = await ingest({ metadata: { team: 'preview-x', year: 2020, tags: ['a', 'b'] } });
      const y = await ingest({ metadata: { team: 'preview-y', year: 2024, tags: ['b'] } });
      const preview = (filter: unknown) => call(t.app, 'POST', '/api/v1/documents/delete/preview', { body: filter });
      expect((await preview({ metadata_filter: { team: 'preview-x' } })).json().data).toEqual({ document_count: 1, document_ids: [x.document_id] });
      expect((await preview({ metadata_filter: { team: { $in: ['preview-x', 'preview-y'] }, year: { $gte: 2021 } } })).json().data.document_ids).toEqual([y.document_id]);
      expect((await preview({ metadata_filter: { $or: [{ team: 'preview-x' }, { team: 'preview-y' }], tags: { $contains: ['b'] } } })).json().data.document_ids).toEqual([
        x.document_id,
        y.document_id,
      ]);
      const created = (await call(t.app, 'GET', `/api/v1/documents/internal/${y.document_id}`)).json().data.created_at as string;
      const dated = await preview({ metadata_filter: { team: { $regex: '^preview-' } }, created_at_filter: { $gte: created.slice(0, 19) } });
      expect(dated.json().data.document_ids).toContain(y.document_id);
      const future = await preview({ created_at_filter: { $gt: '2999-01-01T00:00:00' } });
      expect(future.json().data).toEqual({ document_count: 0, document_ids: [] });
      // Still there: previews delete nothing.
      expect((await call(t.app, 'GET', `/api/v1/documents/internal/${x.document_id}`)).statusCode).toBe(200);
    });

    const badFilters: [string, unknown, string][] = [
      ['an unknown operator', { metadata_filter: { a: { $near: 1 } } }, 'metadata_filter.a.$near'],
      ['$in without an array', { metadata_filter: { a: { $in: 3 } } }, 'metadata_filter.a.$in'],
      ['a bad $type', { metadata_filter: { a: { $type: 'date' } } }, 'metadata_filter.a.$type'],
      ['a catastrophic regex', { metadata_filter: { a: { $regex: '(a+)+$' } } }, 'metadata_filter.a.$regex'],
      ['an invalid regex', { metadata_filter: { a: { $regex: '([' } } }, 'metadata_filter.a.$regex'],
      ['a date operator not allowed', { created_at_filter: { $regex: '2020' } }, 'created_at_filter.$regex'],
      ['a date that is not ISO', { updated_at_filter: { $gt: 'yesterday' } }, 'updated_at_filter.$gt'],
    ];
    it.each(badFilters)('answers 400 INVALID_FILTER for %s', async (_name, body, path) => {
      const res = await call(t.app, 'POST', '/api/v1/documents/delete/preview', { body });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ success: false, data: null, error: { error_code: 'INVALID_FILTER' } });
      expect(res.json().error.message).toContain(path);
    });

    it('answers 422 when a filter is not an object', async () => {
      const res = await call(t.app, 'POST', '/api/v1/documents/delete/preview', { body: { metadata_filter: [1] } });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['body', 'metadata_filter']);
    });
  });

  describe('not found and bad ids', () => {
    it.each([
      ['/api/v1/documents/internal/999999999'],
      ['/api/v1/documents/task/IngestEmbedding:00000000-0000-0000-0000-000000000000'],
      ['/api/v1/documents/external/never-seen'],
      ['/api/v1/documents/external/never-seen/versions'],
      ['/api/v1/tasks/status/IngestFile:nope'],
    ])('GET %s answers 404 in the envelope', async (url) => {
      const res = await call(t.app, 'GET', url);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ data: null, success: false, error: { error_code: 'RESOURCE_NOT_FOUND' } });
      expect(typeof res.json().error.message).toBe('string');
    });

    it('answers 404 with the bare service error on the content endpoints', async () => {
      for (const url of ['/api/v1/documents/content/pages/999999999', '/api/v1/documents/content/paragraphs/999999999']) {
        const res = await call(t.app, 'GET', url);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ error_code: 'RESOURCE_NOT_FOUND', message: expect.any(String) });
      }
    });

    it.each(['abc', '1.5', '-1', '0', '99999999999999999999'])('answers 422 for document id %s', async (id) => {
      const res = await call(t.app, 'GET', `/api/v1/documents/internal/${id}`);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['path', 'document_id']);
    });

    it('answers 422 for a page id that is not an integer, with the 422 shape', async () => {
      const res = await call(t.app, 'GET', '/api/v1/documents/content/pages/x1');
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ loc: ['path', 'page_id'], type: 'int_type' });
    });

    it('answers 404 for an unknown route', async () => {
      const res = await call(t.app, 'GET', '/api/v1/nothing-here');
      expect(res.statusCode).toBe(404);
      expect(res.json().error.error_code).toBe('RESOURCE_NOT_FOUND');
    });
  });
});
