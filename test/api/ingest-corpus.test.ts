// Every document of the test corpus through the real ingest pipeline (upload, task,
// parse, segment, embed, store): text documents become searchable pages, unreadable ones
// end FAILED with a reason a user can act on, unsupported types are refused up front.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../helpers/multipart.js';
import { waitForTask } from '../helpers/tasks.js';
import { CORPUS_DOCS as DOCS, CORPUS_ROOT as CORPUS } from '../helpers/corpus.js';


/** Page counts of the text PDFs, from the corpus manifest's tables. */
function manifestPageCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of fs.readFileSync(path.join(CORPUS, 'MANIFEST.md'), 'utf8').split('\n')) {
    const m = /^\| `([^`]+\.pdf)` \| [\d,]+ \| (\d+) \|/.exec(line);
    if (m) counts.set(m[1], Number(m[2]));
  }
  return counts;
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

interface Outcome {
  status: string;
  message: string;
  pages: { content: string; page_number: number }[];
  metadata: Record<string, unknown>;
}

const PASSAGES: Record<string, string[]> = {
  'pdf/text/bitcoin.pdf': ['A purely peer-to-peer version of electronic cash would allow online payments'],
  // pdfjs drops this file's apostrophes ("Heres"), so the passage avoids them.
  'pdf/text/crazyones-pdfa.pdf': ['to the crazy ones. The misfits. The rebels.'],
  'pdf/text/google-doc-document.pdf': ['Beautiful is better than ugly.'],
  'pdf/text/freeculture.pdf': ['Free Culture'],
  'pdf/text/tracemonkey.pdf': ['Trace-based Just-in-Time Type Specialization for Dynamic Languages'],
  'pdf/malformed/helloworld-bad-xref.pdf': ['Hello'],
  'txt/alice-in-wonderland.txt': ['Alice was beginning to get very tired of sitting by her sister on the bank'],
  'txt/pride-and-prejudice.txt': ['It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.'],
  'markdown/the-art-of-command-line.en.md': ['Fluency on the command line is a skill often neglected or considered arcane'],
  'docx/mammoth-single-paragraph.docx': ['Walking on imported air'],
  'docx/terrier-document.docx': ['Lorem ipsum'],
  'html/terrier-document.html': ['Lorem ipsum'],
};

const OCR_CHECKED_ELSEWHERE = ['pdf/scanned/linn.pdf', 'pdf/scanned/skew.pdf', 'pdf/scanned/multipage.pdf'];

describe('the corpus through the ingest pipeline', { timeout: 600_000 }, () => {
  let t: TestApp;
  const outcomes = new Map<string, Outcome>();
  const refused = new Map<string, number>();
  const files = fs
    .readdirSync(DOCS, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(pdf|docx|html|md|txt|doc|pptx|xlsx)$/.test(f) && !f.startsWith('ground_truth') && !f.startsWith('LICENSE'))
    // TAMReview's 21 pages whose fonts map to nothing would take 80 s of OCR here and add no
    // check: an unreadable page goes to OCR as a scanned one does (checked below), and the
    // document's pages go through the pipeline in ocr.test.ts with OCR off.
    .filter((f) => f !== 'pdf/text/TAMReview.pdf')
    // These three are OCR'd page by page in ocr-corpus.test.ts (two-column CER, deskewing, a
    // mixed document): through the pipeline here they would add seven pages of OCR (25 s of CPU
    // on an idle machine) and no check. The other scanned PDFs cover the pipeline's OCR path.
    .filter((f) => !OCR_CHECKED_ELSEWHERE.includes(f))
    .sort();

  beforeAll(async () => {
    t = await startTestApp('pglite', { env: { FOLIO_WORKER_CONCURRENCY: '2' } });
    const tasks = new Map<string, string>();
    for (const file of files) {
      const body = multipartBody({ metadata: JSON.stringify({ corpus: file }) }, { filename: path.basename(file), data: fs.readFileSync(path.join(DOCS, file)) });
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/documents/ingest', headers: { ...body.headers, 'x-api-key': 'test-write-key' }, payload: body.payload });
      if (res.statusCode === 201) tasks.set(file, res.json().data.task_identifier);
      else refused.set(file, res.statusCode);
    }
    for (const [file, task] of tasks) {
      const status = await waitForTask(t.app, task, 300_000);
      let pages: Outcome['pages'] = [];
      let metadata = {};
      if (status.status === 'COMPLETED') {
        const doc = (await call(t.app, 'GET', `/api/v1/documents/task/${task}`)).json().data;
        pages = doc.pages;
        metadata = doc.document_metadata;
      }
      outcomes.set(file, { status: status.status, message: status.message, pages, metadata });
    }
  }, 900_000); // OCR of the scanned pages takes most of it
  afterAll(async () => {
    await t?.close();
  });

  it('refuses the unsupported formats up front with 415', () => {
    expect(Object.fromEntries(refused)).toEqual({
      'other/terrier-document.doc': 415,
      'other/terrier-document.pptx': 415,
      'other/terrier-document.xlsx': 415,
    });
  });

  it('stores every text PDF with one page per PDF page', () => {
    const counts = manifestPageCounts();
    for (const file of files.filter((f) => f.startsWith('pdf/text/'))) {
      const outcome = outcomes.get(file)!;
      expect(outcome.status, `${file}: ${outcome.message}`).toBe('COMPLETED');
      expect(outcome.pages.length, file).toBe(counts.get(path.basename(file)));
      expect(outcome.pages.map((p) => p.page_number)).toEqual(outcome.pages.map((_, i) => i + 1));
    }
  });

  it('keeps key passages of the documents', () => {
    for (const [file, passages] of Object.entries(PASSAGES)) {
      const outcome = outcomes.get(file)!;
      expect(outcome.status, `${file}: ${outcome.message}`).toBe('COMPLETED');
      const text = normalise(outcome.pages.map((p) => p.content).join(' '));
      for (const passage of passages) expect(text, file).toContain(normalise(passage));
    }
  });

  it('completes every DOCX, HTML, Markdown and text document in pages of at most 3000 characters', () => {
    // A document holding only a picture has no text and fails (checked below).
    const textual = files.filter((f) => /^(docx\/[^/]+|html\/.*|markdown\/.*|txt\/.*)$/.test(f) && f !== 'docx/mammoth-tiny-picture.docx');
    for (const file of textual) {
      const outcome = outcomes.get(file)!;
      expect(outcome.status, `${file}: ${outcome.message}`).toBe('COMPLETED');
      expect(outcome.pages.length, file).toBeGreaterThan(0);
      for (const page of outcome.pages) expect(page.content.length, file).toBeLessThanOrEqual(3000);
    }
  });

  it('keeps the HTML title in the metadata, next to the metadata given', () => {
    for (const name of ['wikipedia', 'v8-blog', 'ietf-1']) {
      const expected = JSON.parse(fs.readFileSync(path.join(DOCS, `ground_truth/html/${name}.expected-metadata.json`), 'utf8')).title;
      const outcome = outcomes.get(`html/${name}.html`)!;
      expect(outcome.metadata).toMatchObject({ corpus: `html/${name}.html` });
      expect(normalise(String(outcome.metadata.title))).toBe(normalise(expected));
    }
  });

  it('reads scanned PDFs by OCR (on by default)', () => {
    const expected: Record<string, string> = {
      'pdf/scanned/c02-22.pdf': 'went tip-toeing along a path amongst',
      'pdf/scanned/epson.pdf': 'Optical character recognition',
    };
    for (const [file, passage] of Object.entries(expected)) {
      const outcome = outcomes.get(file)!;
      expect(outcome.status, `${file}: ${outcome.message}`).toBe('COMPLETED');
      expect(outcome.message).toBe('Completed: 1 page stored and searchable; 1 read by OCR');
      expect(normalise(outcome.pages.map((p) => p.content).join(' ')), file).toContain(passage);
    }
    // A page whose only picture is a smiley has no text to find.
    expect(outcomes.get('pdf/scanned/imagemagick-CCITTFaxDecode.pdf')).toMatchObject({ status: 'FAILED', message: expect.stringMatching(/OCR found no text/) });
  });

  it('fails password-protected and broken files with a clear reason', () => {
    for (const file of ['pdf/encrypted/libreoffice-writer-password.pdf', 'pdf/encrypted/password-123456.pdf']) {
      expect(outcomes.get(file), file).toMatchObject({ status: 'FAILED', message: expect.stringMatching(/password/i) });
    }
    expect(outcomes.get('pdf/encrypted/bug1815476-owner-only.pdf')!.status).toBe('COMPLETED');
    for (const file of ['pdf/malformed/bug1020226-broken-objects.pdf', 'pdf/malformed/ocrmypdf-invalid-header-eof-only.pdf', 'docx/malformed/mammoth-empty-zip-not-docx.docx']) {
      const outcome = outcomes.get(file);
      // Refused up front or failed in the pipeline; never a crash or a hung task.
      if (outcome) expect(outcome, file).toMatchObject({ status: 'FAILED', message: expect.stringMatching(/\w+/) });
      else expect(refused.get(file), file).toBe(415);
    }
    expect(outcomes.get('docx/mammoth-tiny-picture.docx')).toMatchObject({ status: 'FAILED', message: expect.stringMatching(/no text/i) });
    const truncated = outcomes.get('pdf/malformed/pdfparse-invalid-truncated.pdf')!;
    expect(['COMPLETED', 'FAILED']).toContain(truncated.status);
    expect(truncated.message).not.toMatch(/unexpectedly/);
  });

  it('makes ingested pages searchable', async () => {
    const res = await call(t.app, 'POST', '/api/v1/documents/search/pages', {
      body: { query: 'truth universally acknowledged single man good fortune', alpha: 0, top_k: 3 },
    });
    expect(res.statusCode).toBe(200);
    const top = res.json().data.results[0];
    expect(top.content).toContain('truth universally acknowledged');
  });
});
