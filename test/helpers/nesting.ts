// Files nested far deeper than any real document, one shape per format, each with text
// before and after (or beside) the nesting: what the parsers must read or refuse quickly.
import { FONT, docx, para, pdf, stream } from './documents.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

/** `depth` nested <div>s around "Deep text." between two paragraphs (100,000: 1.1 MB, as reported). */
export function deepHtml(depth: number): Uint8Array {
  return utf8(
    '<!DOCTYPE html><html><head><title>Deep</title></head><body><p>Before the nesting.</p>' +
      `${'<div>'.repeat(depth)}Deep text.${'</div>'.repeat(depth)}<p>After the nesting.</p></body></html>`,
  );
}

/** `depth` tables, each in the only cell of the one before, around "Deep text." */
export function nestedTablesDocx(depth: number): Uint8Array {
  const open = '<w:tbl><w:tr><w:tc>'.repeat(depth);
  const close = '</w:tc></w:tr></w:tbl>'.repeat(depth);
  return docx(para('Before the tables.') + open + para('Deep text.') + close + para('After the tables.'));
}

const PAGE_TEXT = 'BT /F1 12 Tf 72 720 Td (Text of the page.) Tj ET';
const page = (resources: string, entries = '') =>
  `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >>${resources} >>${entries} >>`;

/**
 * A page that draws "Text of the page." and form XObject 6, which draws form 7, and so on
 * `depth` forms down; the last draws "Deep form text."
 */
export function nestedFormsPdf(depth: number): Uint8Array {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    page(' /XObject << /X 6 0 R >>'),
    stream(`${PAGE_TEXT} /X Do`),
    FONT,
  ];
  for (let k = 0; k < depth; k++) {
    const last = k === depth - 1;
    const resources = last ? '/Font << /F1 5 0 R >>' : `/XObject << /X ${7 + k} 0 R >>`;
    const content = last ? 'BT /F1 12 Tf 72 700 Td (Deep form text.) Tj ET' : '/X Do';
    objects.push(stream(content, ` /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << ${resources} >>`));
  }
  return pdf(objects);
}

/** A one-page PDF whose outline (bookmarks) nests `depth` items, each the only child of the one before. */
export function deepOutlinePdf(depth: number): Uint8Array {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R /Outlines 6 0 R /PageMode /UseOutlines >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    page(''),
    stream(PAGE_TEXT),
    FONT,
    '<< /Type /Outlines /First 7 0 R /Last 7 0 R /Count 1 >>',
  ];
  for (let k = 0; k < depth; k++) {
    const child = k < depth - 1 ? ` /First ${8 + k} 0 R /Last ${8 + k} 0 R /Count 1` : '';
    objects.push(`<< /Title (Level ${k + 1}) /Parent ${6 + k} 0 R /Dest [3 0 R /Fit]${child} >>`);
  }
  return pdf(objects);
}

/** A one-page PDF whose form has one field nested `depth` deep (each field the only kid of the one before), on no page. */
export function deepFieldsPdf(depth: number): Uint8Array {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R /AcroForm 6 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    page(''),
    stream(PAGE_TEXT),
    FONT,
    '<< /Fields [7 0 R] >>',
  ];
  for (let k = 0; k < depth; k++) {
    const kids = k < depth - 1 ? ` /Kids [${8 + k} 0 R]` : ' /FT /Tx /V (Deep value)';
    objects.push(`<< /T (f${k}) /Parent ${6 + k} 0 R${kids} >>`);
  }
  return pdf(objects);
}

/**
 * A one-page PDF whose form has one field nested `depth` deep, the deepest shown on the page
 * as a widget annotation holding "Deep value" (what makes pdfjs collect every field).
 */
export function deepWidgetFieldsPdf(depth: number): Uint8Array {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R /AcroForm 6 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    page('', ` /Annots [${6 + depth} 0 R]`),
    stream(PAGE_TEXT),
    FONT,
    '<< /Fields [7 0 R] >>',
  ];
  for (let k = 0; k < depth; k++) {
    const kids =
      k < depth - 1
        ? ` /Kids [${8 + k} 0 R]`
        : ' /Type /Annot /Subtype /Widget /FT /Tx /V (Deep value) /Rect [72 690 300 708] /P 3 0 R';
    objects.push(`<< /T (f${k}) /Parent ${6 + k} 0 R${kids} >>`);
  }
  return pdf(objects);
}

/** A Markdown list nesting `levels` items, each indented two spaces more (1,400: about 1 MB). */
export function deepListMarkdown(levels: number): Uint8Array {
  const items = Array.from({ length: levels }, (_, i) => `${'  '.repeat(i)}- item ${i + 1}`);
  return utf8(['# Deep list', '', ...items, '', 'After the list.'].join('\n'));
}

/** "Deep text." inside `depth` block quotes, then a line of `depth` unclosed "[" (links nested as deep). */
export function deepQuotesMarkdown(depth: number): Uint8Array {
  return utf8(['# Deep quotes', '', `${'> '.repeat(depth)}Deep text.`, '', '['.repeat(depth), '', 'After the quotes.'].join('\n'));
}
