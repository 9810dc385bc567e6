// Deeply nested files: HTML past its depth limit is flattened and read, a DOCX past its limit
// is refused naming its depth, Markdown and PDFs of any nesting are read, and a parser that
// runs out of stack fails with a ParseError. test/api/parse-limits.test.ts runs the same
// files through the service on both engines.
import fs from 'node:fs';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_DOCX_DEPTH } from '../../src/sources/parsers/docx.js';
import { flattenHtml, MAX_HTML_DEPTH, nestingWork } from '../../src/sources/parsers/html-depth.js';
import { htmlToText } from '../../src/sources/parsers/html-text.js';
import { parseDocument } from '../../src/sources/parsers/index.js';
import { MAX_FIELD_DEPTH } from '../../src/sources/parsers/pdf.js';
import { PARSERS } from '../../src/sources/parsers/registry.js';
import { tidy } from '../../src/sources/parsers/text-utils.js';
import { xmlDepth } from '../../src/sources/parsers/xml-depth.js';
import { CORPUS_DOCS, corpusFile } from '../helpers/corpus.js';
import { W, docx, para } from '../helpers/documents.js';
import { parseFails, utf8 } from '../helpers/parsing.js';
import {
  deepFieldsPdf,
  deepWidgetFieldsPdf,
  deepHtml,
  deepListMarkdown,
  deepOutlinePdf,
  deepQuotesMarkdown,
  nestedFormsPdf,
  nestedTablesDocx,
} from '../helpers/nesting.js';



/** How deeply the elements linkedom built from `html` nest (top-level elements at 1). */
function domDepth(html: string): number {
  const { document } = parseHTML(html);
  let deepest = 0;
  const stack = Array.from(document.children, (el) => ({ el, depth: 1 }));
  for (let top = stack.pop(); top; top = stack.pop()) {
    deepest = Math.max(deepest, top.depth);
    for (const child of Array.from(top.el.children)) stack.push({ el: child, depth: top.depth + 1 });
  }
  return deepest;
}

const textOf = (html: string) => htmlToText(parseHTML(html).document as unknown as Node);

describe('flattenHtml', () => {
  it('leaves real pages as they are, and measures the depth linkedom builds from them', () => {
    const dir = path.join(CORPUS_DOCS, 'html');
    for (const name of fs.readdirSync(dir)) {
      const html = fs.readFileSync(path.join(dir, name), 'latin1');
      const flat = flattenHtml(html);
      expect(flat.html, name).toBe(html);
      expect(flat.depth, name).toBe(domDepth(html));
    }
  });

  it('counts only what stays open: unclosed paragraphs and items, self-closed SVG shapes and void elements do not nest', () => {
    const html =
      '<body>' +
      '<p>paragraph '.repeat(2000) +
      '<ul>' +
      '<li>item '.repeat(2000) +
      '</ul><svg>' +
      '<path d="M0 0"/>'.repeat(2000) +
      '</svg>' +
      '<br><img src="x">'.repeat(2000) +
      '<table>' +
      '<tr><td>cell<td>cell'.repeat(2000) +
      '</table></body>';
    const flat = flattenHtml(html, 10);
    expect(flat.html).toBe(html);
    expect(flat.depth).toBe(domDepth(html));
    expect(flat.depth).toBeLessThanOrEqual(4);
  });

  it('leaves out the tags of elements past the limit, keeping their text, blocks a line apart', () => {
    const html = `<body>${'<div>'.repeat(10)}<p>one</p><p>two</p><span>th</span><b>ree</b>${'</div>'.repeat(10)}<p>after</p></body>`;
    const flat = flattenHtml(html, 4);
    expect(flat.depth).toBe(12);
    expect(domDepth(flat.html)).toBeLessThanOrEqual(5); // a line break may sit under the deepest element
    expect(textOf(flat.html)).toBe('one\ntwo\nthree\n\nafter');
  });

  it('leaves out scripts, styles and the like past the limit whole', () => {
    const html = '<body><div><div><div><script>var tag = "<div>";</script><style>p { color: red }</style>Visible</div></div></div></body>';
    expect(textOf(flattenHtml(html, 2).html)).toBe('Visible');
  });

  it('keeps any tag soup within the limit and every word it shows', () => {
    const tags = ['div', 'p', 'li', 'ul', 'table', 'tr', 'td', 'tbody', 'svg', 'math', 'mi', 'path', 'script', 'style', 'b', 'span', 'br', 'img', 'option', 'select', 'title', 'textarea', 'dd', 'dt', 'h1', 'hr', 'input', 'head'];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const words = (html: string) => new Set(textOf(html).match(/w\d+/g));
    for (let round = 0; round < 300; round++) {
      let html = '';
      for (let i = 0; i < 80; i++) {
        const r = random();
        const tag = tags[Math.floor(random() * tags.length)];
        html += r < 0.5 ? `<${tag}${random() < 0.2 ? ' title="a>b"' : ''}>` : r < 0.7 ? `</${tag}>` : r < 0.8 ? `<${tag}/>` : ` w${i} `;
      }
      const limit = 1 + Math.floor(random() * 6);
      const flat = flattenHtml(html, limit);
      const depth = domDepth(html);
      if (depth <= limit) expect([flat.html, flat.depth]).toEqual([html, depth]);
      expect(domDepth(flat.html)).toBeLessThanOrEqual(limit + 1);
      expect([...words(html)].filter((word) => !words(flat.html).has(word))).toEqual([]);
    }
  });
});

