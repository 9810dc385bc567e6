// Format detection, encodings, pagination and each format's parser on small hand-made files.
import { describe, expect, it } from 'vitest';
import { decodeText } from '../../src/sources/parsers/encoding.js';
import { detectFormat, parseDocument } from '../../src/sources/parsers/index.js';
import { markdownTitle, stripMarkdownNoise } from '../../src/sources/parsers/text.js';
import { paginate, sanitize } from '../../src/sources/parsers/text-utils.js';
import { withBreaksBefore } from '../../src/sources/parsers/docx.js';
import { W, docx, para, textPdf, zip } from '../helpers/documents.js';
import { parseFails, utf8 } from '../helpers/parsing.js';

const norm = (text: string) => text.replace(/\s+/g, ' ').trim();


describe('detectFormat', () => {
  const PDF = textPdf('BT /F1 12 Tf 72 720 Td (Hello) Tj ET');

  it('goes by the bytes, not a misleading name or content type', () => {
    expect(detectFormat(PDF, 'notes.txt', 'text/plain')).toBe('pdf');
    expect(detectFormat(PDF)).toBe('pdf');
    // A text file named .pdf is text: the bytes decide (the parser then reads it as text).
    expect(detectFormat(utf8('Just some notes.\n'), 'report.pdf', 'application/pdf')).toBe('text');
    expect(detectFormat(utf8('<!DOCTYPE html><html><body><p>Hi</p></body></html>'), 'page.txt')).toBe('html');
    expect(detectFormat(docx(para('Hi')), 'archive.zip', 'application/zip')).toBe('docx');
    expect(detectFormat(docx(para('Hi')))).toBe('docx');
  });

  it('accepts junk before the %PDF- header, as readers do', () => {
    expect(detectFormat(new Uint8Array([...utf8('garbage\n'), ...PDF]))).toBe('pdf');
  });

  it('uses the name or content type to tell markdown and HTML fragments from plain text', () => {
    const md = utf8('# Title\n\nSome *text*.\n');
    expect(detectFormat(md, 'README.md')).toBe('markdown');
    expect(detectFormat(md, null, 'text/markdown; charset=utf-8')).toBe('markdown');
    expect(detectFormat(md)).toBe('text');
    expect(detectFormat(utf8('<p>fragment</p>'), 'x.html')).toBe('html');
    expect(detectFormat(utf8('<p>fragment</p>'), null, 'text/html')).toBe('html');
    expect(detectFormat(utf8('<p>fragment</p>'))).toBe('text');
  });

  it('answers null for binary and unsupported formats', () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
    const elf = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0x3e, 0]);
    const gzip = new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0]);
    const ole2 = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Uint8Array(504)]);
    const random = new Uint8Array(4096).map((_, i) => (i * 7919 + 13) % 256);
    for (const bytes of [png, jpeg, elf, gzip, ole2, random]) {
      expect(detectFormat(bytes)).toBeNull();
      expect(detectFormat(bytes, 'file.txt', 'text/plain')).toBeNull();
    }
    expect(detectFormat(utf8('{\\rtf1\\ansi Hello}'), 'letter.rtf')).toBeNull();
    expect(detectFormat(zip({ 'ppt/presentation.xml': '<p/>' }), 'slides.docx')).toBeNull();
    expect(detectFormat(zip({ 'a.txt': 'hello' }))).toBeNull();
    expect(detectFormat(gzip, 'x.gif', 'image/gif')).toBeNull();
  });

  it('lets a ZIP or an encrypted package that claims to be a DOCX through, for the parser to explain', () => {
    expect(detectFormat(zip({ 'a.txt': 'hello' }), 'report.docx')).toBe('docx');
    const encrypted = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...Buffer.from('EncryptedPackage', 'utf16le')]);
    expect(detectFormat(encrypted, 'secret.docx')).toBe('docx');
    expect(detectFormat(encrypted, 'secret.xlsx')).toBeNull();
  });

  it('detects UTF-16 text with and without a BOM', () => {
    expect(detectFormat(new Uint8Array([0xff, 0xfe, ...Buffer.from('Hello there', 'utf16le')]))).toBe('text');
    expect(detectFormat(new Uint8Array(Buffer.from('Hello there, no BOM here', 'utf16le')))).toBe('text');
  });
});

