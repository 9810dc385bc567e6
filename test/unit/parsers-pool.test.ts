// ParserPool: parsing on worker threads, from the TypeScript sources (here, under vitest) and
// from a compiled build (compiled to a temporary folder and run by plain node).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { HASHING_V1_MODEL, HASHING_V2_MODEL, hashEmbed, lexemeEmbed } from '../../src/providers/embeddings/index.js';
import { cachedEnglishLexeme, pageTsvectorBytes } from '../../src/text/english-tsvector.js';
import { ParseError, ParserPool } from '../../src/sources/parsers/index.js';
import { segmentPage } from '../../src/text/segmentation.js';
import { CORPUS_DOCS as CORPUS } from '../helpers/corpus.js';
import { docx, para } from '../helpers/documents.js';

// The pool's workers from the TypeScript sources through tsx's loader (as under tsx, which
// Playwright's setup runs folio with), not from the compiled tree that test/worker-threads.ts
// gives the other test files.
vi.unmock('../../src/worker-entry.ts');

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (rel: string) => new Uint8Array(fs.readFileSync(path.join(CORPUS, rel)));
const utf8 = (text: string) => new TextEncoder().encode(text);

describe('ParserPool', () => {
  const pool = new ParserPool({ threads: 2 });
  afterAll(() => pool.close());

  it('parses on a worker, which splits the pages into paragraphs and sentences, and reports progress from it', async () => {
    const progress: [number, number][] = [];
    const doc = await pool.parse(utf8('# Title\n\nSome text.'), 'markdown', (done, total) => progress.push([done, total]));
    expect(doc).toEqual({
      format: 'markdown',
      pages: ['# Title\n\nSome text.'],
      title: 'Title',
      paragraphs: [
        [
          { content: '# Title', sentences: ['# Title'] },
          { content: 'Some text.', sentences: ['Some text.'] },
        ],
      ],
    });
    expect(progress).toEqual([[1, 1]]);
  });

  it('parses a multi-page PDF with progress page by page; the caller’s bytes stay usable', async () => {
    const bytes = read('pdf/text/tracemonkey.pdf');
    const progress: number[] = [];
    const doc = await pool.parse(bytes, 'pdf', (done, total) => {
      expect(total).toBe(14);
      progress.push(done);
    });
    expect(doc.pages.length).toBe(14);
    // As this thread splits them.
    expect(doc.paragraphs).toEqual(doc.pages.map(segmentPage));
    expect(progress).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
    expect(bytes.length).toBeGreaterThan(0); // not detached by the transfer to the worker
    expect(Buffer.from(bytes.subarray(0, 5)).toString()).toBe('%PDF-');
  });

  it('embeds the pages on the worker with the offline embedder it is asked for, as this thread does', async () => {
    const doc = await pool.parse(read('pdf/text/tracemonkey.pdf'), 'pdf', undefined, { embed: { model: HASHING_V2_MODEL, chars: 300 } });
    expect(doc.embeddings).toHaveLength(14);
    expect(doc.embeddings!.map((v) => [...v])).toEqual(doc.pages.map((page) => [...lexemeEmbed(page.slice(0, 300))]));
    const v1 = await pool.parse(utf8('A page of text.'), 'text', undefined, { embed: { model: HASHING_V1_MODEL, chars: 8000 } });
    expect(v1.embeddings!.map((v) => [...v])).toEqual([[...hashEmbed('A page of text.')]]);
    expect((await pool.parse(utf8('A page of text.'), 'text')).embeddings).toBeUndefined();
    const unknown = await pool.parse(utf8('A page of text.'), 'text', undefined, { embed: { model: 'text-embedding-3-small', chars: 8000 } }).catch((e: unknown) => e);
    expect(unknown).not.toBeInstanceOf(ParseError);
    expect((unknown as Error).message).toMatch(/text-embedding-3-small is not an offline embedder/);
  });

  it('computes the pages’ tsvectors on the worker under the rules it is sent, as this thread does, beside their vectors', async () => {
    for (const rules of [{ keepsLoneVowelDouble: true }, { keepsLoneVowelDouble: false }]) {
      const doc = await pool.parse(read('html/lwn-1.html'), 'html', undefined, { tsvector: rules, embed: { model: HASHING_V2_MODEL, chars: 8000 } });
      const text = await pool.parse(utf8('Words added here. And the tsvector of 3.14 next: 2,000 re-read words.'), 'text', undefined, { tsvector: rules });
      for (const parsed of [doc, text]) {
        const lexemeOf = cachedEnglishLexeme(rules);
        expect(parsed.tsvectors).toEqual(parsed.pages.map((page) => pageTsvectorBytes(page, lexemeOf)));
      }
      expect(text.tsvectors![0]).not.toBeNull();
      expect(doc.embeddings).toHaveLength(doc.pages.length);
    }
    // Text the service does not cover (a URL) is left to the database.
    expect((await pool.parse(utf8('See https://example.com/a.'), 'text', undefined, { tsvector: { keepsLoneVowelDouble: true } })).tsvectors).toEqual([null]);
    expect((await pool.parse(utf8('No tsvector asked for.'), 'text')).tsvectors).toBeUndefined();
  });

  it('keeps ParseError and its message across the thread boundary', async () => {
    const err = await pool.parse(read('pdf/encrypted/password-123456.pdf'), 'pdf').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParseError);
    expect((err as Error).message).toMatch(/encrypted and needs a password/);
    const scanned = await pool.parse(read('pdf/scanned/linn.pdf'), 'pdf').catch((e: unknown) => e);
    expect(scanned).toBeInstanceOf(ParseError);
    expect((scanned as Error).message).toMatch(/OCR/);
  });

  it('passes other errors on as plain errors', async () => {
    const err = await pool.parse(utf8('x'), 'rtf' as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ParseError);
    expect((err as Error).message).toMatch(/unknown document format/);
  });

  it('runs jobs in parallel and queues the rest', async () => {
    const jobs = Array.from({ length: 6 }, (_, i) => pool.parse(utf8(`Document number ${i}.`), 'text'));
    const docs = await Promise.all(jobs);
    expect(docs.map((d) => d.pages[0])).toEqual(Array.from({ length: 6 }, (_, i) => `Document number ${i}.`));
  });

  it('stops a parse that runs too long, and goes on with a fresh worker', async () => {
    // The limit counts parsing only (not the worker's start-up): 352 pages take far longer.
    const limited = new ParserPool({ threads: 1, timeoutMs: 200 });
    try {
      const err = await limited.parse(read('pdf/text/freeculture.pdf'), 'pdf').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ParseError);
      expect((err as Error).message).toBe('Parsing was stopped after 200 ms: the file is too complex or damaged');
      expect((await limited.parse(utf8('after'), 'text')).pages).toEqual(['after']);
    } finally {
      await limited.close();
    }
  }, 60_000);

  it('fails a file that outgrows the memory limit, and goes on with a fresh worker', async () => {
    // 40 MiB of paragraphs: under the DOCX part cap, far over a 64 MiB heap once parsed.
    const heavy = docx(para('Row of a very long table.').repeat(40 * 1024 * 1024 / 80));
    const limited = new ParserPool({ threads: 1, maxMemoryMb: 64 });
    try {
      const err = await limited.parse(heavy, 'docx').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ParseError);
      expect((err as Error).message).toBe('The file needs more memory to parse than a parser thread may use (FOLIO_PARSER_MEMORY_MB)');
      expect((await limited.parse(docx(para('Still reading.')), 'docx')).pages).toEqual(['Still reading.']);
    } finally {
      await limited.close();
    }
  }, 60_000);

  it('fails queued and running jobs on close, and refuses new ones', async () => {
    const closing = new ParserPool({ threads: 1 });
    const running = closing.parse(utf8('one'), 'text').catch((e: Error) => e);
    const queued = closing.parse(utf8('two'), 'text').catch((e: Error) => e);
    await closing.close();
    expect(await running).toEqual(new Error('ParserPool is closed'));
    expect(await queued).toEqual(new Error('ParserPool is closed'));
    await expect(closing.parse(utf8('three'), 'text')).rejects.toThrow(/closed/);
  });

  it('validates its options', () => {
    expect(() => new ParserPool({ threads: 0 })).toThrow(RangeError);
    expect(new ParserPool().threads).toBeGreaterThanOrEqual(1);
    expect(new ParserPool().threads).toBeLessThanOrEqual(2);
  });
});

