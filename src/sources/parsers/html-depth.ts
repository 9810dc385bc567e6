// HTML nesting: the depth of the tree linkedom builds is bounded before it parses, and the
// work deep nesting would cost Readability is measured on the tree it built.
//
// htmlparser2 (linkedom's parser) keeps its open elements with unshift and indexOf, so 100,000
// nested elements cost it seconds, Readability minutes, and every recursive walk its stack.
// Browsers bound the tree instead: Chromium nests at most 512 elements and puts deeper ones
// beside the deepest. Here the tags of elements deeper than the limit are left out, so their
// text is read in the element at the limit; a block's tags become a line break, so that
// paragraphs stay apart. The nesting is followed with htmlparser2's own tokenizer and its rules
// for elements that close others, so a page within the limit is parsed exactly as before.

import { Tokenizer } from 'htmlparser2';
import { BLOCKS, SKIPPED } from './html-text.js';

/** Elements nested deeper than this lose their tags (their text is kept). */
export const MAX_HTML_DEPTH = 512;

// htmlparser2's Parser (v10), whose stack of open elements this follows: the elements an
// opening tag closes when one of them is the innermost open element, and the void elements.
const P = ['p'];
const FORM = ['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea'];
const CLOSED_BY: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries({
    tr: ['tr', 'th', 'td'],
    th: ['th'],
    td: ['thead', 'th', 'td'],
    body: ['head', 'link', 'script'],
    li: ['li'],
    option: ['option'],
    optgroup: ['optgroup', 'option'],
    dd: ['dd', 'dt'],
    dt: ['dd', 'dt'],
    rt: ['rt', 'rp'],
    rp: ['rt', 'rp'],
    tbody: ['thead', 'tbody'],
    tfoot: ['thead', 'tbody'],
    ...Object.fromEntries(['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((tag) => [tag, FORM])),
    ...Object.fromEntries(
      (
        'p h1 h2 h3 h4 h5 h6 address article aside blockquote details div dl fieldset figcaption figure footer ' +
        'form header hr main nav ol pre section table ul'
      )
        .split(' ')
        .map((tag) => [tag, P]),
    ),
  }).map(([tag, closed]) => [tag, new Set(closed)]),
);
const VOID = new Set(
  'area base basefont br col command embed frame hr img input isindex keygen link meta param source track wbr'.split(' '),
);
// Elements whose self-closing tags close them (foreign content), and those that leave it.
const FOREIGN = new Set(['math', 'svg']);
const INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title']);
// Left-out tags of these become a line break.
const BREAKS = new Set([...BLOCKS, 'li', 'dt', 'dd', 'table', 'caption', 'tr', 'td', 'th', 'pre', 'hr', 'br']);

export interface FlattenedHtml {
  html: string;
  /** The deepest nesting of elements in the input (as htmlparser2 would build it). */
  depth: number;
}

interface Cut {
  start: number;
  end: number;
  text: string;
}

/** Elements, innermost last, counted by name so that looking for an absent one costs nothing. */
class Elements {
  readonly names: string[] = [];
  readonly starts: number[] = [];
  /** Whether a self-closing tag closes the element (it is foreign content: SVG, MathML). */
  readonly foreign: boolean[] = [];
  readonly #count = new Map<string, number>();

  get size(): number {
    return this.names.length;
  }

  get innermost(): string | undefined {
    return this.names[this.names.length - 1];
  }

  has(name: string): boolean {
    return (this.#count.get(name) ?? 0) > 0;
  }

  push(name: string, start: number, foreign = false): void {
    this.names.push(name);
    this.starts.push(start);
    this.foreign.push(foreign);
    this.#count.set(name, (this.#count.get(name) ?? 0) + 1);
  }

  pop(): { name: string; start: number } {
    const name = this.names.pop()!;
    this.#count.set(name, this.#count.get(name)! - 1);
    this.foreign.pop();
    return { name, start: this.starts.pop()! };
  }
}

/**
 * `html` with the tags of elements nested deeper than `maxDepth` left out; the input itself
 * when nothing is that deep. Elements whose content is not text (scripts, styles, SVG…) are
 * left out whole at that depth.
 */
export function flattenHtml(html: string, maxDepth = MAX_HTML_DEPTH): FlattenedHtml {
  // The elements htmlparser2 will hold open: never more than maxDepth.
  const open = new Elements();
  const foreign: boolean[] = [false];
  // The elements left out, deepest last. None of their tags reaches the parser, so the open
  // elements stay as they are until a closing tag of one of them.
  const leftOut = new Elements();
  const cuts: Cut[] = [];
  let depth = 0;
  let tag: { name: string; start: number; cut: boolean } | null = null;

  const cut = (start: number, end: number, name: string) => cuts.push({ start, end, text: BREAKS.has(name) ? '<br>' : '' });
  /** Ends the innermost left-out element at `end`; one that hides its content is cut whole. */
  const endInnermost = (end: number): string => {
    const element = leftOut.pop();
    if (SKIPPED.has(element.name)) cuts.push({ start: element.start, end, text: '' });
    return element.name;
  };
  /** Ends the left-out elements down to (and with) the innermost `name`, or all. */
  const endLeftOut = (end: number, name?: string) => {
    while (leftOut.size > 0 && endInnermost(end) !== name);
  };

  const tokenizer = new Tokenizer(
    { xmlMode: false, decodeEntities: true },
    {
      onopentagname(start, end) {
        const name = html.slice(start, end).toLowerCase();
        const current = { name, start: start - 1, cut: true };
        tag = current;
        // The elements this tag closes, innermost first, as the parser closes them.
        const closes = CLOSED_BY.get(name);
        while (closes && leftOut.size > 0 && closes.has(leftOut.innermost!)) endInnermost(current.start);
        if (leftOut.size === 0) {
          let closed = 0;
          while (closes && closed < open.size && closes.has(open.names[open.size - 1 - closed])) closed++;
          if (open.size - closed < maxDepth) {
            for (let i = 0; i < closed; i++) open.pop();
            if (!VOID.has(name)) {
              open.push(name, current.start);
              if (FOREIGN.has(name)) foreign.push(true);
              else if (INTEGRATION.has(name)) foreign.push(false);
            }
            current.cut = false;
          }
        }
        if (current.cut && !VOID.has(name)) {
          const outer = leftOut.size > 0 ? leftOut.foreign[leftOut.size - 1] : foreign[foreign.length - 1];
          leftOut.push(name, current.start, FOREIGN.has(name) || (!INTEGRATION.has(name) && outer));
        }
        depth = Math.max(depth, open.size + leftOut.size + (VOID.has(name) ? 1 : 0));
      },
      onopentagend(end) {
        if (tag?.cut) cut(tag.start, end + 1, tag.name);
        tag = null;
      },
      onselfclosingtag(end) {
        if (tag?.cut) {
          cut(tag.start, end + 1, tag.name);
          if (!VOID.has(tag.name) && leftOut.foreign[leftOut.size - 1]) leftOut.pop();
        } else if (tag && foreign[foreign.length - 1] && open.innermost === tag.name) {
          open.pop();
        }
        tag = null;
      },
      onclosetag(start, end) {
        const name = html.slice(start, end).toLowerCase();
        const tagStart = start - 2;
        const close = html.indexOf('>', end);
        const tagEnd = close < 0 ? html.length : close + 1;
        if (leftOut.size > 0) {
          if (leftOut.has(name)) {
            endLeftOut(tagEnd, name);
            cut(tagStart, tagEnd, name);
            return;
          }
          // The parser sees only closing tags of open elements: it closes everything left
          // out inside that element too.
          if (VOID.has(name) || !open.has(name)) {
            cut(tagStart, tagEnd, name);
            return;
          }
          endLeftOut(tagStart);
        }
        if (!open.has(name) && (name === 'br' || name === 'p') && open.size >= maxDepth) {
          cut(tagStart, tagEnd, name); // the parser would make it an element, one too deep
          return;
        }
        if (FOREIGN.has(name) || INTEGRATION.has(name)) foreign.pop();
        if (!VOID.has(name) && open.has(name)) {
          while (open.pop().name !== name);
        }
      },
      onend() {
        endLeftOut(html.length);
      },
      onattribdata() {},
      onattribentity() {},
      onattribend() {},
      onattribname() {},
      oncdata() {},
      oncomment() {},
      ondeclaration() {},
      onprocessinginstruction() {},
      ontext() {},
      ontextentity() {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  return { html: cuts.length === 0 ? html : applyCuts(html, cuts), depth };
}

/** `html` without the cut ranges; cuts inside a larger cut vanish with it, and adjacent line breaks become one. */
function applyCuts(html: string, cuts: Cut[]): string {
  cuts.sort((a, b) => a.start - b.start || b.end - a.end);
  const parts: string[] = [];
  let cursor = 0;
  let lastBreak = false;
  for (const { start, end, text } of cuts) {
    if (end <= cursor) continue;
    if (start > cursor) {
      parts.push(html.slice(cursor, start));
      lastBreak = false;
    }
    if (text && !lastBreak) {
      parts.push(text);
      lastBreak = true;
    }
    cursor = end;
  }
  parts.push(html.slice(cursor));
  return parts.join('');
}

/**
 * What Readability would spend on the tree under `root`: it measures each element's content
 * again for each of its ancestors, so its time grows with the sum of the squared depths of the
 * elements (500 nested elements: 1.8 s). Counting stops past `limit`.
 */
export function nestingWork(root: Element, limit = Infinity): number {
  let work = 0;
  let depth = 1;
  let node: Element | null = root.firstElementChild;
  while (node && work <= limit) {
    work += depth * depth;
    if (node.firstElementChild) {
      node = node.firstElementChild;
      depth++;
      continue;
    }
    while (node && node !== root && !node.nextElementSibling) {
      node = node.parentElement;
      depth--;
    }
    node = node && node !== root ? node.nextElementSibling : null;
  }
  return work;
}
