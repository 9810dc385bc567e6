// Turns a DOM (linkedom's, from HTML or from mammoth's DOCX conversion) into plain text that
// keeps the block structure: blocks become paragraphs separated by blank lines, <br> a line
// break, list items "- item" / "1. item" lines, table rows "cell | cell" lines.

/** Elements that stand as paragraphs of their own. */
export const BLOCKS = new Set(
  (
    'address article aside blockquote body caption center details dialog div dl dd dt fieldset figcaption figure ' +
    'footer form h1 h2 h3 h4 h5 h6 header hgroup legend main menu nav ol p section summary ul'
  ).split(' '),
);
/** Elements whose content is not text to read. */
export const SKIPPED = new Set(
  (
    'script style noscript template head title svg math iframe object embed canvas video audio picture ' +
    'map select option datalist button input textarea meta link base'
  ).split(' '),
);

export interface HtmlTextOptions {
  /** Elements (and their content) to leave out. */
  skip?: (element: Element) => boolean;
  /** Elements that end a page (a DOCX page break). */
  isPageBreak?: (element: Element) => boolean;
}

// Separators a pending break turns into: none, line break, blank line, page break (form feed).
const SEPARATORS = ['', '\n', '\n\n', '\f'];

/** Accumulates text with collapsed whitespace and breaks that only take effect before more text. */
class TextBuilder {
  #out = '';
  #line = '';
  #pending = 0;
  indent = '';
  marker = '';

