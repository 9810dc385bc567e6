// Uploads whose name or declared type says a binary format (PDF, DOCX, images, Office files)
// that their bytes do not carry end FAILED saying so, on both engines, for ingestion and for
// extraction runs; correctly typed files, sniffed files and text declared as text are read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/stores.js';
import { KEYS, call, startTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody, type FilePart } from '../helpers/multipart.js';
import { waitForTask } from '../helpers/tasks.js';
import { pagesPdf } from '../helpers/documents.js';

const NOTES = Buffer.from('Meeting notes.\n\nThe lighthouse keeper reported a calm night.\n');
const JUNK = Buffer.from([0x00, 0x01, 0x02, 0x03, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x07, 0x00, 0x00, 0x00, 0x09]);

const tinyPdf = (text: string) => Buffer.from(pagesPdf([text]));

describe.each(ENGINES)('declared binary formats on %s', (engine) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function ingest(file: FilePart) {
    const body = multipartBody({}, file);
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest', { rawBody: body.payload, headers: body.headers });
    expect(res.statusCode, res.body).toBe(201);
    return { id: res.json().data.task_identifier as string, status: await waitForTask(t.app, res.json().data.task_identifier) };
  }

  it.each([
    ['a .pdf declared application/pdf holding text', { filename: 'report.pdf', contentType: 'application/pdf', data: NOTES }, 'report.pdf is not a valid PDF: it is declared as application/pdf, but its content is text'],
    ['a .txt declared application/pdf holding text', { filename: 'notes.txt', contentType: 'application/pdf', data: NOTES }, 'notes.txt is not a valid PDF: it is declared as application/pdf, but its content is text'],
    ['a .pdf holding binary junk', { filename: 'scan.pdf', data: JUNK }, 'scan.pdf is not a valid PDF: it is named .pdf, but its content is binary data'],
    ['a .docx that is no ZIP', { filename: 'letter.docx', data: NOTES }, 'letter.docx is not a valid DOCX: it is named .docx, but its content is text'],
    ['a .png that is no image', { filename: 'photo.png', data: NOTES }, 'photo.png is not a valid PNG image: it is named .png, but its content is text'],
    ['a JPEG declared image/jpeg holding HTML', { filename: 'photo.jpg', contentType: 'image/jpeg', data: Buffer.from('<html><body><p>Not found</p></body></html>') }, 'photo.jpg is not a valid JPEG image: it is declared as image/jpeg, but its content is an HTML page'],
    ['a .xlsx holding text', { filename: 'sheet.xlsx', data: NOTES }, 'sheet.xlsx is not a valid XLSX workbook: it is named .xlsx, but its content is text'],
  ])('fails %s, saying what is wrong', async (_, file, message) => {
    const { id, status } = await ingest(file);
    expect(status).toMatchObject({ status: 'FAILED', message });
    expect((await call(t.app, 'GET', `/api/v1/documents/task/${id}`)).statusCode).not.toBe(200);
  });

  it('reads a real PDF, whether declared, named .pdf or sniffed under another name', async () => {
    for (const file of [
      { filename: 'tiny.pdf', contentType: 'application/pdf', data: tinyPdf('Lighthouses guide ships at night') },
      { filename: 'tiny.bin', data: tinyPdf('Lighthouses guide ships at night') },
    ]) {
      const { id, status } = await ingest(file);
      expect(status.status, `${file.filename}: ${status.message}`).toBe('COMPLETED');
      const doc = (await call(t.app, 'GET', `/api/v1/documents/task/${id}`)).json().data;
      expect(doc.pages[0].content).toContain('Lighthouses guide ships at night');
    }
  });

  it('reads text declared as text, and sniffs undeclared files as before', async () => {
    for (const file of [
      { filename: 'notes.txt', contentType: 'text/plain', data: NOTES },
      { filename: 'notes.md', contentType: 'text/markdown', data: NOTES },
      { filename: 'page.html', contentType: 'text/html', data: Buffer.from('<p>The lighthouse keeper reported a calm night.</p>') },
      { filename: 'notes.unknown', data: NOTES },
    ]) {
      const { status } = await ingest(file);
      expect(status.status, `${file.filename}: ${status.message}`).toBe('COMPLETED');
    }
  });

  it('still refuses undeclared binary junk up front with 415', async () => {
    const body = multipartBody({}, { filename: 'x.dat', data: JUNK });
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest', { rawBody: body.payload, headers: body.headers });
    expect(res.statusCode).toBe(415);
  });

  it('fails an extraction run on a fake PDF the way other unreadable uploads fail', async () => {
    const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };
    const id = (await call(t.app, 'POST', '/api/v1/extractions', { body: { name: 'Papers', schema } })).json().data.id as number;
    const body = multipartBody({ extraction_id: String(id) }, { filename: 'paper.pdf', contentType: 'application/pdf', data: Buffer.from('Title: Lighthouses\n') });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/extractions/run/file', headers: { ...body.headers, 'x-api-key': KEYS.write }, payload: body.payload });
    expect(res.statusCode, res.body).toBe(201);
    const task = res.json().data.task_identifier as string;
    const message = 'paper.pdf is not a valid PDF: it is declared as application/pdf, but its content is text';
    expect(await waitForTask(t.app, task)).toMatchObject({ status: 'FAILED', message });
    const result = await call(t.app, 'GET', `/api/v1/extractions/results/task/${task}`);
    expect(result.statusCode).toBe(404);
    expect(result.json().message).toContain(`the task FAILED: ${message}`);
  });
});
