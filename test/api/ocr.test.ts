// OCR through the HTTP API: an image rendered here from known text is uploaded, read and
// found by search on both engines; with FOLIO_OCR=off an image fails saying so, and a mixed
// PDF completes with a message naming the pages left without text.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody, type FilePart } from '../helpers/multipart.js';
import { ENGINES } from '../helpers/stores.js';
import { waitForTask } from '../helpers/tasks.js';
import { textCanvas } from '../helpers/text-image.js';
import { CORPUS_DOCS as DOCS } from '../helpers/corpus.js';

const LINES = ['Invoice 7731 from Harbour Supplies Ltd.', 'Total due: 1,250.00 EUR by 30 June 2025.'];

async function upload(t: TestApp, file: FilePart): Promise<string> {
  const body = multipartBody({ metadata: JSON.stringify({ kind: 'scan' }) }, file);
  const res = await call(t.app, 'POST', '/api/v1/documents/ingest', { rawBody: body.payload, headers: body.headers });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.task_identifier;
}

describe.each(ENGINES)('OCR on %s', { timeout: 180_000 }, (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('ingests a PNG as a one-page document whose text is searchable', async () => {
    const png = await textCanvas(LINES).encode('png');
    const task = await upload(t, { filename: 'invoice.png', contentType: 'image/png', data: png });
    const status = await waitForTask(t.app, task, 120_000);
    expect(status).toMatchObject({ status: 'COMPLETED', message: 'Completed: 1 page stored and searchable; 1 read by OCR' });
    const doc = (await call(t.app, 'GET', `/api/v1/documents/task/${task}`)).json().data;
    expect(doc.pages).toHaveLength(1);
    expect(doc.pages[0].content.replace(/\s+/g, ' ').trim()).toBe(LINES.join(' '));
    const search = await call(t.app, 'POST', '/api/v1/documents/search/pages', { body: { query: 'Harbour Supplies invoice', alpha: 0 } });
    expect(search.json().data.results[0]).toMatchObject({ document_id: doc.id, page_number: 1 });
  });
});

describe('OCR switched off', { timeout: 180_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { FOLIO_OCR: 'off' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('fails an image with a message saying OCR is off', async () => {
    const task = await upload(t, { filename: 'invoice.png', contentType: 'image/png', data: await textCanvas(LINES).encode('png') });
    const status = await waitForTask(t.app, task);
    expect(status.status).toBe('FAILED');
    expect(status.message).toBe('Could not read invoice.png: The file is an image, whose text only OCR can read, and OCR is switched off (FOLIO_OCR=off)');
  });

  it('keeps the text pages of a mixed PDF and names the image pages left empty', async () => {
    const data = fs.readFileSync(path.join(DOCS, 'pdf/scanned/multipage.pdf'));
    const task = await upload(t, { filename: 'multipage.pdf', contentType: 'application/pdf', data });
    const status = await waitForTask(t.app, task, 120_000);
    expect(status).toMatchObject({
      status: 'COMPLETED',
      message: 'Completed: 6 pages stored and searchable; pages 1, 2, 3, 5 and 6 are images without a text layer, left empty because OCR is switched off (FOLIO_OCR=off)',
    });
    const doc = (await call(t.app, 'GET', `/api/v1/documents/task/${task}`)).json().data;
    expect(doc.pages.map((p: { content: string }) => p.content.length > 0)).toEqual([false, false, false, true, false, false]);
  });

  it('stores every page of a PDF whose fonts map glyphs to nothing, dropping the garbage', async () => {
    const task = await upload(t, { filename: 'TAMReview.pdf', contentType: 'application/pdf', data: fs.readFileSync(path.join(DOCS, 'pdf/text/TAMReview.pdf')) });
    const status = await waitForTask(t.app, task, 120_000);
    expect(status).toMatchObject({ status: 'COMPLETED', message: 'Completed: 23 pages stored and searchable' });
    const doc = (await call(t.app, 'GET', `/api/v1/documents/task/${task}`)).json().data;
    expect(doc.pages.map((p: { page_number: number }) => p.page_number)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    expect(doc.pages[0].content).toContain('Technology Acceptance Model');
    expect(doc.pages[1].content).toBe('');
  });
});
