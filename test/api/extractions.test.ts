// Extractions over HTTP on both engines: definitions (create with schema checks, list, get,
// delete), runs on a URL, an upload and an ingested document as tasks with progress, results
// by task and by id in the `{data}` shape, errors in the bare service shape, scopes and
// workspaces; then runs with a language model (the local fake OpenAI server).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/stores.js';
import { KEYS, call, startTestApp, type TestApp } from '../helpers/app.js';
import { FakeOpenAI, type FakeChatBody } from '../helpers/fake-openai.js';
import { multipartBody, type FilePart } from '../helpers/multipart.js';
import { waitForTask } from '../helpers/tasks.js';
import { CORPUS_DOCS as DOCS } from '../helpers/corpus.js';

const BITCOIN = fs.readFileSync(path.join(DOCS, 'pdf/text/bitcoin.pdf'));
const TABLES_DOCX = fs.readFileSync(path.join(DOCS, 'docx/pandoc-tables.docx'));
const LABEL_TEST = fs.readFileSync(path.join(DOCS, 'pdf/text/label-test.pdf'));
// A spreadsheet: a format Folio does not read.
const XLSX = fs.readFileSync(path.join(DOCS, 'other/terrier-document.xlsx'));

const PAPER = {
  type: 'object',
  properties: {
    title: { type: 'string', description: 'Title of the paper' },
    author: { type: 'string', description: 'Name of the author' },
    email: { type: 'string', format: 'email', description: "The author's e-mail address" },
    website: { type: 'string', format: 'uri' },
  },
  required: ['title'],
};

const PLAYERS = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Player name' },
    game: { type: 'string', description: 'Sport played' },
    fame: { type: 'string' },
    blame: { type: 'string' },
  },
  required: ['name'],
};

const ARTICLE = {
  type: 'object',
  properties: {
    doi: { type: 'string' },
    received_date: { type: 'string', format: 'date', description: 'Date the manuscript was received' },
    accepted_date: { type: 'string', format: 'date', description: 'Date the manuscript was accepted' },
    volume: { type: 'integer' },
    issue: { type: 'integer' },
    keywords: { type: 'array', items: { type: 'string' } },
  },
};

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

