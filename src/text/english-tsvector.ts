// A page's tsvector as `to_tsvector('english', content)` makes it, computed here for text
// that PostgreSQL's default parser reads as plain words and numbers; null for any other text,
// which the engine then reads itself. The parser is about half of the embedded engine's work
// per ingested page, and this scan takes a small part of that.
//
// The text covered: ASCII letters and digits, whitespace, the separators below, dots and
// hyphens. Each maximal run of letters and digits is one token: letters alone an `asciiword`
// (the english stemmer's lexeme, or none for a stop word), digits alone a `uint`, both a
// `numword` (the run lower-cased), digits, a dot and digits a `float` (as written). Words of
// letters joined by single hyphens are an `asciihword` (its lexeme, then each part's). A dot
// before a letter, digit or `_` starts a host, file or version, two dots after a word a path,
// a hyphen before a digit a signed number, digits and an e a number in scientific notation;
// `/`, `@`, `&`, `<`, `+` and non-ASCII letters start other token types: such text is not
// covered. Every token takes the next position, stop words included. The rules were found by
// comparing with ts_debug and to_tsvector; page-tsvector.test.ts holds them to both engines.
import { englishLexeme, type EnglishRules } from './english-lexeme.js';

/** Characters the parser reads as blanks wherever they stand (besides the dot, handled apart). */
const SEPARATORS = new Set([...' \t\n\r\f\v,;:!?()[]{}"\'%$#*=_‘’“”•–—…']);

/** Longest token covered: the stemmer is checked on words up to this length. */
const MAX_TOKEN = 100;
/** PostgreSQL keeps positions up to 16,383 and 256 of them per lexeme; beyond, the engine reads the text. */
const MAX_POSITION = 16_383;
const MAX_POSITIONS_PER_LEXEME = 255;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isAlnum = (c: number) => isDigit(c) || isLetter(c);

const SCIENTIFIC = /^[0-9]+[eE][0-9]/;

/**
 * Whether the dot at `i` starts a host, file or version token: before a letter, digit or `_`, or
 * as exactly two dots right after one (`..`, a relative path).
 */
function isPathDot(text: string, i: number): boolean {
  const next = text.charCodeAt(i + 1);
  if (isAlnum(next) || next === 95) return true;
  return next === 46 && isAlnum(text.charCodeAt(i - 1)) && text.charCodeAt(i + 2) !== 46;
}

/** The end of the run of letters and digits at `start`, and what it holds. */
function alnumRun(text: string, start: number): { end: number; letters: boolean; digits: boolean } {
  let letters = false;
  let digits = false;
  let end = start;
  for (; end < text.length && isAlnum(text.charCodeAt(end)); end++) {
    if (isDigit(text.charCodeAt(end))) digits = true;
    else letters = true;
  }
  return { end, letters, digits };
}

/** Whether a hyphen at `i` joins the word before it to a word after it. */
const joinsWord = (text: string, i: number) => text.charCodeAt(i) === 45 && isLetter(text.charCodeAt(i + 1));

/**
 * Words of letters joined by single hyphens (`state-of-the-art`), from the word at `start`
 * ending at `first`, the first hyphen: their end and parts. Null when a part holds digits
 * or the compound is too long: other token types.
 */
function hyphenated(text: string, start: number, first: number): { end: number; parts: string[] } | null {
  const parts = [text.slice(start, first)];
  let end = first;
  while (joinsWord(text, end)) {
    const run = alnumRun(text, end + 1);
    if (run.digits) return null;
    parts.push(text.slice(end + 1, run.end));
    end = run.end;
  }
  // Each part is shorter than the whole.
  return end - start > MAX_TOKEN ? null : { end, parts };
}

/**
 * Whether the hyphen at `i`, outside a compound, is a blank: before anything but a letter or
 * digit, or the second of two before a letter (`said--and`). Before a digit it signs a number.
 */
function isDashHyphen(text: string, i: number): boolean {
  const next = text.charCodeAt(i + 1);
  return !isAlnum(next) || (text.charCodeAt(i - 1) === 45 && isLetter(next));
}

/** A word's lexeme (null for a stop word), as the engine's stemmer makes it. */
export type WordLexeme = (word: string) => string | null;

/** `englishLexeme` under the engine's rules, remembering the words it has seen (a page repeats most). */
export function cachedEnglishLexeme(rules: EnglishRules, capacity = 100_000): WordLexeme {
  const known = new Map<string, string | null>();
  return (word) => {
    let lexeme = known.get(word);
    if (lexeme === undefined) {
      lexeme = englishLexeme(word, rules);
      // Clearing keeps the cost of a lookup at one Map access; a full map is rebuilt from the next pages.
      if (known.size >= capacity) known.clear();
      known.set(word, lexeme);
    }
    return lexeme;
  };
}