  /** Inline text: whitespace runs become one space, none at the start of a line. */
  text(raw: string): void {
    let text = raw.replace(/[\s\u00a0]+/g, ' ');
    if (!this.#line || this.#pending || this.#line.endsWith(' ')) text = text.trimStart();
    if (text) this.#write(text);
  }

  /** Preformatted text, kept as written (tabs and line breaks included). */
  pre(raw: string): void {
    const text = raw.replace(/\r\n?/g, '\n').replace(/^\n+/, '').trimEnd();
    if (!text) return;
    this.#write(text.replace(/\n/g, '\n' + this.indent));
  }

  /** 1 = line break, 2 = blank line, 3 = page break; the strongest pending break wins. */
  break(level: number): void {
    if (this.#line) {
      this.#out += this.#line.trimEnd();
      this.#line = '';
    }
    if (this.#out) this.#pending = Math.max(this.#pending, level);
  }

  /** <br>: ends the line; a second one in a row leaves a blank line. */
  lineBreak(): void {
    if (this.#line) this.break(1);
    else if (this.#pending === 1) this.#pending = 2;
  }

  result(): string {
    this.break(0);
    return this.#out;
  }

  #write(text: string): void {
    if (!this.#line) {
      this.#out += SEPARATORS[this.#pending];
      this.#pending = 0;
      this.#line = this.indent + this.marker;
      this.marker = '';
    }
    this.#line += text;
  }
}

const ELEMENT = 1;
const TEXT = 3;
const CDATA = 4;

/** The text of a DOM subtree, structure kept as described above. */
export function htmlToText(root: Node, options: HtmlTextOptions = {}): string {
  const builder = new TextBuilder();
  walk(root, builder, options, 2);
  return builder.result();
}

/**
 * maxBreak caps the breaks of blocks nested in list items and cells, so a <p> inside an <li>
 * does not part the item's marker from its text.
 */
function walk(node: Node, out: TextBuilder, options: HtmlTextOptions, maxBreak: number): void {
  for (let child = node.firstChild; child; child = child.nextSibling) visit(child, out, options, maxBreak);
}

function visit(node: Node, out: TextBuilder, options: HtmlTextOptions, maxBreak: number): void {
  if (node.nodeType === TEXT || node.nodeType === CDATA) {
    out.text(node.nodeValue ?? '');
    return;
  }
  if (node.nodeType !== ELEMENT) return;
  const el = node as Element;
  const tag = el.localName.toLowerCase();
  if (SKIPPED.has(tag) || el.hasAttribute('hidden') || options.skip?.(el)) return;
  if (options.isPageBreak?.(el)) {
    out.break(3);
    return;
  }
  const block = Math.min(2, maxBreak);
  switch (tag) {
    case 'br':
      out.lineBreak();
      break;
    case 'hr':
      out.break(block);
      break;
    case 'pre':
    case 'listing':
    case 'xmp':
    case 'plaintext':
      out.break(block);
      out.pre(preText(el));
      out.break(block);
      break;
    case 'ul':
    case 'ol':
    case 'menu':
      list(el, out, options, maxBreak);
      break;
    case 'li': // outside a list
      out.break(1);
      walk(el, out, options, 1);
      out.break(1);
      break;
    case 'table':
      table(el, out, options, block);
      break;
    default:
      if (BLOCKS.has(tag) || tag === 'tr' || tag === 'td' || tag === 'th') {
        const level = tag === 'dt' || tag === 'dd' ? 1 : block;
        out.break(level);
        walk(el, out, options, maxBreak);
        out.break(level);
      } else {
        walk(el, out, options, maxBreak); // inline
      }
  }
}

/** Preformatted text as written; a <br> or block inside it breaks the line too. */
function preText(node: Node): string {
  let text = '';
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === TEXT || child.nodeType === CDATA) text += child.nodeValue ?? '';
    else if (child.nodeType === ELEMENT) {
      const tag = (child as Element).localName.toLowerCase();
      if (tag === 'br') text += '\n';
      else if (SKIPPED.has(tag)) continue;
      else if (BLOCKS.has(tag)) {
        // Readability turns <br><br> runs into paragraphs, even inside <pre>.
        const inner = preText(child);
        text += (text && !text.endsWith('\n') ? '\n' : '') + inner + (inner.endsWith('\n') ? '' : '\n');
      } else text += preText(child);
    }
  }
  return text;
}

const LISTS = new Set(['ul', 'ol', 'menu']);

function list(el: Element, out: TextBuilder, options: HtmlTextOptions, maxBreak: number): void {
  const outer = out.indent;
  const level = outer !== '' || maxBreak < 2 ? 1 : 2;
  out.break(level);
  const ordered = el.localName.toLowerCase() === 'ol';
  let n = Number.parseInt(el.getAttribute('start') ?? '1', 10);
  if (!Number.isFinite(n)) n = 1;
  for (let child = el.firstChild; child; child = child.nextSibling) {
    const item = child as Element;
    if (child.nodeType !== ELEMENT || item.localName.toLowerCase() !== 'li') {
      visit(child, out, options, 1);
      continue;
    }
    if (options.skip?.(item) || item.hasAttribute('hidden')) continue;
    const value = Number.parseInt(item.getAttribute('value') ?? '', 10);
    if (ordered && Number.isFinite(value)) n = value;
    out.break(1);
    out.marker = ordered ? `${n++}. ` : '- ';
    // The item's own text at this list's indent, lists nested in it one level deeper.
    for (let part = item.firstChild; part; part = part.nextSibling) {
      const nested = part.nodeType === ELEMENT && LISTS.has((part as Element).localName.toLowerCase());
      out.indent = nested ? outer + '  ' : outer;
      visit(part, out, options, 1);
    }
    out.marker = '';
    out.indent = outer;
  }
  out.break(level);
}

function table(el: Element, out: TextBuilder, options: HtmlTextOptions, level: number): void {
  const rows: string[] = [];
  const caption = Array.from(el.children).find((c) => c.localName.toLowerCase() === 'caption');
  if (caption) {
    const text = htmlToText(caption, options).replace(/\s+/g, ' ').trim();
    if (text) rows.push(text);
  }
  for (const row of tableRows(el)) {
    const cells = Array.from(row.children)
      .filter((c) => ['td', 'th'].includes(c.localName.toLowerCase()) && !options.skip?.(c))
      .map((cell) => htmlToText(cell, options).replace(/\s+/g, ' ').trim());
    if (cells.some((c) => c)) rows.push(cells.join(' | '));
  }
  if (rows.length === 0) return;
  out.break(level);
  for (const [i, row] of rows.entries()) {
    if (i > 0) out.break(1);
    out.text(row);
  }
  out.break(level);
}

/** The rows of a table, not those of tables nested in its cells. */
function tableRows(el: Element): Element[] {
  const rows: Element[] = [];
  for (const child of Array.from(el.children)) {
    const tag = child.localName.toLowerCase();
    if (tag === 'tr') rows.push(child);
    else if (tag === 'thead' || tag === 'tbody' || tag === 'tfoot') {
      for (const row of Array.from(child.children)) if (row.localName.toLowerCase() === 'tr') rows.push(row);
    }
  }
  return rows;
}