function serve(routes: Record<string, (res: http.ServerResponse) => void>): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer((req, res) => {
    const route = routes[req.url ?? '/'];
    if (route) route(res);
    else res.writeHead(404).end('no');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

async function stop(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
}

describe.each(ENGINES)('extractions on %s', (engine) => {
  let t: TestApp;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(engine, { env: { FOLIO_MAX_FILE_MB: '2', FOLIO_URL_ALLOWLIST: '127.0.0.1', FOLIO_URL_TIMEOUT_MS: '800' } });
    ({ server, base } = await serve({
      '/bitcoin.pdf': (res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(BITCOIN),
      '/sheet.xlsx': (res) => res.writeHead(200, { 'content-type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }).end(XLSX),
      '/slow': () => undefined,
    }));
  });
  afterAll(async () => {
    await stop(server);
    await t.close();
  });

  async function define(body: Record<string, unknown>, key: string = KEYS.write) {
    return call(t.app, 'POST', '/api/v1/extractions', { body, key });
  }

  async function created(body: Record<string, unknown>): Promise<number> {
    const res = await define(body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id as number;
  }

  async function upload(fields: Record<string, string>, file?: FilePart, key: string = KEYS.write) {
    const body = multipartBody(fields, file);
    return t.app.inject({ method: 'POST', url: '/api/v1/extractions/run/file', headers: { ...body.headers, 'x-api-key': key }, payload: body.payload });
  }

  async function resultOf(taskIdentifier: string) {
    const res = await call(t.app, 'GET', `/api/v1/extractions/results/task/${taskIdentifier}`, { key: KEYS.read });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  it('creates, lists, gets and deletes definitions', async () => {
    const res = await define({ name: ' Papers ', description: 'Bibliographic details', schema: PAPER });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ success: true, error: null, meta: { version: '1.0.0' } });
    expect(body.data).toMatchObject({ name: 'Papers', description: 'Bibliographic details', schema: PAPER, multiple: false });
    expect(Number.isInteger(body.data.id)).toBe(true);
    expect(new Date(body.data.created_at).toISOString()).toBe(body.data.created_at);
    const id = body.data.id;
    const second = await created({ name: 'Players', schema: PLAYERS, multiple: true });

    const got = await call(t.app, 'GET', `/api/v1/extractions/${id}`, { key: KEYS.read });
    expect(got.statusCode).toBe(200);
    expect(got.json().data).toEqual(body.data);
    const list = await call(t.app, 'GET', '/api/v1/extractions', { key: KEYS.read });
    const ids = list.json().data.map((e: { id: number }) => e.id);
    expect(ids.indexOf(second)).toBeLessThan(ids.indexOf(id));
    expect((await call(t.app, 'GET', '/api/v1/extractions?limit=1', { key: KEYS.read })).json().data).toHaveLength(1);

    // Another workspace sees nothing, exactly as a missing id.
    const foreign = await call(t.app, 'GET', `/api/v1/extractions/${id}`, { key: KEYS.other });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ data: null, success: false, error: { error_code: 'RESOURCE_NOT_FOUND' } });
    expect((await call(t.app, 'GET', '/api/v1/extractions', { key: KEYS.other })).json().data.map((e: { id: number }) => e.id)).not.toContain(id);
    expect((await call(t.app, 'DELETE', `/api/v1/extractions/${id}`, { key: KEYS.other })).statusCode).toBe(404);

    const deleted = await call(t.app, 'DELETE', `/api/v1/extractions/${id}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().data).toEqual({ deleted_count: 1, deleted_ids: [id], deleted_results: 0 });
    const gone = await call(t.app, 'GET', `/api/v1/extractions/${id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.message).toMatch(/Extraction \d+ not found/);
    expect((await call(t.app, 'DELETE', `/api/v1/extractions/${id}`)).statusCode).toBe(404);
  });

  it('refuses bad schemas with 422 items that point at the problem', async () => {
    const cases: [unknown, string[], RegExp][] = [
      [{ type: 'array', items: { type: 'string' } }, ['body', 'schema', 'type'], /object/],
      [{ type: 'object' }, ['body', 'schema', 'properties'], /properties/],
      [{ type: 'object', properties: {} }, ['body', 'schema', 'properties'], /at least one/],
      [{ type: 'object', properties: { total: { description: 'no type' } } }, ['body', 'schema', 'properties', 'total', 'type'], /type/],
      [{ type: 'object', properties: { total: { type: 'money' } } }, ['body', 'schema', 'properties', 'total', 'type'], /Unsupported type "money"/],
      [{ type: 'object', properties: { when: { type: 'string', format: 'fortnight' } } }, ['body', 'schema', 'properties', 'when', 'format'], /format/],
      [{ type: 'object', properties: { code: { type: 'string', pattern: '[' } } }, ['body', 'schema'], /valid JSON Schema/],
      [{ type: 'object', properties: { n: { type: 'number', minimum: 'one' } } }, ['body', 'schema', 'properties', 'n', 'minimum'], /valid JSON Schema/],
      [{ type: 'object', properties: { a: { $ref: '#/$defs/a' } } }, ['body', 'schema', 'properties', 'a', 'type'], /type/],
      [{ type: 'object', properties: { a: { type: 'string', $ref: '#/$defs/a' } } }, ['body', 'schema', 'properties', 'a', '$ref'], /inline/],
      [{ type: 'object', properties: { a: { type: 'string' } }, required: ['b'] }, ['body', 'schema', 'required'], /"b"/],
      [{ type: 'object', properties: { tags: { type: 'array' } } }, ['body', 'schema', 'properties', 'tags', 'items'], /items/],
    ];
    for (const [schema, loc, msg] of cases) {
      const res = await define({ name: 'bad', schema });
      expect(res.statusCode, JSON.stringify(schema)).toBe(422);
      const detail = res.json().detail;
      expect(detail[0].loc, JSON.stringify(detail)).toEqual(loc);
      expect(detail[0].msg).toMatch(msg);
    }
    const notObject = await define({ name: 'bad', schema: 'a string' });
    expect(notObject.statusCode).toBe(422);
    expect(notObject.json().detail[0]).toMatchObject({ loc: ['body', 'schema'], type: 'dict_type' });
    const noName = await define({ schema: PAPER });
    expect(noName.json().detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'missing' });
    const blankName = await define({ name: '   ', schema: PAPER });
    expect(blankName.statusCode).toBe(422);
    const badMultiple = await define({ name: 'x', schema: PAPER, multiple: 'yes' });
    expect(badMultiple.json().detail[0]).toMatchObject({ loc: ['body', 'multiple'], type: 'bool_type' });
    // A nullable property (Pydantic's anyOf form) is fine.
    const nullable = await define({ name: 'ok', schema: { type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] } } } });
    expect(nullable.statusCode).toBe(201);
  });

  it('needs write for definitions and runs, read for reading, and answers bare errors on run routes', async () => {
    const id = await created({ name: 'Papers', schema: PAPER });
    expect((await define({ name: 'x', schema: PAPER }, KEYS.read)).statusCode).toBe(403);
    expect((await call(t.app, 'DELETE', `/api/v1/extractions/${id}`, { key: KEYS.read })).statusCode).toBe(403);
    expect((await call(t.app, 'GET', `/api/v1/extractions/${id}`, { key: KEYS.read })).statusCode).toBe(200);

    const forbidden = await call(t.app, 'POST', '/api/v1/extractions/run/url', { key: KEYS.read, body: { extraction_id: id, url: `${base}/bitcoin.pdf` } });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toEqual({ error_code: 'FORBIDDEN', message: expect.stringContaining('write') });
    const forbiddenDoc = await call(t.app, 'POST', '/api/v1/extractions/run/document', { key: KEYS.read, body: { extraction_id: id, document_id: 1 } });
    expect(forbiddenDoc.statusCode).toBe(403);
    expect((await upload({ extraction_id: String(id) }, { filename: 'a.txt', data: Buffer.from('hello') }, KEYS.read)).statusCode).toBe(403);
    const anonymous = await call(t.app, 'GET', '/api/v1/extractions/results/internal/1', { key: null });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual({ error_code: 'UNAUTHORIZED', message: expect.any(String) });
    expect((await call(t.app, 'GET', '/api/v1/extractions', { key: null })).json()).toMatchObject({ success: false, error: { error_code: 'UNAUTHORIZED' } });
  });

  it('runs on a URL: a task with progress, then the result by task and by id', async () => {
    const id = await created({ name: 'Papers', schema: PAPER });
    const url = `${base}/bitcoin.pdf`;
    const res = await call(t.app, 'POST', '/api/v1/extractions/run/url', { body: { extraction_id: id, url } });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['data']);
    expect(body.data).toEqual({ extraction_id: id, file_path: expect.stringMatching(/^files\/.+\/bitcoin\.pdf$/), task_identifier: expect.stringMatching(new RegExp(`^RunExtraction:${UUID}$`)) });

    const status = await waitForTask(t.app, body.data.task_identifier, 60_000, KEYS.read);
    expect(status).toMatchObject({ status: 'COMPLETED', progress: 100, title: 'Extract "Papers" from ' + url });
    expect(status.message).toMatch(/1 record extracted by the offline extractor/);

    const result = await resultOf(body.data.task_identifier);
    expect(Object.keys(result)).toEqual(['data']);
    expect(result.data).toEqual({
      id: expect.any(Number),
      extraction_id: id,
      extraction_document_id: expect.any(Number),
      task_identifier: body.data.task_identifier,
      results: [{ title: 'Bitcoin: A Peer-to-Peer Electronic Cash System', author: 'Satoshi Nakamoto', email: 'satoshin@gmx.com', website: 'https://www.bitcoin.org/' }],
      created_at: expect.any(String),
    });
    const byId = await call(t.app, 'GET', `/api/v1/extractions/results/internal/${result.data.id}`, { key: KEYS.read });
    expect(byId.json()).toEqual(result);
    expect((await call(t.app, 'GET', `/api/v1/extractions/results/internal/${result.data.id}`, { key: KEYS.other })).statusCode).toBe(404);

    // What the run read: the fetched file's text, page by page.
    const read = await call(t.app, 'GET', `/api/v1/extractions/documents/${result.data.extraction_document_id}`, { key: KEYS.read });
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toMatchObject({ id: result.data.extraction_document_id, extraction_id: id, source: 'url', document_id: null, file_url: url, file_path: body.data.file_path });
    expect(read.json().data.pages).toHaveLength(9);
    expect(read.json().data.pages[0]).toMatchObject({ page_number: 1, content: expect.stringContaining('Satoshi Nakamoto') });
    expect(await t.runtime.blobs.exists(body.data.file_path)).toBe(true);

    const listed = await call(t.app, 'GET', `/api/v1/extractions/${id}/results`, { key: KEYS.read });
    expect(listed.json().data.map((r: { id: number }) => r.id)).toEqual([result.data.id]);

    // Deleting the definition takes its results and fetched files with it.
    const deleted = await call(t.app, 'DELETE', `/api/v1/extractions/${id}`);
    expect(deleted.json().data.deleted_results).toBe(1);
    const gone = await call(t.app, 'GET', `/api/v1/extractions/results/internal/${result.data.id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error_code: 'RESOURCE_NOT_FOUND', message: expect.stringContaining('not found') });
    expect(await t.runtime.blobs.exists(body.data.file_path)).toBe(false);
  });

  it('validates run requests: 404 for unknown extractions, 422 for bad fields, bare shapes', async () => {
    const id = await created({ name: 'Papers', schema: PAPER });
    const unknown = await call(t.app, 'POST', '/api/v1/extractions/run/url', { body: { extraction_id: 987654, url: `${base}/bitcoin.pdf` } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error_code: 'RESOURCE_NOT_FOUND', message: 'Extraction 987654 not found' });
    const foreign = await call(t.app, 'POST', '/api/v1/extractions/run/url', { key: KEYS.other, body: { extraction_id: id, url: `${base}/bitcoin.pdf` } });
    expect(foreign.statusCode).toBe(404);
    const missing = await call(t.app, 'POST', '/api/v1/extractions/run/url', { body: { url: `${base}/bitcoin.pdf` } });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail[0]).toMatchObject({ loc: ['body', 'extraction_id'], type: 'missing' });
    const badUrl = await call(t.app, 'POST', '/api/v1/extractions/run/url', { body: { extraction_id: id, url: 'ftp://example.com/a.pdf' } });
    expect(badUrl.statusCode).toBe(422);
    expect(badUrl.json().detail[0].loc).toEqual(['body', 'url']);
    const badId = await call(t.app, 'POST', '/api/v1/extractions/run/document', { body: { extraction_id: '1', document_id: 1 } });
    expect(badId.json().detail[0]).toMatchObject({ loc: ['body', 'extraction_id'], type: 'int_type' });
    const noDocument = await call(t.app, 'POST', '/api/v1/extractions/run/document', { body: { extraction_id: id, document_id: 987654 } });
    expect(noDocument.statusCode).toBe(404);
    expect(noDocument.json()).toEqual({ error_code: 'RESOURCE_NOT_FOUND', message: 'Document 987654 not found' });
    const malformed = await call(t.app, 'POST', '/api/v1/extractions/run/url', { rawBody: '{"extraction_id": ' });
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json().detail[0].type).toBe('json_invalid');
    const notFoundResult = await call(t.app, 'GET', '/api/v1/extractions/results/internal/987654');
    expect(notFoundResult.json()).toEqual({ error_code: 'RESOURCE_NOT_FOUND', message: 'Extraction result 987654 not found' });
    const badResultId = await call(t.app, 'GET', '/api/v1/extractions/results/internal/abc');
    expect(badResultId.statusCode).toBe(422);
    expect(badResultId.json().detail[0].loc).toEqual(['path', 'result_id']);
  });

  it('runs on an uploaded file, one record per table row with multiple', async () => {
    const id = await created({ name: 'Players', schema: PLAYERS, multiple: true });
    const res = await upload({ extraction_id: String(id) }, { filename: 'players.docx', data: TABLES_DOCX });
    expect(res.statusCode, res.body).toBe(201);
    const receipt = res.json().data;
    expect(receipt).toMatchObject({ extraction_id: id, file_path: expect.stringMatching(/players\.docx$/) });
    const status = await waitForTask(t.app, receipt.task_identifier);
    expect(status.status, status.message).toBe('COMPLETED');
    expect(status.message).toMatch(/3 records/);
    const result = await resultOf(receipt.task_identifier);
    expect(result.data.results).toEqual([
      { name: 'Lebron James', game: 'Basketball', fame: 'Very High', blame: 'Leaving Cleveland' },
      { name: 'Ryan Braun', game: 'Baseball', fame: 'Moderate', blame: 'Steroids' },
      { name: 'Russell Wilson', game: 'Football', fame: 'High', blame: 'Tacky uniform' },
    ]);
    const read = (await call(t.app, 'GET', `/api/v1/extractions/documents/${result.data.extraction_document_id}`)).json().data;
    expect(read).toMatchObject({ source: 'file', file_name: 'players.docx', file_url: null, document_id: null });
  });

  it('refuses uploads it cannot run on, leaving no file behind', async () => {
    const id = await created({ name: 'Papers', schema: PAPER });
    const noId = await upload({}, { filename: 'a.txt', data: Buffer.from('Title: x') });
    expect(noId.statusCode).toBe(422);
    expect(noId.json().detail[0]).toMatchObject({ loc: ['body', 'extraction_id'], type: 'missing' });
    const textId = await upload({ extraction_id: 'seven' }, { filename: 'a.txt', data: Buffer.from('Title: x') });
    expect(textId.json().detail[0]).toMatchObject({ loc: ['body', 'extraction_id'], type: 'int_parsing' });
    const noFile = await upload({ extraction_id: String(id) });
    expect(noFile.json().detail[0]).toMatchObject({ loc: ['body', 'file'], type: 'missing' });
    const unknown = await upload({ extraction_id: '987654' }, { filename: 'a.txt', data: Buffer.from('Title: x') });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error_code: 'RESOURCE_NOT_FOUND', message: 'Extraction 987654 not found' });
    const empty = await upload({ extraction_id: String(id) }, { filename: 'a.txt', data: Buffer.alloc(0) });
    expect(empty.statusCode).toBe(422);
    const sheet = await upload({ extraction_id: String(id) }, { filename: 'a.xlsx', data: XLSX });
    expect(sheet.statusCode).toBe(415);
    expect(sheet.json()).toEqual({ error_code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining('not a supported document') });
    const tooBig = await upload({ extraction_id: String(id) }, { filename: 'big.txt', data: Buffer.alloc(2 * 1024 * 1024 + 10, 'a') });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json().error_code).toBe('PAYLOAD_TOO_LARGE');
    const json = await call(t.app, 'POST', '/api/v1/extractions/run/file', { body: { extraction_id: id } });
    expect(json.statusCode).toBe(415);
    const blobs = path.join(t.config.dataDir, 'blobs', 'files');
    expect(fs.existsSync(blobs) ? fs.readdirSync(blobs).filter((d) => fs.readdirSync(path.join(blobs, d)).some((f) => f.startsWith('a.') || f.startsWith('big'))) : []).toEqual([]);
  });

  // A refused upload once left its part file behind about one time in fifteen: the file was
  // created after the clean-up had run. Many in a row make that visible.
  it('leaves neither file nor folder behind over many refused uploads in a row', async () => {
    const id = await created({ name: 'Refused', schema: PAPER });
    const blobs = path.join(t.config.dataDir, 'blobs', 'files');
    const before = fs.existsSync(blobs) ? fs.readdirSync(blobs) : [];
    for (let i = 0; i < 60; i++) {
      expect((await upload({ extraction_id: String(id) }, { filename: 'r.xlsx', data: XLSX })).statusCode).toBe(415);
      expect((await upload({ extraction_id: String(id) }, { filename: 'r.txt', data: Buffer.alloc(2 * 1024 * 1024 + 10, 'r') })).statusCode).toBe(413);
    }
    expect(fs.existsSync(blobs) ? fs.readdirSync(blobs).filter((d) => !before.includes(d)) : []).toEqual([]);
  });

  it('runs on an ingested document and keeps the link to it', async () => {
    const ingest = multipartBody({ external_id: 'label-test' }, { filename: 'label-test.pdf', contentType: 'application/pdf', data: LABEL_TEST });
    const ingested = await t.app.inject({ method: 'POST', url: '/api/v1/documents/ingest', headers: { ...ingest.headers, 'x-api-key': KEYS.write }, payload: ingest.payload });
    const ingestTask = ingested.json().data.task_identifier;
    expect((await waitForTask(t.app, ingestTask)).status).toBe('COMPLETED');
    const document = (await call(t.app, 'GET', `/api/v1/documents/task/${ingestTask}`)).json().data;

    const id = await created({ name: 'Article', schema: ARTICLE });
    const res = await call(t.app, 'POST', '/api/v1/extractions/run/document', { body: { extraction_id: id, document_id: document.id } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ extraction_id: id, document_id: document.id, file_path: document.file_path });
    const taskIdentifier = res.json().data.task_identifier;
    const status = await waitForTask(t.app, taskIdentifier);
    expect(status).toMatchObject({ status: 'COMPLETED', title: `Extract "Article" from document ${document.id}` });
    const result = await resultOf(taskIdentifier);
    expect(result.data.results).toEqual([
      { doi: '10.3906/sag-0902-21', received_date: '2009-02-25', accepted_date: '2009-04-30', volume: 39, issue: 3, keywords: ['Nitric oxide', 'speed exercise', 'footballer'] },
    ]);
    const read = (await call(t.app, 'GET', `/api/v1/extractions/documents/${result.data.extraction_document_id}`)).json().data;
    expect(read).toMatchObject({ source: 'document', document_id: document.id, file_path: document.file_path });
    expect(read.pages).toHaveLength(5);

    // Another workspace cannot run on this document; a deleted document is kept as read.
    const foreignId = (await define({ name: 'Article', schema: ARTICLE }, KEYS.other)).json().data.id;
    expect((await call(t.app, 'POST', '/api/v1/extractions/run/document', { key: KEYS.other, body: { extraction_id: foreignId, document_id: document.id } })).statusCode).toBe(404);
    expect((await call(t.app, 'DELETE', `/api/v1/documents/internal/${document.id}`)).statusCode).toBe(200);
    const after = (await call(t.app, 'GET', `/api/v1/extractions/documents/${result.data.extraction_document_id}`)).json().data;
    expect(after).toMatchObject({ document_id: null });
    expect(after.pages).toHaveLength(5);
    expect((await resultOf(taskIdentifier)).data).toEqual(result.data);
  });

  it('answers 404 with the task status until a result exists, and says why a run failed', async () => {
    const id = await created({ name: 'Papers', schema: PAPER });
    const slow = await call(t.app, 'POST', '/api/v1/extractions/run/url', { body: { extraction_id: id, url: `${base}/slow` } });
    const taskIdentifier = slow.json().data.task_identifier;
    const early = await call(t.app, 'GET', `/api/v1/extractions/results/task/${taskIdentifier}`);
    expect(early.statusCode).toBe(404);
    expect(early.json()).toEqual({ error_code: 'RESOURCE_NOT_FOUND', message: expect.stringMatching(/the task is (PENDING|PROCESSING|RETRYING) \(\d+%: .+\)/) });
    const failed = await waitForTask(t.app, taskIdentifier);
    expect(failed.status).toBe('FAILED');
    const late = await call(t.app, 'GET', `/api/v1/extractions/results/task/${taskIdentifier}`);
    expect(late.statusCode).toBe(404);
    expect(late.json().message).toMatch(/the task FAILED: .*(time|fetch)/i);

    // A required field the document does not state: the run fails and says which.
    const invoice = await created({ name: 'Invoice', schema: { type: 'object', properties: { invoice_total: { type: 'number', description: 'Total amount due' } }, required: ['invoice_total'] } });
    const run = await call(t.app, 'POST', '/api/v1/extractions/run/url', { body: { extraction_id: invoice, url: `${base}/bitcoin.pdf` } });
    const status = await waitForTask(t.app, run.json().data.task_identifier);
    expect(status.status).toBe('FAILED');
    expect(status.message).toMatch(/required property "invoice_total"/);

    // A URL that is not a document.
    const sheet = await call(t.app, 'POST', '/api/v1/extractions/run/url', { body: { extraction_id: id, url: `${base}/sheet.xlsx` } });
    const sheetStatus = await waitForTask(t.app, sheet.json().data.task_identifier);
    expect(sheetStatus).toMatchObject({ status: 'FAILED', message: expect.stringContaining('not a supported document') });

    const unknownTask = await call(t.app, 'GET', `/api/v1/extractions/results/task/RunExtraction:00000000-0000-0000-0000-000000000000`);
    expect(unknownTask.statusCode).toBe(404);
    const ingestTask = multipartBody({}, { filename: 'n.txt', data: Buffer.from('Some notes.') });
    const ingested = await t.app.inject({ method: 'POST', url: '/api/v1/documents/ingest', headers: { ...ingestTask.headers, 'x-api-key': KEYS.write }, payload: ingestTask.payload });
    const notExtraction = await call(t.app, 'GET', `/api/v1/extractions/results/task/${ingested.json().data.task_identifier}`);
    expect(notExtraction.statusCode).toBe(404);
    expect(notExtraction.json().message).toMatch(/not an extraction run/);
  });

  it('fails a queued run whose extraction was deleted, and removes its upload', async () => {
    // An API without workers queues the runs; the definition is deleted; then a worker starts.
    const api = await startTestApp(engine, { role: 'api' });
    let worker: TestApp | null = null;
    try {
      const id = (await call(api.app, 'POST', '/api/v1/extractions', { body: { name: 'Papers', schema: PAPER } })).json().data.id;
      const body = multipartBody({ extraction_id: String(id) }, { filename: 'notes.txt', data: Buffer.from('Title: A note\nAuthor: Jane Roe\n') });
      const queued = await api.app.inject({ method: 'POST', url: '/api/v1/extractions/run/file', headers: { ...body.headers, 'x-api-key': KEYS.write }, payload: body.payload });
      expect(queued.statusCode).toBe(201);
      const receipt = queued.json().data;
      expect(await api.runtime.blobs.exists(receipt.file_path)).toBe(true);
      expect((await call(api.app, 'DELETE', `/api/v1/extractions/${id}`)).statusCode).toBe(200);
      worker = await startTestApp(engine, { store: api.store, role: 'worker', env: { FOLIO_DATA_DIR: api.config.dataDir } });
      const status = await waitForTask(api.app, receipt.task_identifier);
      expect(status).toMatchObject({ status: 'FAILED', message: `Extraction ${id} was deleted before the run started` });
      expect(await api.runtime.blobs.exists(receipt.file_path)).toBe(false);
      const result = await call(api.app, 'GET', `/api/v1/extractions/results/task/${receipt.task_identifier}`);
      expect(result.statusCode).toBe(404);
      expect(result.json().message).toMatch(/the task FAILED: Extraction \d+ was deleted/);
    } finally {
      await worker?.close();
      await api.close();
    }
  });

  it('documents the routes in OpenAPI', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const route of ['/api/v1/extractions', '/api/v1/extractions/{extraction_id}', '/api/v1/extractions/run/url', '/api/v1/extractions/run/file', '/api/v1/extractions/run/document', '/api/v1/extractions/results/task/{task_identifier}', '/api/v1/extractions/results/internal/{result_id}']) {
      expect(spec.paths[route], route).toBeDefined();
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe.each(ENGINES)('extractions with a language model on %s', (engine) => {
  let t: TestApp;
  let fake: FakeOpenAI;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    fake = await FakeOpenAI.start();
    t = await startTestApp(engine, {
      env: { FOLIO_URL_ALLOWLIST: '127.0.0.1', OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test', FOLIO_LLM_MODEL: 'fake-chat', FOLIO_LLM_PROMPT_TOKENS: '1500', FOLIO_LLM_MAX_ATTEMPTS: '1' },
    });
    ({ server, base } = await serve({ '/bitcoin.pdf': (res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(BITCOIN) }));
  });
  afterAll(async () => {
    await stop(server);
    await t.close();
    await fake.close();
  });

  function userText(body: FakeChatBody): string {
    return body.messages.filter((m) => m.role === 'user').map((m) => m.content)[0] ?? '';
  }

  it('asks per part with the strict schema, merges the answers and validates them', async () => {
    fake.reset().setDefault((body) => {
      const text = userText(body);
      return { content: { title: text.includes('Satoshi Nakamoto') ? 'Bitcoin: A Peer-to-Peer Electronic Cash System' : null, author: text.includes('Satoshi Nakamoto') ? 'Satoshi Nakamoto' : null, email: null, website: null } };
    });
    const id = (await call(t.app, 'POST', '/api/v1/extractions', { body: { name: 'Papers', schema: PAPER } })).json().data.id;
    const res = await call(t.app, 'POST', '/api/v1/extractions/run/url', { body: { extraction_id: id, url: `${base}/bitcoin.pdf` } });
    const status = await waitForTask(t.app, res.json().data.task_identifier);
    expect(status.status, status.message).toBe('COMPLETED');
    expect(status.message).toMatch(/language model fake-chat/);
    const chats = fake.chatRequests;
    // A 9-page paper does not fit a 1500-token prompt: several parts, each asked once.
    expect(chats.length).toBeGreaterThan(3);
    expect(userText(chats[0])).toMatch(/part 1 of \d+ \(pages? 1\b/);
    const format = chats[0].response_format!;
    expect(format.type).toBe('json_schema');
    expect(format.json_schema!.schema).toMatchObject({ type: 'object', required: ['title', 'author', 'email', 'website'], additionalProperties: false });
    const result = (await call(t.app, 'GET', `/api/v1/extractions/results/task/${res.json().data.task_identifier}`)).json().data;
    expect(result.results).toEqual([{ title: 'Bitcoin: A Peer-to-Peer Electronic Cash System', author: 'Satoshi Nakamoto' }]);
  });

  it('fails the run with a clear message when the model keeps answering out of schema', async () => {
    fake.reset().setDefault({ content: { title: 'A title', author: null, email: 'not an address', website: null } });
    const id = (await call(t.app, 'POST', '/api/v1/extractions', { body: { name: 'Papers', schema: PAPER } })).json().data.id;
    const upload = multipartBody({ extraction_id: String(id) }, { filename: 'note.txt', data: Buffer.from('A short note by Jane Roe.') });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/extractions/run/file', headers: { ...upload.headers, 'x-api-key': KEYS.write }, payload: upload.payload });
    const status = await waitForTask(t.app, res.json().data.task_identifier);
    expect(status.status).toBe('FAILED');
    expect(status.message).toMatch(/no valid answer for the document after 3 attempts: "email" = "not an address" does not fit/);
    expect(fake.chatRequests).toHaveLength(3);
    expect(fake.chatRequests[2].messages.at(-1)!.content).toMatch(/cannot be used/);
  });
});
