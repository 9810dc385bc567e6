// The parsers against the test corpus (test/fixtures/corpus): every document goes through
// detectFormat and parseDocument; text is checked against the corpus's ground truth.
import fs from 'node:fs';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import { detectFormat, ParseError, parseDocument, type ParsedDocument } from '../../src/sources/parsers/index.js';
import { CORPUS_DOCS as CORPUS } from '../helpers/corpus.js';

const GT = path.join(CORPUS, 'ground_truth');

interface ManifestDoc {
  path: string;
  flags: string[];
  pdf?: { pages?: number };
}
const manifest: { documents: ManifestDoc[] } = JSON.parse(fs.readFileSync(path.join(CORPUS, 'manifest.json'), 'utf8'));

const norm = (text: string) => text.normalize('NFC').replace(/\s+/g, ' ').trim();
const read = (rel: string) => new Uint8Array(fs.readFileSync(path.join(CORPUS, rel)));
const fullText = (doc: ParsedDocument) => norm(doc.pages.join('\n\n'));
const json = (rel: string) => JSON.parse(fs.readFileSync(path.join(GT, rel), 'utf8'));

const parsed = new Map<string, Promise<ParsedDocument>>();

/**
 * Parses a corpus file the way ingestion does: detect, then parse; fails the test on a hang.
 * Once per file: several tests check the same file's result (freeculture.pdf's 352 pages took
 * tens of seconds of CPU a time).
 */
function parse(rel: string): Promise<ParsedDocument> {
  let doc = parsed.get(rel);
  if (!doc) {
    doc = (async () => {
      const bytes = read(rel);
      const format = detectFormat(bytes, path.basename(rel));
      if (!format) throw new Error(`${rel}: no format detected`);
      // Frozen, so that a test changing it would fail rather than pass on to the next one.
      const result = await parseDocument(bytes, format);
      for (const value of Object.values(result)) if (typeof value === 'object' && value !== null) Object.freeze(value);
      return Object.freeze(result);
    })();
    parsed.set(rel, doc);
  }
  return doc;
}

async function parseError(rel: string): Promise<ParseError> {
  const err = await parse(rel).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `${rel} should fail with a ParseError`).toBeInstanceOf(ParseError);
  return err as ParseError;
}

function expectContains(doc: ParsedDocument | string, passages: string[]): void {
  const text = typeof doc === 'string' ? norm(doc) : fullText(doc);
  for (const passage of passages) expect(text).toContain(norm(passage));
}

/** Text without whitespace and punctuation, for comparing the words of two renderings. */
const words = (text: string) => text.toLowerCase().match(/\p{L}+/gu) ?? [];