describe('nestingWork', () => {
  it('sums the squared depths of the elements under the root', () => {
    const { document } = parseHTML('<html><head></head><body><div><p>x</p></div></body></html>');
    expect(nestingWork(document.documentElement)).toBe(1 + 1 + 4 + 9);
  });
});

describe('HTML nested past the limit', () => {
  it('is read: the text before, inside and after 100,000 nested elements', async () => {
    const doc = await parseDocument(deepHtml(100_000), 'html');
    expect(doc.pages).toEqual(['Before the nesting.\n\nDeep text.\n\nAfter the nesting.']);
    expect(doc.title).toBe('Deep');
    expect(flattenHtml(new TextDecoder().decode(deepHtml(100_000))).depth).toBe(100_002);
    expect(MAX_HTML_DEPTH).toBe(512);
  });
});

describe('xmlDepth', () => {
  it('counts nested elements, not empty ones, closing tags, comments, CDATA or declarations', () => {
    expect(xmlDepth('<?xml version="1.0"?><a><b/><c><d>text</d></c></a>')).toBe(3);
    expect(xmlDepth('<a><!-- <b><c><d> --><![CDATA[<b><c>]]><!DOCTYPE x><?pi <b>?></a>')).toBe(1);
    expect(xmlDepth('<a x="1>2" y=\'/>\'><b z=">"></b></a>')).toBe(2);
    expect(xmlDepth('<a>'.repeat(100_000))).toBe(100_000);
    expect(xmlDepth('plain text')).toBe(0);
  });
});

describe('DOCX nested past the limit', () => {
  // document > body > (tbl > tr > tc) per table > p > r > t
  const tablesAtLimit = Math.floor((MAX_DOCX_DEPTH - 5) / 3);

  it('is refused, saying how deep it nests and what Folio reads', async () => {
    expect(await parseFails(nestedTablesDocx(100_000), 'docx')).toBe(
      'The DOCX nests its elements 300,005 levels deep in word/document.xml (tables within tables, or the like); Folio reads at most 256 levels',
    );
    expect(await parseFails(nestedTablesDocx(tablesAtLimit + 1), 'docx')).toMatch(/nests its elements 257 levels deep/);
  });

  it('is read up to the limit', async () => {
    const doc = await parseDocument(nestedTablesDocx(tablesAtLimit), 'docx');
    expect(doc.pages[0]).toMatch(/^Before the tables\.\n\nDeep text\.\n\nAfter the tables\.$/);
  });

  it('checks every XML part mammoth reads, not only the main one', async () => {
    const styles = `<?xml version="1.0"?><w:styles ${W}>${'<w:style>'.repeat(1000)}${'</w:style>'.repeat(1000)}</w:styles>`;
    const rels =
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>';
    const bytes = docx(para('Body.'), undefined, { 'word/styles.xml': styles, 'word/_rels/document.xml.rels': rels });
    expect(await parseFails(bytes, 'docx')).toMatch(/nests its elements 1,001 levels deep in word\/styles\.xml/);
  });

  it('lists nest by level number, not by structure: an item at level 100,000 is read', async () => {
    const numbering =
      `<?xml version="1.0"?><w:numbering ${W}><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>` +
      '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>';
    const rels =
      '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/></Relationships>';
    const item = (level: number, text: string) =>
      `<w:p><w:pPr><w:numPr><w:ilvl w:val="${level}"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>${text}</w:t></w:r></w:p>`;
    const bytes = docx(item(0, 'Top item') + item(100_000, 'Deep item'), undefined, { 'word/numbering.xml': numbering, 'word/_rels/document.xml.rels': rels });
    expect((await parseDocument(bytes, 'docx')).pages[0]).toMatch(/Top item[\s\S]*Deep item/);
  });
});

