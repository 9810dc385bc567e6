// Uploads that would make a parser allocate without bound end FAILED with the limit they hit,
// on both engines: a DOCX part that inflates past its cap, parts that inflate past the
// package's cap together; a real DOCX beside them still reads. Files nested far deeper than
// real documents are read (HTML flattened at 512 levels, Markdown, PDFs) or refused at once
// (DOCX past 256 levels, PDF form fields past 256), in one attempt and within seconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PACKAGE_BYTES, MAX_PART_BYTES } from '../../src/sources/parsers/docx.js';
import { call, startTestApp, type TestApp } from '../helpers/app.js';
import { W, docx, para, pagesPdf } from '../helpers/documents.js';
import { multipartBody } from '../helpers/multipart.js';
import { deepFieldsPdf, deepHtml, deepListMarkdown, deepOutlinePdf, deepQuotesMarkdown, deepWidgetFieldsPdf, nestedFormsPdf, nestedTablesDocx } from '../helpers/nesting.js';
import { ENGINES } from '../helpers/stores.js';
import { waitForTask } from '../helpers/tasks.js';

// Each nested file takes 0.2-1.5 s from upload to its end on a busy 2-core machine (the first
// PDF 4 s more: loading pdfjs); the bound leaves room for a busier one, and is far below the
// minutes deep nesting used to cost.
const NESTED_BOUND_MS = 20_000;

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

  /** Ingests a deeply nested file: its outcome, after one attempt and within NESTED_BOUND_MS. */
  async function ingestOnce(name: string, data: Uint8Array): Promise<{ status: string; message: string; content: string }> {
    const started = Date.now();
    const outcome = await ingest(name, data);
    expect(Date.now() - started).toBeLessThan(NESTED_BOUND_MS);
    const row = await t.store.db.selectFrom('tasks').select('attempts').where('identifier', '=', outcome.task).executeTakeFirstOrThrow();
    expect(row.attempts).toBe(1);
    if (outcome.status !== 'COMPLETED') return { ...outcome, content: '' };
    const doc = (await call(t.app, 'GET', `/api/v1/documents/task/${outcome.task}`)).json().data;
    return { ...outcome, content: doc.pages.map((page: { content: string }) => page.content).join('\n') };
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

  // Before the nested files: its PDF loads pdfjs, which the timed nested PDFs should not pay for.
  it('still reads an ordinary page, Markdown file and PDF', async () => {
    const files = [
      ['page.html', new TextEncoder().encode('<html><body><main><p>The harbour master logged three arrivals.</p></main></body></html>')],
      ['notes.md', new TextEncoder().encode('# Log\n\n> The harbour master logged three arrivals.\n')],
      ['log.pdf', pagesPdf(['The harbour master logged three arrivals.'])],
    ] as const;
    for (const [name, bytes] of files) {
      const outcome = await ingestOnce(name, bytes);
      expect(outcome.status, name).toBe('COMPLETED');
      expect(outcome.content, name).toContain('The harbour master logged three arrivals.');
    }
  });

  it('reads HTML nested 100,000 elements deep (flattened at 512 levels) in one attempt', async () => {
    const outcome = await ingestOnce('deep.html', deepHtml(100_000));
    expect(outcome.status).toBe('COMPLETED');
    expect(outcome.content).toBe('Before the nesting.\n\nDeep text.\n\nAfter the nesting.');
  });

  it('fails a DOCX of 100,000 nested tables at once, saying how deep it nests', async () => {
    const outcome = await ingestOnce('tables.docx', nestedTablesDocx(100_000));
    expect(outcome).toMatchObject({
      status: 'FAILED',
      message:
        'Could not read tables.docx: The DOCX nests its elements 300,005 levels deep in word/document.xml (tables within tables, or the like); Folio reads at most 256 levels',
    });
  });

  it('reads a PDF whose form XObjects nest 1,000 deep', async () => {
    const outcome = await ingestOnce('forms.pdf', nestedFormsPdf(1000));
    expect(outcome).toMatchObject({ status: 'COMPLETED', content: 'Text of the page.\nDeep form text.' });
  });

  it('reads PDFs whose outline and form fields nest 10,000 deep', async () => {
    for (const [name, bytes] of [
      ['outline.pdf', deepOutlinePdf(10_000)],
      ['fields.pdf', deepFieldsPdf(10_000)],
    ] as const) {
      expect(await ingestOnce(name, bytes), name).toMatchObject({ status: 'COMPLETED', content: 'Text of the page.' });
    }
  });

  it('fails a PDF whose form fields, shown on its page, nest 10,000 deep at once, saying how deep', async () => {
    const outcome = await ingestOnce('widgets.pdf', deepWidgetFieldsPdf(10_000));
    expect(outcome).toMatchObject({
      status: 'FAILED',
      message: 'Could not read widgets.pdf: The PDF nests its form fields 10,000 levels deep; Folio reads at most 256 levels',
    });
  });

  it('reads Markdown nested 1,000 list levels and 100,000 quotes deep', async () => {
    const list = await ingestOnce('list.md', deepListMarkdown(1000));
    expect(list.status).toBe('COMPLETED');
    expect(list.content).toMatch(/- item 1000\n\nAfter the list\.$/);
    const quotes = await ingestOnce('quotes.md', deepQuotesMarkdown(100_000));
    expect(quotes.status).toBe('COMPLETED');
    expect(quotes.content).toMatch(/> Deep text\.[\s\S]*After the quotes\.$/);
  });
});