describe('parsers on the corpus', () => {
  describe('text PDFs', () => {
    const textPdfs = manifest.documents.filter((d) => d.path.startsWith('docs/pdf/text/'));

    it('covers the corpus', () => expect(textPdfs.length).toBe(20));

    for (const entry of textPdfs) {
      const rel = entry.path.replace(/^docs\//, '');
      it(`${path.basename(rel)}: detected as PDF, page count of the manifest, clean text`, { timeout: 120_000 }, async () => {
        expect(detectFormat(read(rel), path.basename(rel))).toBe('pdf');
        const doc = await parse(rel);
        expect(doc.format).toBe('pdf');
        expect(doc.pages.length).toBe(entry.pdf?.pages);
        for (const page of doc.pages) {
          // eslint-disable-next-line no-control-regex
          expect(page).not.toMatch(/[\u0000-\u0008\u000b\u000e-\u001f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
        }
        expect(fullText(doc).length).toBeGreaterThan(20);
      });
    }

    it('tracemonkey.pdf: per-page passages of pdf-parse’s test suite', async () => {
      const expected = json('pdf/pdf-parse-expected.json').files['pdf/text/tracemonkey.pdf'];
      const doc = await parse('pdf/text/tracemonkey.pdf');
      expect(doc.pages.length).toBe(expected.total);
      for (const page of expected.pages as { num: number; texts: string[] }[]) {
        expectContains(doc.pages[page.num - 1], page.texts);
      }
      // Two columns read left then right: a sentence that runs from one column into the next.
      expectContains(doc.pages[0], [
        'JavaScript, for example, is the de facto standard for client-side web programming',
        'and is used for the application logic of browser-based productivity applications',
      ]);
    });

    it('tracemonkey.pdf: close to pdf-parse’s full text (same words, mostly in the same order)', async () => {
      const doc = await parse('pdf/text/tracemonkey.pdf');
      const ours = words(doc.pages.join('\n'));
      const reference = words(fs.readFileSync(path.join(GT, 'pdf/tracemonkey.pdf-parse-output.txt'), 'utf8'));
      const bag = new Map<string, number>();
      for (const w of reference) bag.set(w, (bag.get(w) ?? 0) + 1);
      let shared = 0;
      for (const w of ours) {
        const n = bag.get(w) ?? 0;
        if (n > 0) {
          shared++;
          bag.set(w, n - 1);
        }
      }
      expect(shared / reference.length).toBeGreaterThan(0.95);
    });

    it('label-test.pdf: passages of pdf-parse’s test suite', async () => {
      const expected = json('pdf/pdf-parse-expected.json').files['pdf/text/label-test.pdf'];
      const doc = await parse('pdf/text/label-test.pdf');
      expect(doc.pages.length).toBe(expected.total);
      for (const page of expected.pages as { num: number; texts: string[] }[]) {
        expectContains(doc.pages[page.num - 1], page.texts);
      }
    });

    it('multicolumn.pdf: title, abstract, paragraphs across lines and columns, table rows', async () => {
      const doc = await parse('pdf/text/multicolumn.pdf');
      expectContains(doc.pages[0], [
        'Two-Column Document with Lorem Ipsum',
        'This is a sample document with two columns filled with Lorem Ipsum text.',
        // lipsum 1: wraps over three lines, with "adip-iscing" hyphenated at a line end
        'Lorem ipsum dolor sit amet, consectetuer adipiscing elit. Ut purus elit, vestibulum ut, placerat ac, adipiscing vitae, felis.',
        // lipsum 3: runs from the bottom of the left column to the top of the right one
        'Vivamus viverra fermentum felis. Donec nonummy pellentesque ante. Phasellus adipiscing semper elit.',
      ]);
      // The left column comes first, whole: its last line precedes the right column's first.
      const page = fullText({ ...doc, pages: [doc.pages[0]] });
      expect(page.indexOf('Nam dui ligula')).toBeLessThan(page.indexOf('Quisque ullamcorper placerat ipsum'));
      expect(page.indexOf('Quisque ullamcorper placerat ipsum')).toBeLessThan(page.indexOf('Fusce mauris'));
      // Paragraphs are separated by blank lines; the page number is not glued into the text.
      expect(doc.pages[0]).toMatch(/dignissim\nrutrum\.\n\nNam dui ligula/);
      expect(doc.pages[0]).not.toMatch(/nonummy\s+1\s+pellentesque/);
      const table = doc.pages[2].split('\n');
      for (const row of ['Austria 8.9 83,879 Vienna German', 'Finland 5.5 338,424 Helsinki Finnish, Swedish']) {
        expect(table.map(norm)).toContain(row);
      }
    });

    it('minimal-document.pdf: the literal body of its LaTeX source', async () => {
      const tex = fs.readFileSync(path.join(GT, 'pdf/minimal-document.tex'), 'utf8');
      const body = /\\begin\{document\}([\s\S]*)\\end\{document\}/.exec(tex)![1];
      const doc = await parse('pdf/text/minimal-document.pdf');
      // The body, then the page number as a paragraph of its own.
      expect(doc.pages[0]).toMatch(/\namet\.\n\n1$/);
      expect(fullText(doc)).toBe(`${norm(body)} 1`);
    });

    it('simple-, multi- and full-table.pdf: each table row on one line, cells in order', async () => {
      const expected = json('pdf/pdf-parse-expected.json').files;
      for (const name of ['simple-table.pdf', 'multi-table.pdf', 'full-table.pdf']) {
        const doc = await parse(`pdf/text/${name}`);
        for (const page of expected[`pdf/text/${name}`].pages as { num: number; tables: string[][][] }[]) {
          const lines = doc.pages[page.num - 1].split('\n').map(norm);
          for (const table of page.tables) {
            for (const row of table) {
              if (row.some((cell) => cell.includes('\n')) || row.every((cell) => !cell)) continue;
              expect(lines, `${name} p${page.num}`).toContain(norm(row.filter((cell) => cell).join(' ')));
            }
          }
        }
      }
    });

    it('short PDFs: distinctive passages', async () => {
      const cases: Record<string, string[]> = {
        'bitcoin.pdf': [
          'A purely peer-to-peer version of electronic cash would allow online payments to be sent directly from one party to another without going through a financial institution.',
          'We propose a solution to the double-spending problem using a peer-to-peer network.',
        ],
        'crazyones-pdfa.pdf': ['The Crazy Ones', 'The round pegs in the square holes.'],
        'google-doc-document.pdf': ['Beautiful is better than ugly.', 'Readability counts.'],
        'pdfjs_wikipedia.pdf': ['PDF.js is a JavaScript library that renders Portable Document Format (PDF) files'],
        'text-table-working.pdf': ['Influenza-Wochenbericht', 'Zusammenfassende Bewertung der epidemiologischen Lage'],
        'GeoTopo-komprimiert.pdf': ['Einführung in die Geometrie und Topologie', 'Dieses Skript wurde im Wintersemester 2013/2014 von Martin Thoma geschrieben.'],
        'jpn.pdf': ['世界人権宣言'],
        'habibi-arabic.pdf': ['habibi'],
        'pdflatex-4-pages.pdf': ['Hello, here is some text without a meaning.'],
      };
      for (const [name, passages] of Object.entries(cases)) expectContains(await parse(`pdf/text/${name}`), passages);
    }, 120_000);

    it('tracemonkey.pdf: spacing accents drawn apart are combined ("na¨ıve" -> "naïve")', async () => {
      const doc = await parse('pdf/text/tracemonkey.pdf');
      expect(fullText(doc)).toContain('naïve');
      expect(fullText(doc)).not.toContain('¨');
    });

    it('TAMReview.pdf: pages 2-22, whose fonts map glyphs to nothing, are empty rather than garbage', async () => {
      const doc = await parse('pdf/text/TAMReview.pdf');
      expect(doc.pages.length).toBe(23);
      expectContains(doc.pages[0], ['User acceptance of technology has been an important field of study for over two decades now.']);
      expect(doc.title).toBe('Overview of the Technology Acceptance Model: Origins, Developments and Future Directions');
      for (const page of doc.pages.slice(1, 22)) expect(page).toBe('');
      expectContains(doc.pages[22], ['Editors:', 'Michel Avital, University of Amsterdam']);
    });

    it('freeculture.pdf: 352 pages, the image-only cover empty, the book text in order', { timeout: 120_000 }, async () => {
      const doc = await parse('pdf/text/freeculture.pdf');
      expect(doc.pages.length).toBe(352);
      expect(doc.pages[0]).toBe('');
      expect(doc.title).toBe('Free Culture');
      expect(fullText(doc)).toContain('This PDF version of Free Culture is licensed under a Creative Commons license.');
    });

    it('terrier-document.pdf: the same words as the reference text', async () => {
      const doc = await parse('pdf/text/terrier-document.pdf');
      expect(words(doc.pages.join(' '))).toEqual(words(fs.readFileSync(path.join(CORPUS, 'txt/terrier-document.txt'), 'utf8')));
    });
  });

  describe('scanned, encrypted and malformed PDFs', () => {
    for (const name of ['c02-22.pdf', 'epson.pdf', 'imagemagick-CCITTFaxDecode.pdf', 'linn.pdf', 'skew.pdf']) {
      it(`scanned/${name}: ParseError saying OCR is needed`, async () => {
        const err = await parseError(`pdf/scanned/${name}`);
        expect(err.message).toMatch(/scanned/);
        expect(err.message).toMatch(/OCR/);
      });
    }

    it('scanned/multipage.pdf: mixed, so it parses: the one OCR’d page has text, the others are empty', async () => {
      const doc = await parse('pdf/scanned/multipage.pdf');
      expect(doc.pages.length).toBe(6);
      expect(doc.pages.filter((p) => p.length > 0).length).toBe(1);
      expect(doc.pages[3].length).toBeGreaterThan(0);
    });

    for (const name of ['libreoffice-writer-password.pdf', 'password-123456.pdf']) {
      it(`encrypted/${name}: ParseError saying a password is needed`, async () => {
        const err = await parseError(`pdf/encrypted/${name}`);
        expect(err.message).toMatch(/encrypted/);
        expect(err.message).toMatch(/password/);
      });
    }

    it('encrypted/bug1815476-owner-only.pdf: opens with the empty password', async () => {
      const doc = await parse('pdf/encrypted/bug1815476-owner-only.pdf');
      expect(doc.pages.length).toBe(1);
      expect(doc.pages[0].length).toBeGreaterThan(1000);
      expectContains(doc.pages[0], ['A N E X O', 'Nº EXPEDIENTE']);
    });

    for (const name of ['bug1020226-broken-objects.pdf', 'ocrmypdf-invalid-header-eof-only.pdf', 'pdfparse-invalid-truncated.pdf']) {
      it(`malformed/${name}: ParseError, no crash and no hang`, { timeout: 10_000 }, async () => {
        const err = await parseError(`pdf/malformed/${name}`);
        expect(err.message).toMatch(/not a readable PDF/);
      });
    }

    it('malformed/helloworld-bad-xref.pdf: recovered', { timeout: 10_000 }, async () => {
      const doc = await parse('pdf/malformed/helloworld-bad-xref.pdf');
      expect(doc.pages).toEqual(['Hello, world!']);
    });
  });

  describe('DOCX', () => {
    const mammoth = json('docx/mammoth-expected.json').files as Record<string, { visible_text?: string; body_text?: string; footnotes?: string[] }>;

    for (const [rel, expected] of Object.entries(mammoth)) {
      if (rel.includes('malformed') || rel.includes('tiny-picture')) continue;
      it(`${path.basename(rel)}: mammoth’s expected text`, async () => {
        const doc = await parse(rel);
        expect(doc.format).toBe('docx');
        const visible = expected.visible_text ?? expected.body_text ?? '';
        for (const line of visible.split('\n')) expectContains(doc, [line.replace(/\t/g, ' | ')]);
        if (expected.footnotes) expectContains(doc, expected.footnotes);
      });
    }

    it('lists and tables keep their structure', async () => {
      expect((await parse('docx/mammoth-simple-list.docx')).pages).toEqual(['- Apple\n- Banana']);
      expect((await parse('docx/mammoth-tables.docx')).pages).toEqual([
        'Above\n\nTop left | Top right\nBottom left | Bottom right\n\nBelow',
      ]);
      expect((await parse('docx/pandoc-lists.docx')).pages[0]).toContain('1. one\n2. two\n  1. a\n  2. b');
      expect((await parse('docx/pandoc-tables.docx')).pages[0].split('\n')).toEqual(
        expect.arrayContaining([
          'Name | Game | Fame | Blame',
          'Lebron James | Basketball | Very High | Leaving Cleveland',
          'Simple Multiparagraph | Table Full',
        ]),
      );
    });

    it('footnote reference marks and back-links are left out', async () => {
      expect((await parse('docx/mammoth-footnotes.docx')).pages[0]).toBe(
        'Ouch.\n\n1. A tachyon walks into a bar.\n2. Fin.',
      );
    });

    it('pandoc documents: headings (all levels, localized style names) kept as lines', async () => {
      const headers = await parse('docx/pandoc-headers.docx');
      expect(headers.title).toBe('A Test of Headers');
      for (const heading of ['Second Level', 'Third level', 'Fourth level', 'Fifth level', 'Sixth level', 'Seventh level']) {
        expect(headers.pages[0].split('\n')).toContain(heading);
      }
      expectContains(await parse('docx/pandoc-i18n_blocks.docx'), ['This is Heading 1', 'This is Quote', '- This is list item 1']);
    });

    it('terrier-document.docx: the reference words, and its page break starts page 2', async () => {
      const doc = await parse('docx/terrier-document.docx');
      expect(doc.pages.length).toBe(2);
      expect(doc.pages[1]).toMatch(/^Stet clita kasd/);
      const reference = words(fs.readFileSync(path.join(CORPUS, 'txt/terrier-document.txt'), 'utf8'));
      expect(words(doc.pages.join(' '))).toEqual(reference);
    });

    it('an image-only DOCX: ParseError, no text', async () => {
      expect((await parseError('docx/mammoth-tiny-picture.docx')).message).toMatch(/No text could be extracted/);
    });

    it('an empty zip named .docx: ParseError saying it is not a valid DOCX', async () => {
      expect((await parseError('docx/malformed/mammoth-empty-zip-not-docx.docx')).message).toBe(
        'The file is not a valid DOCX (zip archive without word/document.xml)',
      );
    });
  });

  describe('HTML', () => {
    const pages = fs.readdirSync(path.join(GT, 'html')).filter((f) => f.endsWith('.expected.html'));

    for (const file of pages) {
      const name = file.replace('.expected.html', '');
      it(`${name}.html: Readability’s title and main-content paragraphs`, async () => {
        const doc = await parse(`html/${name}.html`);
        expect(doc.format).toBe('html');
        expect(doc.title).toBe(json(`html/${name}.expected-metadata.json`).title);
        const { document } = parseHTML(fs.readFileSync(path.join(GT, 'html', file), 'utf8'));
        // Paragraphs; for the IETF draft, which is one <pre>, its longer lines.
        let paragraphs = Array.from(document.querySelectorAll('p'), (p) => norm(p.textContent ?? ''));
        if (paragraphs.length === 0) paragraphs = (document.documentElement.textContent ?? '').split('\n').map(norm);
        paragraphs = paragraphs.filter((t) => t.length >= 60 && t.length <= 600);
        expect(paragraphs.length).toBeGreaterThan(0);
        const step = Math.max(1, Math.floor(paragraphs.length / 5));
        expectContains(doc, paragraphs.filter((_, i) => i % step === 0).slice(0, 5));
        for (const page of doc.pages) expect(page.length).toBeLessThanOrEqual(3000);
      });
    }

    it('page chrome is left out', async () => {
      const wikipedia = fullText(await parse('html/wikipedia.html'));
      expect(wikipedia).not.toContain('Navigation menu');
      expect(wikipedia).not.toContain('Personal tools');
      const bbc = fullText(await parse('html/bbc-1.html'));
      expect(bbc).toContain('President Barack Obama has admitted that his failure to pass');
      expect(bbc).not.toContain('Skip to content');
    });

    it('keep-tabular-data.html: table rows as "cell | cell" lines', async () => {
      const doc = await parse('html/keep-tabular-data.html');
      expect(doc.pages.join('\n').split('\n')).toContain('Load map | | | | | | | |');
    });

    it('terrier-document.html: the title from <title>, the rest of the words in the body', async () => {
      const doc = await parse('html/terrier-document.html');
      const reference = words(fs.readFileSync(path.join(CORPUS, 'txt/terrier-document.txt'), 'utf8'));
      expect([...words(doc.title ?? ''), ...words(doc.pages.join(' '))]).toEqual(reference);
    });
  });

  describe('Markdown and plain text', () => {
    it('Markdown: title from the first heading or front matter; link syntax stripped, text kept', async () => {
      const en = await parse('markdown/the-art-of-command-line.en.md');
      expect(en.format).toBe('markdown');
      expect(en.title).toBe('The Art of Command Line');
      expectContains(en, ['Fluency on the command line is a skill often neglected or considered arcane']);
      expect(fullText(en)).not.toMatch(/\]\(https?:/);
      expect((await parse('markdown/the-art-of-command-line.ru.md')).title).toBe('Искусство командной строки');
      expect((await parse('markdown/the-art-of-command-line.ja.md')).title).toBe('The Art of Command Line');
      const manual = await parse('markdown/pandoc-MANUAL.md');
      expect(manual.title).toBe('Pandoc User’s Guide'.replace('’', "'"));
      expectContains(manual, ['Pandoc is a Haskell library for converting from one markup format to another']);
    });

    it('plain text: the whole text, verbatim, in pages of at most 3000 characters', async () => {
      for (const name of ['alice-in-wonderland.txt', 'pride-and-prejudice.txt', 'UTF-8-demo.txt', 'terrier-document.txt']) {
        const doc = await parse(`txt/${name}`);
        expect(doc.format).toBe('text');
        expect(doc.title).toBeNull();
        for (const page of doc.pages) expect(page.length).toBeLessThanOrEqual(3000);
        const source = fs.readFileSync(path.join(CORPUS, 'txt', name), 'utf8');
        // Nothing lost, nothing repeated: only whitespace differs at the cuts.
        expect(fullText(doc)).toBe(norm(source));
      }
      expectContains(await parse('txt/alice-in-wonderland.txt'), [
        'Alice was beginning to get very tired of sitting by her sister on the bank',
      ]);
      expectContains(await parse('txt/UTF-8-demo.txt'), ['∮ E⋅da = Q', 'Σὲ γνωρίζω ἀπὸ τὴν κόψη']);
    });
  });

  describe('unsupported formats', () => {
    for (const name of ['terrier-document.doc', 'terrier-document.pptx', 'terrier-document.xlsx']) {
      it(`other/${name}: detectFormat answers null`, () => {
        expect(detectFormat(read(`other/${name}`), name)).toBeNull();
        expect(detectFormat(read(`other/${name}`), 'renamed.docx')).toBeNull();
        expect(detectFormat(read(`other/${name}`))).toBeNull();
      });
    }
  });

  it('every corpus document is detected as its folder says', () => {
    const expected: Record<string, string | null> = { pdf: 'pdf', docx: 'docx', html: 'html', markdown: 'markdown', txt: 'text', other: null };
    for (const entry of manifest.documents) {
      const rel = entry.path.replace(/^docs\//, '');
      expect(detectFormat(read(rel), path.basename(rel)), rel).toBe(expected[rel.split('/')[0]]);
    }
  });
});