describe('text encodings', () => {
  it('honours BOMs, recognises UTF-8, and falls back to windows-1252', () => {
    expect(decodeText(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('héllo')]))).toEqual({ text: 'héllo', encoding: 'utf-8' });
    expect(decodeText(new Uint8Array([0xff, 0xfe, ...Buffer.from('héllo', 'utf16le')])).text).toBe('héllo');
    const be = Buffer.from('héllo', 'utf16le').swap16();
    expect(decodeText(new Uint8Array([0xfe, 0xff, ...be])).text).toBe('héllo');
    expect(decodeText(new Uint8Array(Buffer.from('plain UTF-16 text', 'utf16le')))).toEqual({
      text: 'plain UTF-16 text',
      encoding: 'utf-16le',
    });
    expect(decodeText(utf8('naïve — ok'))).toEqual({ text: 'naïve — ok', encoding: 'utf-8' });
    expect(decodeText(new Uint8Array([0x93, 0x63, 0x61, 0x66, 0xe9, 0x94, 0x20, 0x80]))).toEqual({
      text: '“café” €',
      encoding: 'windows-1252',
    });
  });

  it('forgives a UTF-8 character torn at the end of the file', () => {
    const bytes = utf8('all fine until the end: €');
    expect(decodeText(bytes.subarray(0, bytes.length - 1))).toEqual({ text: 'all fine until the end: ', encoding: 'utf-8' });
  });

  it('parses text in any of these encodings; refuses binary data', async () => {
    const latin = new Uint8Array([...utf8('Caf'), 0xe9, ...utf8(' au lait\n')]);
    expect((await parseDocument(latin, 'text')).pages).toEqual(['Café au lait']);
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from('Ünïcödé\r\nline two\r\n', 'utf16le')]);
    expect((await parseDocument(utf16, 'text')).pages).toEqual(['Ünïcödé\nline two']);
    const binary = new Uint8Array(2000).map((_, i) => (i % 3 === 0 ? 0 : (i * 31) % 256));
    expect(await parseFails(binary, 'text')).toMatch(/not a text file/);
    expect(await parseFails(new Uint8Array(0), 'text')).toMatch(/empty/);
    expect(await parseFails(utf8('  \n\n \t '), 'text')).toMatch(/No text could be extracted/);
  });

  it('strips NUL, other control characters and unpaired surrogates from all output', async () => {
    expect(sanitize('a\u0000b\u0007c\uD800d\uDC00e😀\tf\ng\fh')).toBe('abcde😀\tf\ng\fh');
    const text = `${'A line of ordinary text.\n'.repeat(100)}NUL\u0000here`;
    const doc = await parseDocument(utf8(text), 'text');
    expect(doc.pages.join('')).not.toContain('\u0000');
    expect(doc.pages.join('')).toContain('NULhere');
    const html = await parseDocument(utf8('<html><body><p>bad &#xD800; char &#0; here</p></body></html>'), 'html');
    // eslint-disable-next-line no-control-regex
    expect(html.pages.join('')).not.toMatch(/\u0000|[\uD800-\uDFFF]/);
  });
});