/** Each lexeme's positions, in the order of their first occurrence, for covered text; or null. */
function pagePositions(text: string, lexemeOf: WordLexeme): Map<string, number[]> | null {
  const positions = new Map<string, number[]>();
  const n = text.length;
  let position = 0;
  /** Takes the next position for the token's lexeme (none for a stop word); false past what the engine keeps. */
  const add = (lexeme: string | null): boolean => {
    position++;
    if (lexeme === null) return true;
    const at = positions.get(lexeme);
    if (!at) positions.set(lexeme, [position]);
    else if (at.push(position) > MAX_POSITIONS_PER_LEXEME) return false;
    return true;
  };
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (!isAlnum(c)) {
      if (c === 46 ? isPathDot(text, i) : c === 45 ? !isDashHyphen(text, i) : !SEPARATORS.has(text[i])) return null;
      i++;
      continue;
    }
    const run = alnumRun(text, i);
    let end = run.end;
    if (!run.digits && joinsWord(text, end)) {
      const compound = hyphenated(text, i, end);
      if (!compound) return null;
      // The whole compound takes a position, then each of its parts.
      if (!add(lexemeOf(text.slice(i, compound.end).toLowerCase()))) return null;
      for (const part of compound.parts) if (!add(lexemeOf(part.toLowerCase()))) return null;
      i = compound.end;
      continue;
    }
    if (!run.letters && text.charCodeAt(end) === 46 && isDigit(text.charCodeAt(end + 1))) {
      // digits.digits is a float, unless a letter or another dot and digit make it something else.
      let after = end + 1;
      while (after < n && isDigit(text.charCodeAt(after))) after++;
      if (isLetter(text.charCodeAt(after)) || (text.charCodeAt(after) === 46 && isAlnum(text.charCodeAt(after + 1)))) return null;
      end = after;
    }
    const token = text.slice(i, end);
    // Digits, an e and a digit start a number in scientific notation, which may end mid-run.
    if (token.length > MAX_TOKEN || (run.letters && run.digits && SCIENTIFIC.test(token))) return null;
    if (!add(run.letters ? (run.digits ? token.toLowerCase() : lexemeOf(token.toLowerCase())) : token)) return null;
    i = end;
  }
  return position > MAX_POSITION ? null : positions;
}

/** The tsvector's text form (`'lexeme':1,4 ...`) for covered text, or null. */
export function pageTsvector(text: string, lexemeOf: WordLexeme): string | null {
  const positions = pagePositions(text, lexemeOf);
  if (!positions) return null;
  let out = '';
  for (const [lexeme, at] of positions) out += `${out ? ' ' : ''}'${lexeme}':${at.join(',')}`;
  return out;
}

/**
 * The tsvector in PostgreSQL's binary form (what `tsvectorsend` writes, `tsvectorrecv` reads) for
 * covered text, or null: the count of lexemes, then each lexeme, a NUL, its count of positions and
 * the positions (16 bits each, weight D). The lexemes come in the order of their first position:
 * the engine sorts them as it reads them, in C, faster than sorting them here. It reads this form
 * several times faster than the text form, which it parses character by character, and about ten
 * times faster than it computes to_tsvector.
 */
export function pageTsvectorBytes(text: string, lexemeOf: WordLexeme): Buffer | null {
  const positions = pagePositions(text, lexemeOf);
  if (!positions) return null;
  let size = 4;
  for (const [lexeme, list] of positions) size += lexeme.length + 3 + 2 * list.length;
  const bytes = Buffer.allocUnsafe(size);
  let at = bytes.writeInt32BE(positions.size, 0);
  for (const [lexeme, list] of positions) {
    // Covered lexemes are ASCII: a byte a character, without a call into the runtime for each.
    for (let i = 0; i < lexeme.length; i++) bytes[at++] = lexeme.charCodeAt(i);
    bytes[at++] = 0;
    bytes[at++] = list.length >> 8;
    bytes[at++] = list.length & 0xff;
    for (const position of list) {
      bytes[at++] = position >> 8;
      bytes[at++] = position & 0xff;
    }
  }
  return bytes;
}

/** Tsvectors packed to cross to another thread: their bytes one after the other, and where each ends (-1 for text not covered). */
export interface PackedTsvectors {
  bytes: Uint8Array;
  ends: Int32Array;
}

/** The texts' tsvectors in binary form (pageTsvectorBytes), packed. */
export function packTsvectors(texts: readonly string[], lexemeOf: WordLexeme): PackedTsvectors {
  const tsvs = texts.map((text) => pageTsvectorBytes(text, lexemeOf));
  const bytes = new Uint8Array(tsvs.reduce((sum, tsv) => sum + (tsv?.length ?? 0), 0));
  const ends = new Int32Array(texts.length);
  let at = 0;
  tsvs.forEach((tsv, i) => {
    if (tsv) {
      bytes.set(tsv, at);
      at += tsv.length;
    }
    ends[i] = tsv ? at : -1;
  });
  return { bytes, ends };
}

/** Views of packed tsvectors' bytes, one per text (null for text not covered). */
export function unpackTsvectors({ bytes, ends }: PackedTsvectors): (Buffer | null)[] {
  let start = 0;
  return Array.from(ends, (end) => {
    if (end < 0) return null;
    const tsv = Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start);
    start = end;
    return tsv;
  });
}
