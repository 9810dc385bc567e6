// Text clean-up shared by the parsers, and the cutting of long text into pages.

import { splitSentences } from '../../text/segmentation.js';

/** The most characters of a page cut from a format without pages of its own. */
export const MAX_PAGE_CHARS = 3000;

// NUL, the C0/C1 controls other than tab, newline and form feed, and unpaired surrogates:
// PostgreSQL's text type refuses NUL and invalid UTF-16, and the controls are never content.
const UNSAFE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000E-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Drops characters a database or a reader cannot use; keeps everything else verbatim. */
export function sanitize(text: string): string {
  return text.replace(UNSAFE, '');
}

/** Unix line ends, no trailing spaces, at most one blank line in a row, trimmed. */
export function tidy(text: string): string {
  // A run of spaces is matched from its start only: tried from each of its spaces, a long
  // run that ends before text (a deeply indented line) would cost its length squared.
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/(?<![ \t])[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+/, '')
    .trimEnd();
}

/**
 * Cuts text into pages of at most `max` characters without losing or repeating any of it:
 * at blank lines (paragraphs) where possible, else at line ends, else between sentences
 * (splitSentences), else after a space, else anywhere but inside a surrogate pair. Whitespace
 * at a cut is dropped. Form feeds always end a page. Returns no pages for blank text.
 */
export function paginate(text: string, max = MAX_PAGE_CHARS): string[] {
  const pages: string[] = [];
  for (const section of text.split('\f')) {
    for (const page of pack(section, max, 0)) {
      const trimmed = page.trim();
      if (trimmed) pages.push(trimmed);
    }
  }
  return pages;
}

type Splitter = (text: string) => string[];

// Each splitter returns consecutive pieces whose concatenation is exactly its input.
const SPLITTERS: Splitter[] = [
  (text) => text.split(/(?<=\n[ \t]*\n)(?=[ \t]*\S)/), // after blank lines
  (text) => text.split(/(?<=\n)/), // after line ends
  bySentences,
  (text) => text.split(/(?<=\s)(?=\S)/), // after whitespace
];

function pack(text: string, max: number, level: number): string[] {
  if (text.trim().length <= max) return [text];
  if (level >= SPLITTERS.length) return hardCut(text, max);
  const pages: string[] = [];
  let current = '';
  for (const piece of SPLITTERS[level](text)) {
    // Untrimmed lengths may waste a few characters of a page but keep packing linear.
    if (current.length + piece.length <= max || (!current.trim() && piece.trim().length <= max)) {
      current += piece;
      continue;
    }
    if (current.trim()) pages.push(current);
    current = '';
    if (piece.trim().length <= max) current = piece;
    else {
      const parts = pack(piece, max, level + 1);
      // The last part stays open so that the next pieces can join it.
      pages.push(...parts.slice(0, -1));
      current = parts[parts.length - 1] ?? '';
    }
  }
  if (current.trim()) pages.push(current);
  return pages;
}

/** Sentences of one paragraph as consecutive pieces (whitespace goes with the sentence before). */
function bySentences(text: string): string[] {
  const pieces: string[] = [];
  let pos = 0;
  for (const sentence of splitSentences(text)) {
    const at = text.indexOf(sentence, pos);
    if (at < 0) continue; // cannot happen: sentences are substrings, in order
    const end = at + sentence.length;
    if (end > pos) pieces.push(text.slice(pos, end));
    pos = end;
  }
  if (pos < text.length) {
    if (pieces.length > 0) pieces[pieces.length - 1] += text.slice(pos);
    else pieces.push(text.slice(pos));
  }
  return pieces;
}

function hardCut(text: string, max: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + max);
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1])) end--;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