describe('Markdown nested deeply', () => {
  it('reads a list nested 1,000 levels', async () => {
    const doc = await parseDocument(deepListMarkdown(1000), 'markdown');
    const text = doc.pages.join('\n');
    expect(doc.title).toBe('Deep list');
    expect(text.match(/^ *- item \d+$/gm)).toHaveLength(1000);
    expect(text).toMatch(/- item 1000\n\nAfter the list\.$/);
  });

  it('reads 100,000 nested quotes and a line of 100,000 unclosed brackets', async () => {
    const text = (await parseDocument(deepQuotesMarkdown(100_000), 'markdown')).pages.join('\n');
    expect(text).toContain('> > Deep text.');
    expect(text).toContain('['.repeat(1000));
    expect(text).toMatch(/After the quotes\.$/);
  });

  it('reads a line of 100,000 unclosed comments, and still drops closed ones', async () => {
    const text = (await parseDocument(utf8(`Before <!-- hidden --> after.\n\n${'<!--'.repeat(100_000)}\n\nEnd.`), 'markdown')).pages.join('\n');
    expect(text).toMatch(/^Before {2}after\.\n+<!--<!--/);
    expect(text).toMatch(/End\.$/);
  });

  it('takes a heading’s text past a long run of blanks', async () => {
    const doc = await parseDocument(utf8(`# A ${' '.repeat(100_000)} title ##  \n\nBody.`), 'markdown');
    expect(doc.title).toBe('A title');
  });

  it('tidies lines with long runs of blanks as before', () => {
    const blanks = ' '.repeat(100_000);
    expect(tidy(`\n\nfirst${blanks}word  \t\n\n\n\n${blanks}indented${blanks}\n${blanks}`)).toBe(`first${blanks}word\n\n${blanks}indented`);
  });
});

describe('PDF nested deeply', () => {
  it('reads a page whose form XObjects nest 500 deep', async () => {
    expect((await parseDocument(nestedFormsPdf(500), 'pdf')).pages).toEqual(['Text of the page.\nDeep form text.']);
  });

  it('reads a PDF whose outline nests 10,000 deep', async () => {
    expect((await parseDocument(deepOutlinePdf(10_000), 'pdf')).pages).toEqual(['Text of the page.']);
  });

  it('reads a PDF whose form fields nest 10,000 deep without collecting them', async () => {
    expect((await parseDocument(deepFieldsPdf(10_000), 'pdf')).pages).toEqual(['Text of the page.']);
  });

  it('refuses a PDF whose form fields, shown on its page, nest past the limit, saying how deep', async () => {
    const started = Date.now();
    expect(await parseFails(deepWidgetFieldsPdf(10_000), 'pdf')).toBe(
      'The PDF nests its form fields 10,000 levels deep; Folio reads at most 256 levels',
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await parseFails(deepWidgetFieldsPdf(MAX_FIELD_DEPTH + 1), 'pdf')).toMatch(/form fields 257 levels deep/);
  });

  it('reads the value of a form field nested up to the limit', async () => {
    expect((await parseDocument(deepWidgetFieldsPdf(MAX_FIELD_DEPTH), 'pdf')).pages).toEqual(['Text of the page.\nDeep value']);
  });

  it('still reads an ordinary form’s typed values where its fields are (IRS 1040, 242 widgets, 5 levels)', async () => {
    const doc = await parseDocument(corpusFile('pdf/text/prefilled_f1040.pdf'), 'pdf');
    expect(doc.pages).toHaveLength(2);
    expect(doc.pages[1]).toContain('Use Only Firm’s name ▶\tFirm\'s EIN ▶\nFirm’s address ▶ foobar\tPhone no.');
  });
});

describe('a parser that runs out of stack', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('fails with a ParseError, which is not retried, saying the file nests too deeply', async () => {
    const recurse = (n: number): number => recurse(n + 1) + 1;
    vi.spyOn(PARSERS.text, 'load').mockResolvedValue(() => {
      recurse(0);
      throw new Error('unreachable');
    });
    expect(await parseFails(utf8('Some text.'), 'text')).toBe('The text file nests its content too deeply to read');
  });
});
