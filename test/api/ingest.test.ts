// File and URL ingestion over HTTP on both engines: the upload rules (size, emptiness,
// type, fields), task progress, the stored original, and URL fetching against a local
// server (redirects, slow and oversized answers, a refused private address).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASHING_V2_MODEL, lexemeEmbed } from '../../src/providers/embeddings/index.js';
import { enginePageLexemes } from '../../src/search/page-tsvector.js';
import { pageTsvector } from '../../src/text/english-tsvector.js';
import { encodeEmbedding } from '../../src/store/embedding-bytes.js';
import { ENGINES } from '../helpers/stores.js';
import { KEYS, call, startTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody, type FilePart } from '../helpers/multipart.js';
import { waitForTask } from '../helpers/tasks.js';
import { CORPUS_DOCS as DOCS } from '../helpers/corpus.js';

const BITCOIN = fs.readFileSync(path.join(DOCS, 'pdf/text/bitcoin.pdf'));
const ALICE = fs.readFileSync(path.join(DOCS, 'txt/alice-in-wonderland.txt'));

describe.each(ENGINES)('file and URL ingestion on %s', (engine) => {
  let t: TestApp;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(engine, { env: { FOLIO_MAX_FILE_MB: '2', FOLIO_URL_ALLOWLIST: '127.0.0.1' } });
    server = http.createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/bitcoin.pdf') {
        res.writeHead(200, { 'content-type': 'application/pdf' }).end(BITCOIN);
      } else if (url === '/page.html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><head><title>Local page</title></head><body><main><h1>Heading</h1><p>A paragraph about lighthouses and their keepers.</p></main></body></html>');
      } else if (url.startsWith('/redirect/')) {
        const n = Number(url.split('/')[2]);
        res.writeHead(302, { location: n > 0 ? `/redirect/${n - 1}` : '/page.html' }).end();
      } else if (url === '/slow') {
        // Never answers: the fetch must time out rather than hang the task.
      } else if (url === '/huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let sent = 0;
        const pump = () => {
          while (sent < 4 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      } else if (url === '/private') {
        res.writeHead(302, { location: 'http://10.0.0.1/secret' }).end();
      } else {
        res.writeHead(404).end('no');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await t.close();
  });

  async function upload(fields: Record<string, string>, file?: FilePart, key: string = KEYS.write) {
    const body = multipartBody(fields, file);
    return call(t.app, 'POST', '/api/v1/documents/ingest', { key, rawBody: body.payload, headers: body.headers });
  }

  it('stores each page’s tsvector as to_tsvector makes it, computed on the parser thread for the pages it covers', async () => {
    const lexemeOf = await enginePageLexemes(t.store.db);
    expect(lexemeOf).not.toBeNull();
    // With the trigger off, a page the service stored without a tsvector keeps none.
    await sql`ALTER TABLE pages DISABLE TRIGGER pages_tsv_insert`.execute(t.store.db);
    const documentIds: number[] = [];
    try {
      for (const file of [
        { filename: 'alice.txt', contentType: 'text/plain', data: ALICE },
        { filename: 'bitcoin.pdf', contentType: 'application/pdf', data: BITCOIN },
      ]) {
        const res = await upload({}, file);
        expect(res.statusCode, res.body).toBe(201);
        const task = res.json().data.task_identifier as string;
        expect((await waitForTask(t.app, task)).status).toBe('COMPLETED');
        documentIds.push((await call(t.app, 'GET', `/api/v1/documents/task/${task}`)).json().data.id as number);
      }
    } finally {
      await sql`ALTER TABLE pages ENABLE TRIGGER pages_tsv_insert`.execute(t.store.db);
    }
    try {
      const { rows } = await sql<{ content: string; tsv: string | null; same: boolean | null }>`
        SELECT content, tsv::text AS tsv, tsv = to_tsvector('english', content) AS same
        FROM pages WHERE document_id IN (${sql.join(documentIds)}) ORDER BY id
      `.execute(t.store.db);
      const covered = rows.filter((r) => pageTsvector(r.content, lexemeOf!) !== null);
      expect(covered.length).toBeGreaterThan(0);
      expect(covered.length).toBeLessThan(rows.length);
      for (const row of rows) {
        if (pageTsvector(row.content, lexemeOf!) === null) expect(row.tsv).toBeNull();
        else expect(row.same).toBe(true);
      }
    } finally {
      for (const id of documentIds) expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${id}`)).statusCode).toBe(200);
    }
  });

  it('ingests an uploaded PDF asynchronously and keeps the original', async () => {
    // The offline embedder's vectors come from the parser's thread: this thread's embedder is not asked.
    const { embedder } = t.runtime;
    const embed = embedder.embed;
    embedder.embed = () => Promise.reject(new Error('the pages were embedded on the thread that answers requests'));
    const res = await upload({ external_id: 'bitcoin', metadata: JSON.stringify({ topic: 'crypto', year: 2008 }) }, { filename: 'bitcoin.pdf', contentType: 'application/pdf', data: BITCOIN });
    expect(res.statusCode, res.body).toBe(201);
    const receipt = res.json().data;
    expect(receipt.task_identifier).toMatch(/^IngestFile:[0-9a-f-]{36}$/);
    expect(receipt.external_id).toBe('bitcoin');
    expect(receipt.file_path).toMatch(/^files\/[0-9a-f-]{36}\/bitcoin\.pdf$/);

    const status = await waitForTask(t.app, receipt.task_identifier).finally(() => (embedder.embed = embed));
    expect(status).toMatchObject({ status: 'COMPLETED', progress: 100, title: 'Ingest bitcoin.pdf' });
    expect(status.message).toMatch(/9 pages/);

    const doc = (await call(t.app, 'GET', `/api/v1/documents/task/${receipt.task_identifier}`)).json().data;
    expect(doc.pages).toHaveLength(9);
    expect(doc.document_metadata).toEqual({ topic: 'crypto', year: 2008 });
    expect(doc.file_path).toBe(receipt.file_path);
    expect(doc.file_url).toBe(`/api/v1/documents/internal/${doc.id}/file`);
    // Embedded by the offline embedder (on the parser's thread) as from the page's text alone.
    const stored = await t.store.db.selectFrom('pages').select(['content', 'embedding', 'embedding_model']).where('document_id', '=', doc.id).orderBy('page_number').execute();
    expect(stored.map((p) => p.embedding_model)).toEqual(Array(9).fill(HASHING_V2_MODEL));
    expect(stored.map((p) => Buffer.from(p.embedding!))).toEqual(stored.map((p) => encodeEmbedding(lexemeEmbed(p.content))));

    const file = await call(t.app, 'GET', doc.file_url);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(file.headers['content-disposition']).toContain('bitcoin.pdf');
    expect(Buffer.compare(file.rawPayload, BITCOIN)).toBe(0);

    const search = await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { query: 'double-spending proof-of-work', alpha: 0.5, metadata_filter: { topic: 'crypto' } } });
    expect(search.json().data.results[0].document_id).toBe(doc.id);

    // Deleting the document removes its stored original.
    expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${doc.id}`)).statusCode).toBe(200);
    expect(await t.runtime.blobs.exists(receipt.file_path)).toBe(false);
  });

  it('detects the type from the bytes, not the name', async () => {
    const res = await upload({}, { filename: 'notes.bin', data: ALICE });
    expect(res.statusCode).toBe(201);
    expect((await waitForTask(t.app, res.json().data.task_identifier)).status).toBe('COMPLETED');
  });

  it('refuses what it cannot take, before queueing anything', async () => {
    const tooBig = await upload({}, { filename: 'big.txt', data: Buffer.alloc(2 * 1024 * 1024 + 10, 'a') });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json().error.error_code).toBe('PAYLOAD_TOO_LARGE');
    const empty = await upload({}, { filename: 'empty.txt', data: Buffer.alloc(0) });
    expect(empty.statusCode).toBe(422);
    expect(empty.json().detail[0].loc).toEqual(['body', 'file']);
    const missing = await upload({ external_id: 'x' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail[0]).toMatchObject({ loc: ['body', 'file'], type: 'missing' });
    for (const metadata of ['[1,2]', '"text"', '{broken']) {
      const bad = await upload({ metadata }, { filename: 'a.txt', data: ALICE });
      expect(bad.statusCode, metadata).toBe(422);
      expect(bad.json().detail[0].loc).toEqual(['body', 'metadata']);
    }
    const longId = await upload({ external_id: 'e'.repeat(256) }, { filename: 'a.txt', data: ALICE });
    expect(longId.statusCode).toBe(422);
    const xlsx = await upload({}, { filename: 'sheet.xlsx', data: fs.readFileSync(path.join(DOCS, 'other/terrier-document.xlsx')) });
    expect(xlsx.statusCode).toBe(415);
    expect(xlsx.json().error.error_code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const binary = await upload({}, { filename: 'x.txt', data: Buffer.from([0, 1, 2, 3, 0, 0, 255, 254, 0, 7, 0, 0, 0, 9]) });
    expect(binary.statusCode).toBe(415);
    const json = await call(t.app, 'POST', '/api/v1/documents/ingest', { body: { file: 'x' } });
    expect(json.statusCode).toBe(415);
    expect((await upload({}, { filename: 'a.txt', data: ALICE }, KEYS.read)).statusCode).toBe(403);
    // Nothing refused was queued or kept.
    const tasks = await t.store.db.selectFrom('tasks').select('identifier').where('kind', '=', 'IngestFile').execute();
    const files = fs.readdirSync(path.join(t.config.dataDir, 'blobs', 'files'));
    expect(files.length).toBeLessThanOrEqual(tasks.length);
  });

  it('keeps no file when the form fails after the file was stored', async () => {
    const dir = path.join(t.config.dataDir, 'blobs', 'files');
    const before = fs.existsSync(dir) ? fs.readdirSync(dir).length : 0;
    const extra = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`field${i}`, 'x']));
    const body = multipartBody({}, { filename: 'a.txt', data: ALICE }, extra);
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest', { rawBody: body.payload, headers: body.headers });
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json().error).toEqual({ error_code: 'PAYLOAD_TOO_LARGE', message: 'The multipart form has too many parts: send one file and only the documented fields' });
    expect(fs.existsSync(dir) ? fs.readdirSync(dir).length : 0).toBe(before);
  });

  it('answers 404 for the file of an embedding document or a foreign one', async () => {
    const emb = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { body: { embedding: new Array(1536).fill(0.5), content: 'x' } });
    const id = emb.json().data.document_id;
    expect((await call(t.app, 'GET', `/api/v1/documents/internal/${id}/file`)).statusCode).toBe(404);
    const res = await upload({}, { filename: 'alice.txt', data: ALICE });
    await waitForTask(t.app, res.json().data.task_identifier);
    const doc = (await call(t.app, 'GET', `/api/v1/documents/task/${res.json().data.task_identifier}`)).json().data;
    expect((await call(t.app, 'GET', `/api/v1/documents/internal/${doc.id}/file`, { key: KEYS.other })).statusCode).toBe(404);
  });

  it('ingests a URL, following redirects, and records it as file_url', async () => {
    const url = `${base}/redirect/3`;
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/url', { body: { url, external_id: 'page', metadata: { src: 'web' } } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.task_identifier).toMatch(/^IngestUrl:/);
    const status = await waitForTask(t.app, res.json().data.task_identifier);
    expect(status.status, status.message).toBe('COMPLETED');
    const doc = (await call(t.app, 'GET', '/api/v1/documents/external/page')).json().data;
    expect(doc.file_url).toBe(url);
    expect(doc.document_metadata).toEqual({ src: 'web', title: 'Local page' });
    expect(doc.pages[0].content).toContain('lighthouses');
    const original = await call(t.app, 'GET', `/api/v1/documents/internal/${doc.id}/file`);
    expect(original.body).toContain('lighthouses');
  });

  it('ends URL tasks FAILED with the reason: too many redirects, 404, oversized, private address', async () => {
    const cases: [string, RegExp][] = [
      [`${base}/redirect/9`, /redirect/i],
      [`${base}/missing`, /404/],
      [`${base}/huge`, /larger than/i],
      [`${base}/private`, /10\.0\.0\.1|private|not allowed|refused/i],
    ];
    for (const [url, reason] of cases) {
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest/url', { body: { url } });
      expect(res.statusCode).toBe(201);
      const status = await waitForTask(t.app, res.json().data.task_identifier);
      expect(status.status, url).toBe('FAILED');
      expect(status.message, url).toMatch(reason);
    }
  });

  it('answers 422 for URLs that are not http(s)', async () => {
    for (const url of ['ftp://example.com/a.pdf', 'file:///etc/passwd', 'not a url', 'http://user:pw@example.com/']) {
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest/url', { body: { url } });
      expect(res.statusCode, url).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['body', 'url']);
    }
    const missing = await call(t.app, 'POST', '/api/v1/documents/ingest/url', { body: {} });
    expect(missing.json().detail[0]).toMatchObject({ loc: ['body', 'url'], type: 'missing' });
  });
});

describe('a slow URL', { timeout: 120_000 }, () => {
  it('times out instead of hanging the task', async () => {
    const server = http.createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const t = await startTestApp('pglite', { env: { FOLIO_URL_ALLOWLIST: '127.0.0.1', FOLIO_URL_TIMEOUT_MS: '1500' } });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest/url', { body: { url } });
      const status = await waitForTask(t.app, res.json().data.task_identifier, 60_000);
      expect(status.message).toMatch(/timed out/i);
    } finally {
      await t.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