describe('ParserPool from a compiled build', () => {
  // Inside node_modules so that the build resolves the project's dependencies; its own
  // package.json makes the emitted files ES modules.
  const out = path.join(ROOT, 'node_modules', '.cache', `folio-parsers-build-${process.pid}`);
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  it('works from plain JavaScript with the worker entry compiled beside it', async () => {
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const sources = ['index.ts', 'worker.ts'].map((f) => path.join(ROOT, 'src/sources/parsers', f));
    await run(process.execPath, [
      tsc,
      ...['--outDir', out, '--rootDir', path.join(ROOT, 'src'), '--module', 'nodenext', '--moduleResolution', 'nodenext'],
      ...['--target', 'es2022', '--strict', '--esModuleInterop', '--skipLibCheck', '--types', 'node'],
      ...sources,
    ], { cwd: ROOT });
    fs.writeFileSync(path.join(out, 'package.json'), '{"type":"module"}');
    const entry = path.join(out, 'sources/parsers/index.js');
    expect(fs.existsSync(path.join(out, 'sources/parsers/worker.js'))).toBe(true);

    const script = `
      import { ParserPool, ParseError } from ${JSON.stringify(entry)};
      import fs from 'node:fs';
      const pool = new ParserPool({ threads: 1 });
      let progress = 0;
      const doc = await pool.parse(new Uint8Array(fs.readFileSync(${JSON.stringify(path.join(CORPUS, 'pdf/text/bitcoin.pdf'))})), 'pdf', (d) => (progress = d));
      const err = await pool.parse(new Uint8Array(fs.readFileSync(${JSON.stringify(path.join(CORPUS, 'pdf/scanned/linn.pdf'))})), 'pdf').catch((e) => e);
      await pool.close();
      console.log(JSON.stringify({ pages: doc.pages.length, first: doc.pages[0].slice(0, 46), progress, parseError: err instanceof ParseError, message: err.message }));
    `;
    // Plain node, without tsx or vitest: the pool must find worker.js on its own.
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: '/', env: { PATH: process.env.PATH } });
    const result = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(result).toMatchObject({ pages: 9, first: 'Bitcoin: A Peer-to-Peer Electronic Cash System', progress: 9, parseError: true });
    expect(result.message).toMatch(/OCR/);
  }, 180_000);
});
