// Sentence boundaries of ASCII text by the rules of Unicode's text segmentation (UAX #29, SB1-SB11
// and SB998), as ICU's sentence break iterator, which Intl.Segmenter uses, applies them: the same
// segments, each with its trailing spaces. For ASCII the rules see only the classes below; Extend,
// Format, OLetter and Sep have no ASCII members. Intl.Segmenter took most of the time of segmenting
// an ingested page; this takes about 40% of its time (a page of 1,000-2,000 characters: 25-32
// against 65-71 microseconds). test/unit/ascii-sentences.test.ts holds the two to the same segments.

const OTHER = 0;
const CR = 1;
const LF = 2;
const SP = 3;
const LOWER = 4;
const UPPER = 5;
const NUMERIC = 6;
const ATERM = 7;
const STERM = 8;
const CLOSE = 9;
const SCONTINUE = 10;

/** The class of each ASCII code. */
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (c === 13) CLASS[c] = CR;
  else if (c === 10) CLASS[c] = LF;
  else if (c === 9 || c === 11 || c === 12 || c === 32) CLASS[c] = SP;
  else if (ch >= 'a' && ch <= 'z') CLASS[c] = LOWER;
  else if (ch >= 'A' && ch <= 'Z') CLASS[c] = UPPER;
  else if (ch >= '0' && ch <= '9') CLASS[c] = NUMERIC;
  else if (ch === '.') CLASS[c] = ATERM;
  else if (ch === '!' || ch === '?') CLASS[c] = STERM;
  else if ('"\'()[]{}'.includes(ch)) CLASS[c] = CLOSE;
  else if (',-:;'.includes(ch)) CLASS[c] = SCONTINUE;
  else CLASS[c] = OTHER;
}

const isParaSep = (k: number) => k === CR || k === LF;
const isSATerm = (k: number) => k === ATERM || k === STERM;

const NON_ASCII = /[^\0-\x7f]/;

/**
 * Whether `text` is all ASCII, which asciiSentences() takes. A regular expression rather than a
 * loop: it flattens a string made of pieces, whose characters asciiSentences() then reads fast.
 */
export function isAsciiText(text: string): boolean {
  return !NON_ASCII.test(text);
}

/** Classes that end SB8's look-ahead: Upper, Lower, ParaSep or SATerm (OLetter has no ASCII member). */
const endsLookAhead = (k: number) => k === UPPER || k === LOWER || isParaSep(k) || isSATerm(k);

/**
 * Whether the rules break before text[i] (0 < i < length), where text[..i) ends with a terminal
 * of class `term`, then closing brackets and quotes, then spaces if `spaces` (SB6-SB11);
 * `ahead` is the class of the first character from i on that ends SB8's look-ahead (OTHER: none).
 */
function breaksAfterTerminal(k: Uint8Array, i: number, term: number, spaces: boolean, ahead: number): boolean {
  const before = k[i - 1];
  const after = k[i];
  if (before === ATERM && after === NUMERIC) return false; // SB6
  if (before === ATERM && i >= 2 && (k[i - 2] === UPPER || k[i - 2] === LOWER) && after === UPPER) return false; // SB7
  // SB8: ATerm Close* Sp* x (not OLetter, Upper, Lower, ParaSep or SATerm)* Lower
  if (term === ATERM && ahead === LOWER) return false;
  if (after === SCONTINUE || isSATerm(after)) return false; // SB8a
  if (!spaces && (after === CLOSE || after === SP || isParaSep(after))) return false; // SB9
  if (after === SP || isParaSep(after)) return false; // SB10
  return true; // SB11
}

/** The sentences of ASCII text as Intl.Segmenter('en', { granularity: 'sentence' }) gives them. */
export function asciiSentences(text: string): string[] {
  const k = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) k[i] = CLASS[text.charCodeAt(i)];
  const segments: string[] = [];
  let start = 0;
  // What the text before i ends with: a terminal (its class, 0 for none), closing marks, spaces.
  let term = 0;
  let spaces = false;
  // Where SB8's look-ahead from the last position that needed it stopped (every position up to it
  // stops there too, so the text is read ahead once), and the class found there.
  let stop = 0;
  let ahead = OTHER;
  for (let i = 1; i < text.length; i++) {
    const before = k[i - 1];
    if (isSATerm(before)) {
      term = before;
      spaces = false;
    } else if (before === SP && term !== 0) {
      spaces = true;
    } else if (before !== CLOSE || spaces) {
      term = 0;
    }
    let breaks: boolean;
    if (before === CR && k[i] === LF) breaks = false; // SB3
    else if (isParaSep(before)) breaks = true; // SB4
    else if (term === 0) breaks = false; // SB998
    else {
      if (term === ATERM && i > stop) {
        for (stop = i; stop < k.length && !endsLookAhead(k[stop]); stop++);
        ahead = stop < k.length ? k[stop] : OTHER;
      }
      breaks = breaksAfterTerminal(k, i, term, spaces, ahead);
    }
    if (breaks) {
      segments.push(text.slice(start, i));
      start = i;
    }
  }
  if (start < text.length) segments.push(text.slice(start));
  return segments;
}
