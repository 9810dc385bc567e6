// The TypeScript client (clients/typescript) against the real service listening on a port:
// uploads from a path, a File and bytes, a URL served locally, waiting for tasks with
// progress, a failing task, embedding ingest (one and a batch), versions, search, answers,
// the paging iterators, and the API's error responses as FolioErrors.
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FolioClient,
  FolioError,
  FolioTaskFailedError,
  FolioTaskTimeoutError,
  unwrap,
  type AnswerEvent,
  type TaskStatus,
} from '../../clients/typescript/src/index.js';
import { KEYS, startTestApp, vector, type TestApp } from '../helpers/app.js';
import { CORPUS_DOCS, corpusFile } from '../helpers/corpus.js';

const SCHEMA = {
  type: 'object',
  properties: { title: { type: 'string', description: 'Title of the document' } },
};

describe('TypeScript client', () => {
  let t: TestApp;
  let baseUrl: string;
  let folio: FolioClient;
  // What URL ingestion fetches.
  const site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('Harbour log. The ferry leaves at noon.'));

  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { FOLIO_URL_ALLOWLIST: '127.0.0.1' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as net.AddressInfo).port}`;
    folio = new FolioClient({ baseUrl, apiKey: KEYS.write });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    site.closeAllConnections();
    await new Promise((resolve) => site.close(resolve));
    await t?.close();
  });

  it('uploads a file by path, reports the task as it goes, then reads the document', async () => {
    const file = path.join(CORPUS_DOCS, 'pdf/text/pdflatex-4-pages.pdf');
    const receipt = await folio.upload(file, { metadata: { team: 'docs', year: 2024 }, externalId: 'latex' });
    expect(receipt).toMatchObject({ task_identifier: expect.stringMatching(/^IngestFile:/), external_id: 'latex' });

    const seen: TaskStatus[] = [];
    const final = await folio.waitForTask(receipt.task_identifier, { intervalMs: 20, onProgress: (s) => seen.push(s) });
    expect(final).toMatchObject({ status: 'COMPLETED', progress: 100 });
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toEqual(final);
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i].progress).toBeGreaterThanOrEqual(seen[i - 1].progress);
      expect(seen[i]).not.toEqual(seen[i - 1]);
    }

    const document = await folio.getDocumentByTask(receipt.task_identifier);
    expect(document).toMatchObject({ external_id: 'latex', document_metadata: { team: 'docs', year: 2024 } });
    expect(document.pages.map((p) => p.page_number)).toEqual([1, 2, 3, 4]);
    expect(await folio.getDocument(document.id)).toEqual(document);
    expect((await folio.getDocumentByExternalId('latex')).id).toBe(document.id);
  });

  it('uploads a File and finds it by keywords', async () => {
    const file = new File([corpusFile('docx/mammoth-single-paragraph.docx')], 'single.docx');
    const receipt = await folio.upload(file);
    await folio.waitForTask(receipt.task_identifier, { intervalMs: 20 });
    const document = await folio.getDocumentByTask(receipt.task_identifier);
    expect(document.pages[0].content).toContain('Walking on imported air');

    const { results } = await folio.search({ query: 'walking on imported air', alpha: 0, top_k: 1 });
    expect(results[0]).toMatchObject({ document_id: document.id, keyword_score: expect.any(Number) });
  });

  it('ingests a URL', async () => {
    const url = `http://127.0.0.1:${(site.address() as net.AddressInfo).port}/harbour.txt`;
    const receipt = await folio.ingestUrl(url, { externalId: 'harbour', metadata: { source: 'web' } });
    expect(receipt.task_identifier).toMatch(/^IngestUrl:/);
    await folio.waitForTask(receipt.task_identifier, { intervalMs: 20 });
    const document = await folio.getDocumentByExternalId('harbour');
    expect(document).toMatchObject({ file_url: url, document_metadata: { source: 'web' } });
    expect(document.pages[0].content).toContain('The ferry leaves at noon.');
  });

  it('throws FolioTaskFailedError when the task fails', async () => {
    const receipt = await folio.upload({ data: Buffer.from('Only text, though the name says PDF.'), name: 'report.pdf' });
    const failure = await folio.waitForTask(receipt.task_identifier, { intervalMs: 20 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(FolioTaskFailedError);
    expect(failure).toMatchObject({ taskId: receipt.task_identifier, task: { status: 'FAILED', message: expect.stringMatching(/not a valid PDF/) } });
  });

  it('gives up waiting past timeoutMs, and stops on an aborted signal', async () => {
    const receipt = await folio.ingestEmbedding({ content: 'Timing.', embedding: vector(50) });
    // A slow network: every poll takes 200 ms, so a 50 ms deadline passes during the first one.
    const slow = new FolioClient({
      baseUrl,
      apiKey: KEYS.write,
      fetch: async (request) => {
        await new Promise((r) => setTimeout(r, 200));
        return fetch(request);
      },
    });
    const timeout = await slow.waitForTask(receipt.task_identifier, { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(timeout).toBeInstanceOf(FolioTaskTimeoutError);
    expect(timeout).toMatchObject({ taskId: receipt.task_identifier, timeoutMs: 50, task: undefined });

    const reason = new Error('the user went away');
    await expect(folio.waitForTask(receipt.task_identifier, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('ingests embeddings synchronously, lists versions and searches by vector', async () => {
    const ids: number[] = [];
    for (const version of [1, 2, 3]) {
      const receipt = await folio.ingestEmbedding({
        content: `Release notes, version ${version}.`,
        embedding: vector(version),
        metadata: { version },
        externalId: 'release-notes',
      });
      expect(receipt).toMatchObject({ task_identifier: expect.stringMatching(/^IngestEmbedding:/), external_id: 'release-notes' });
      ids.push(receipt.document_id!);
    }
    const versions = await folio.versions('release-notes');
    expect(versions.map((d) => d.id)).toEqual(ids.slice().reverse());
    expect(versions[0].document_metadata).toEqual({ version: 3 });

    const { results } = await folio.search({ embedding: vector(2), top_k: 1 });
    expect(results[0].document_id).toBe(ids[1]);
    expect(results[0].semantic_score).toBeCloseTo(1, 5);
  });

  it('ingests a batch of embeddings, each document with its own result', async () => {
    const results = await folio.ingestEmbeddings([
      { content: 'Tide table, first week.', embedding: vector(301), metadata: { week: 1 }, externalId: 'tides' },
      { content: 'Too short a vector.', embedding: [1, 2, 3] },
      { content: 'Tide table, second week.', embedding: vector(302), externalId: 'tides' },
    ]);
    expect(results.map((r) => [r.index, r.status])).toEqual([
      [0, 201],
      [1, 422],
      [2, 201],
    ]);
    const [first, broken, second] = results;
    if (!('document' in first) || !('document' in second) || !('error' in broken)) throw new Error('unexpected results');
    expect(first.document).toMatchObject({ task_identifier: expect.stringMatching(/^IngestEmbedding:/), external_id: 'tides', document_id: expect.any(Number) });
    const error = FolioError.fromResponse(broken.status, broken.error);
    expect(error).toMatchObject({ status: 422, errorCode: 'VALIDATION_ERROR', detail: [{ loc: ['body', 'embedding'], type: 'too_short' }] });
    expect(error.message).toMatch(/^body\.embedding: /);

    expect((await folio.versions('tides')).map((d) => d.id)).toEqual([second.document.document_id, first.document.document_id]);
    expect((await folio.getDocument(first.document.document_id)).document_metadata).toEqual({ week: 1 });
    const { results: found } = await folio.search({ embedding: vector(302), top_k: 1 });
    expect(found[0].document_id).toBe(second.document.document_id);

    await expect(folio.ingestEmbeddings([])).rejects.toMatchObject({ name: 'FolioError', status: 422, detail: [{ loc: ['body', 'documents'], type: 'too_short' }] });
    const reader = new FolioClient({ baseUrl, apiKey: KEYS.read });
    await expect(reader.ingestEmbeddings([{ content: 'x', embedding: vector(303) }])).rejects.toMatchObject({ status: 403, errorCode: 'FORBIDDEN' });
  });

  it('answers a question with its sources', async () => {
    const { document_id } = await folio.ingestEmbedding({
      content: 'The lighthouse keeper records the height of the tide every morning at six.',
      embedding: vector(7),
      metadata: { topic: 'lighthouse' },
    });
    const answer = await folio.answer({ question: 'When does the lighthouse keeper record the tide?', metadata_filter: { topic: 'lighthouse' } });
    expect(answer.format).toBe('MARKDOWN');
    expect(answer.answer).toContain('every morning at six');
    expect(answer.sources[0]).toMatchObject({ document_id, relevance: expect.stringMatching(/^0\.\d{4}$/) });
  });

  it('streams an answer: sources, deltas that add up to the answer, then the same body answer() returns', async () => {
    const request = { question: 'When does the lighthouse keeper record the tide?', metadata_filter: { topic: 'lighthouse' } };
    const events: AnswerEvent[] = [];
    for await (const event of folio.answerStream(request)) events.push(event);
    expect(events[0].event).toBe('sources');
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    if (done.event !== 'done') return;
    const deltas = events.flatMap((e) => (e.event === 'delta' ? [e.data.text] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(done.data.data.answer);
    expect(done.data.data).toEqual(await folio.answer(request));

    await expect(async () => {
      for await (const event of folio.answerStream({ question: '' })) void event;
    }).rejects.toMatchObject({ status: 422, errorCode: 'VALIDATION_ERROR' });
  });

  it('pages through extractions and their results', async () => {
    const created: number[] = [];
    for (const name of ['first', 'second', 'third']) {
      created.push((await unwrap(folio.raw.POST('/api/v1/extractions', { body: { name, schema: SCHEMA } }))).data.id);
    }
    const listed: number[] = [];
    for await (const extraction of folio.extractions({ pageSize: 2 })) listed.push(extraction.id);
    expect(listed).toEqual(created.slice().reverse());

    const { document_id } = await folio.ingestEmbedding({ content: 'Annual report. Title: Tides of 2024.', embedding: vector(9) });
    const runs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const body = { extraction_id: created[0], document_id: document_id! };
      const run = await unwrap(folio.raw.POST('/api/v1/extractions/run/document', { body }));
      await folio.waitForTask(run.data.task_identifier, { intervalMs: 20 });
      runs.push(run.data.task_identifier);
    }
    const results = [];
    for await (const result of folio.extractionResults(created[0], { pageSize: 2 })) results.push(result);
    expect(results.map((r) => r.task_identifier)).toEqual(runs.slice().reverse());
    expect(results.every((r) => r.extraction_id === created[0])).toBe(true);
  });

  it('iterates the document and task listings by cursor, filters as objects, and reads one page and a page of text', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await folio.ingestEmbedding({ content: `Listed note ${i}.`, embedding: vector(40 + i), metadata: { listed: 'client', i } })).document_id!);
    }
    const listed: number[] = [];
    for await (const document of folio.documents({ metadata_filter: { listed: 'client' } }, { pageSize: 2 })) listed.push(document.id);
    expect(listed).toEqual(ids.slice().reverse());
    const oldest = await folio.listDocuments({ metadata_filter: { listed: 'client' }, order: 'asc', limit: 2, ids: ids.slice(0, 3) });
    expect(oldest.documents.map((d) => d.id)).toEqual(ids.slice(0, 2));
    const rest = await folio.listDocuments({ metadata_filter: { listed: 'client' }, order: 'asc', limit: 2, ids: ids.slice(0, 3), cursor: oldest.next_cursor! });
    expect(rest).toMatchObject({ documents: [{ id: ids[2], page_count: 1, version: 1 }], next_cursor: null });

    const tasks = [];
    for await (const task of folio.tasks({ kind: 'IngestEmbedding', created_at_filter: { $gte: '2000-01-01T00:00:00' } }, { pageSize: 3 })) tasks.push(task);
    expect(tasks.length).toBeGreaterThanOrEqual(5);
    expect(tasks.every((task) => task.kind === 'IngestEmbedding' && task.status === 'COMPLETED')).toBe(true);

    const page = await folio.getPage((await folio.getDocument(ids[0])).pages[0].id, { includeParagraphs: true });
    expect(page).toMatchObject({ document_id: ids[0], content: 'Listed note 0.', paragraphs: [{ paragraph_index: 0 }] });
    expect(await folio.currentKey()).toEqual({ workspace: 'alpha', scope: 'write' });
    await expect(folio.listDocuments({ cursor: 'forged' })).rejects.toMatchObject({ status: 422, errorCode: 'VALIDATION_ERROR' });
  });

  it('throws FolioError for error responses: 404, 422, 401 and 403', async () => {
    const missing = await folio.getDocument(987654).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(FolioError);
    expect(missing).toMatchObject({ status: 404, errorCode: 'RESOURCE_NOT_FOUND', message: expect.stringMatching(/not found/) });

    // A route that answers the bare service error, called through the raw client.
    const params = { path: { page_id: 987654 } };
    await expect(unwrap(folio.raw.GET('/api/v1/documents/content/pages/{page_id}', { params }))).rejects.toMatchObject({
      status: 404,
      errorCode: 'RESOURCE_NOT_FOUND',
    });

    const invalid = await folio.ingestEmbedding({ content: 'Too short a vector.', embedding: [1, 2, 3] }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(FolioError);
    expect(invalid).toMatchObject({ status: 422, errorCode: 'VALIDATION_ERROR', detail: [{ loc: ['body', 'embedding'], msg: expect.any(String), type: expect.any(String) }] });
    expect((invalid as FolioError).message).toMatch(/^body\.embedding: /);

    const stranger = new FolioClient({ baseUrl, apiKey: 'not-a-key' });
    await expect(stranger.search({ query: 'anything' })).rejects.toMatchObject({ name: 'FolioError', status: 401, errorCode: 'UNAUTHORIZED' });
    const reader = new FolioClient({ baseUrl, apiKey: KEYS.read });
    await expect(reader.upload({ data: 'Some text.', name: 'notes.txt' })).rejects.toMatchObject({ status: 403, errorCode: 'FORBIDDEN' });
  });
});