describe('paginate', () => {
  const sentence = (i: number) => `Sentence number ${i} says something of moderate length about nothing.`;

  it('packs paragraphs into pages of at most 3000 characters, losing and repeating nothing', () => {
    const paragraphs = Array.from({ length: 120 }, (_, i) => [sentence(i), sentence(i + 1000)].join(' '));
    const text = paragraphs.join('\n\n');
    const pages = paginate(text);
    expect(pages.length).toBeGreaterThan(3);
    for (const page of pages) {
      expect(page.length).toBeLessThanOrEqual(3000);
      expect(page).toMatch(/^Sentence number \d+/); // cut at paragraph starts
    }
    expect(norm(pages.join(' '))).toBe(norm(text));
  });

  it('cuts a long paragraph between sentences', () => {
    const text = Array.from({ length: 150 }, (_, i) => sentence(i)).join(' ');
    const pages = paginate(text);
    expect(pages.length).toBeGreaterThan(2);
    for (const page of pages) {
      expect(page.length).toBeLessThanOrEqual(3000);
      expect(page).toMatch(/^Sentence number \d+ .*nothing\.$/s);
    }
    expect(norm(pages.join(' '))).toBe(norm(text));
  });

  it('cuts a sentence without ends at spaces, and a run without spaces anywhere but inside a surrogate pair', () => {
    const words = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(' ');
    const pages = paginate(words);
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(3000);
    expect(pages.join(' ')).toBe(words);

    const emoji = '😀'.repeat(4000);
    const cut = paginate(emoji);
    for (const page of cut) {
      expect(page.length).toBeLessThanOrEqual(3000);
      expect(page).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
    expect(cut.join('')).toBe(emoji);
  });

  it('ends a page at every form feed and drops empty pages', () => {
    expect(paginate('one\fthree\f\f  \ffour')).toEqual(['one', 'three', 'four']);
    expect(paginate('')).toEqual([]);
  });

  it('cuts a 700 KB novel quickly', () => {
    const novel = Array.from({ length: 5000 }, (_, i) => `${sentence(i)} ${sentence(i + 1)}\n${sentence(i + 2)}`).join('\n\n');
    const started = performance.now();
    const pages = paginate(novel);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(norm(pages.join(' '))).toBe(norm(novel));
  });
});

describe('Markdown', () => {
  it('strips link targets, images and comments; keeps code and headings', () => {
    const md = [
      '# Guide',
      'See [the docs](https://example.com/docs "Docs") and ![a chart](chart.png).',
      '<!-- a comment -->',
      'A [reference link][ref], a [Shortcut] and a literal [x] box.',
      '',
      '[ref]: https://example.com/ref',
      '[Shortcut]: https://example.com/s',
      '',
      '```',
      'code with [a](link) stays',
      '```',
    ].join('\n');
    const stripped = stripMarkdownNoise(md);
    expect(stripped).toContain('# Guide');
    expect(stripped).toContain('See the docs and a chart.');
    expect(stripped).toContain('A reference link, a Shortcut and a literal [x] box.');
    expect(stripped).toContain('code with [a](link) stays');
    expect(stripped).not.toContain('comment');
    expect(stripped).not.toContain('https://example.com');
  });

  it('finds the title in front matter, an ATX heading or a setext heading, not in code', () => {
    expect(markdownTitle('---\ntitle: "Front Title"\n---\n# Heading')).toBe('Front Title');
    expect(markdownTitle('Intro\n\n```\n# not a title\n```\n\n## Sub\n\n# The *Real* Title #\n')).toBe('The Real Title');
    expect(markdownTitle('Setext Title\n============\n\ntext')).toBe('Setext Title');
    expect(markdownTitle('no heading at all')).toBeNull();
  });

  it('parses to pages with the title', async () => {
    const doc = await parseDocument(utf8('# My [Doc](http://x)\n\nBody text.\n'), 'markdown');
    expect(doc).toEqual({ format: 'markdown', pages: ['# My Doc\n\nBody text.'], title: 'My Doc' });
  });
});

describe('HTML', () => {
  it('keeps block structure: paragraphs, line breaks, lists, tables, code', async () => {
    const html = `<!DOCTYPE html><html><head><title> A  Page </title></head><body>
      <p>First <b>bold</b> line<br>second line</p>
      <ul><li>apple</li><li>pear<ul><li>nested</li></ul></li></ul>
      <ol start="3"><li><p>three</p></li><li>four</li></ol>
      <table><tr><th>Name</th><th>Age</th></tr><tr><td>Ann</td><td><p>31</p></td></tr></table>
      <pre>  indented
    code</pre>
      <script>var x = 1;</script><style>p { color: red }</style>
    </body></html>`;
    const doc = await parseDocument(utf8(html), 'html');
    expect(doc.title).toBe('A Page');
    expect(doc.pages).toEqual([
      'First bold line\nsecond line\n\n- apple\n- pear\n  - nested\n\n3. three\n4. four\n\nName | Age\nAnn | 31\n\n  indented\n    code',
    ]);
  });

  it('falls back to the body without navigation, header, footer and asides when Readability finds little', async () => {
    const html = `<html><head><title>Short</title></head><body>
      <header>Site header</header><nav><a href="/">Home</a> <a href="/about">About</a></nav>
      <main><h1>Notice</h1><p>The office is closed on Monday.</p></main>
      <aside>Related links</aside><footer>Copyright footer</footer></body></html>`;
    const doc = await parseDocument(utf8(html), 'html');
    const text = doc.pages.join('\n');
    expect(text).toContain('The office is closed on Monday.');
    for (const chrome of ['Site header', 'Home', 'Related links', 'Copyright footer']) expect(text).not.toContain(chrome);
  });

  it('decodes by BOM, then <meta> charset, else UTF-8', async () => {
    const latin = new Uint8Array([...utf8('<html><head><meta charset="windows-1252"><title>Caf'), 0xe9, ...utf8('</title></head><body><p>cr'), 0xe8, ...utf8('me</p></body></html>')]);
    const doc = await parseDocument(latin, 'html');
    expect(doc.title).toBe('Café');
    expect(doc.pages).toEqual(['crème']);
    const httpEquiv = new Uint8Array([...utf8('<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"></head><body><p>na'), 0xef, ...utf8('ve</p></body></html>')]);
    expect((await parseDocument(httpEquiv, 'html')).pages).toEqual(['naïve']);
    const bom16 = new Uint8Array([0xff, 0xfe, ...Buffer.from('<html><body><p>UTF-16 page ✓</p></body></html>', 'utf16le')]);
    expect((await parseDocument(bom16, 'html')).pages).toEqual(['UTF-16 page ✓']);
    expect((await parseDocument(utf8('<p>plain “UTF-8”</p>'), 'html')).pages).toEqual(['plain “UTF-8”']);
  });
});

describe('DOCX', () => {
  it('turns explicit page breaks and page-break-before paragraphs into pages', async () => {
    const body =
      para('Page one text.') +
      '<w:p><w:r><w:br w:type="page"/></w:r><w:r><w:t>Page two text.</w:t></w:r></w:p>' +
      para('Page three text.', '<w:pageBreakBefore/>') +
      para('Still page three.', '<w:pageBreakBefore w:val="false"/>') +
      '<w:p><w:r><w:t>Before the break</w:t></w:r><w:r><w:br w:type="page"/></w:r><w:r><w:t>after it, same paragraph.</w:t></w:r></w:p>';
    const doc = await parseDocument(docx(body, 'Breaks &amp; Pages'), 'docx');
    expect(doc.title).toBe('Breaks & Pages');
    expect(doc.pages).toEqual([
      'Page one text.',
      'Page two text.',
      'Page three text.\n\nStill page three.\n\nBefore the break',
      'after it, same paragraph.',
    ]);
  });

  it('adds a break run only to paragraphs that ask for one', () => {
    const xml = `<w:p><w:pPr><w:pStyle w:val="X"/><w:pageBreakBefore/></w:pPr><w:r/></w:p><w:p><w:pPr><w:jc w:val="left"/></w:pPr></w:p>`;
    expect(withBreaksBefore(xml)).toBe(
      '<w:p><w:pPr><w:pStyle w:val="X"/><w:pageBreakBefore/></w:pPr><w:r><w:br w:type="page"/></w:r><w:r/></w:p><w:p><w:pPr><w:jc w:val="left"/></w:pPr></w:p>',
    );
  });

  it('cuts long sections into pages of at most 3000 characters on paragraph boundaries', async () => {
    const paragraphs = Array.from({ length: 80 }, (_, i) => `Paragraph ${i} has a sentence or two of plain filler text in it.`);
    const doc = await parseDocument(docx(paragraphs.map((p) => para(p)).join('')), 'docx');
    expect(doc.pages.length).toBeGreaterThan(1);
    for (const page of doc.pages) {
      expect(page.length).toBeLessThanOrEqual(3000);
      expect(page).toMatch(/^Paragraph \d+/);
    }
    expect(norm(doc.pages.join(' '))).toBe(norm(paragraphs.join(' ')));
  });

  it('explains broken, encrypted and legacy files', async () => {
    expect(await parseFails(zip({ 'hello.txt': 'hi' }), 'docx')).toBe(
      'The file is not a valid DOCX (zip archive without word/document.xml)',
    );
    expect(await parseFails(utf8('not a zip at all'), 'docx')).toMatch(/not a valid DOCX/);
    const truncated = docx(para('Hello'));
    expect(await parseFails(truncated.subarray(0, truncated.length - 30), 'docx')).toMatch(/not a valid DOCX/);
    const encrypted = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...Buffer.from('EncryptedPackage', 'utf16le')]);
    expect(await parseFails(encrypted, 'docx')).toMatch(/encrypted and needs a password/);
    const legacy = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]);
    expect(await parseFails(legacy, 'docx')).toMatch(/Word 97-2003/);
    expect(await parseFails(docx('<w:p><w:r><w:t>broken'), 'docx')).toMatch(/DOCX could not be read/);
  });

  it('reads stored (uncompressed) entries too', async () => {
    const files = {
      'word/document.xml': `<?xml version="1.0"?><w:document ${W}><w:body>${para('Stored entry.')}</w:body></w:document>`,
    };
    expect((await parseDocument(zip(files, true), 'docx')).pages).toEqual(['Stored entry.']);
  });
});

