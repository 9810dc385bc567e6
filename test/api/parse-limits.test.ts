// Uploads that would make a parser allocate without bound end FAILED with the limit they hit,
// on both engines: a DOCX part that inflates past its cap, parts that inflate past the
// package's cap together; a real DOCX beside them still reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PACKAGE_BYTES, MAX_PART_BYTES } from '../../src/sources/parsers/docx.js';
import { call, startTestApp, type TestApp } from '../helpers/app.js';
import { W, docx, para } from '../helpers/documents.js';
import { multipartBody } from '../helpers/multipart.js';
import { ENGINES } from '../helpers/stores.js';
import { waitForTask } from '../helpers/tasks.js';

/** A well-formed part of about `bytes` bytes: one element holding a long run of spaces. */
function hugePart(root: string, bytes: number): Uint8Array {
  const open = Buffer.from(`<?xml version="1.0"?><w:${root} ${W}>`);
  const close = Buffer.from(`</w:${root}>`);
  const part = Buffer.alloc(open.length + bytes + close.length, ' ');
  open.copy(part);
  close.copy(part, part.length - close.length);
  return part;
}

// Built once for both engines: deflating 200 MiB is most of what these tests cost.
const partBomb = docx('', undefined, { 'word/document.xml': hugePart('document', MAX_PART_BYTES + 1024) });
const third = Math.ceil(MAX_PACKAGE_BYTES / 3);
const packageBomb = docx(para('A short body.'), undefined, {
  'word/styles.xml': hugePart('styles', third),
  'word/numbering.xml': hugePart('numbering', third),
  'word/footnotes.xml': hugePart('footnotes', third),
});

describe.each(ENGINES)('parse limits on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function ingest(name: string, data: Uint8Array): Promise<{ status: string; message: string; task: string }> {
    const body = multipartBody({}, { filename: name, data: Buffer.from(data) });
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest', { rawBody: body.payload, headers: body.headers });
    expect(res.statusCode).toBe(201);
    const task = res.json().data.task_identifier;
    return { ...(await waitForTask(t.app, task)), task };
  }

  it('fails a DOCX whose main part inflates past the per-part cap, naming it', async () => {
    expect(partBomb.length).toBeLessThan(200_000);
    const outcome = await ingest('bomb.docx', partBomb);
    expect(outcome).toMatchObject({
      status: 'FAILED',
      message: 'Could not read bomb.docx: The DOCX is too large to read: its part word/document.xml inflates to more than 64 MiB',
    });
  });

  it('fails a DOCX whose parts together inflate past the package cap', async () => {
    const outcome = await ingest('parts.docx', packageBomb);
    expect(outcome).toMatchObject({
      status: 'FAILED',
      message: 'Could not read parts.docx: The DOCX is too large to read: its parts inflate to more than 128 MiB in all',
    });
  });

  it('still reads an ordinary DOCX', async () => {
    const outcome = await ingest('notes.docx', docx(para('The harbour master logged three arrivals.')));
    expect(outcome.status).toBe('COMPLETED');
    const doc = (await call(t.app, 'GET', `/api/v1/documents/task/${outcome.task}`)).json().data;
    expect(doc.pages[0].content).toContain('The harbour master logged three arrivals.');
  });
});