describe('PDF (hand-made files)', () => {
  it('adds the values typed into form fields where the fields are', async () => {
    const bytes = textPdf('BT /F1 12 Tf 72 720 Td (Name:) Tj ET', {
      annots: '[6 0 R]',
      catalog: ' /AcroForm << /Fields [6 0 R] >>',
      objects: ['<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V (Ada Lovelace) /Rect [120 714 300 732] /F 4 >>'],
    });
    const doc = await parseDocument(bytes, 'pdf');
    expect(doc.pages).toEqual(['Name: Ada Lovelace']);
  });

  it('reads rotated text after the page’s horizontal text', async () => {
    const bytes = textPdf('BT /F1 12 Tf 72 720 Td (Upright text.) Tj ET BT /F1 8 Tf 0 1 -1 0 30 300 Tm (Sideways stamp) Tj ET');
    expect((await parseDocument(bytes, 'pdf')).pages).toEqual(['Upright text.\n\nSideways stamp']);
  });

  it('fails with a ParseError on text that is not a PDF, and on an empty file', async () => {
    expect(await parseFails(utf8('Just some notes.\n'), 'pdf')).toMatch(/not a readable PDF/);
    expect(await parseFails(new Uint8Array(0), 'pdf')).toMatch(/empty/);
  });

  it('reports progress page by page', async () => {
    const progress: [number, number][] = [];
    await parseDocument(textPdf('BT /F1 12 Tf 72 720 Td (Hello) Tj ET'), 'pdf', (done, total) => progress.push([done, total]));
    expect(progress).toEqual([[1, 1]]);
  });
});
