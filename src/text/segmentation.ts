// Splits a page of text into paragraphs and each paragraph into sentences. Intl.Segmenter
// finds the sentences (for ASCII text ascii-sentences.ts finds the same ones, faster); this module
// repairs their known faults (splits after abbreviations and initials) and keeps the segmenter off
// long inputs, where it is quadratic.
import { asciiSentences, isAsciiText } from './ascii-sentences.js';

export interface SegmentedParagraph {
  content: string;
  sentences: string[];
}

/** Splits one page of text into paragraphs, each into sentences, in order (zero-based indices are the array positions). */
export function segmentPage(text: string): SegmentedParagraph[] {
  return splitParagraphs(text).map((content) => ({ content, sentences: splitSentences(content) }));
}

// ---------------------------------------------------------------------------------------------
// Paragraphs

type LineKind = 'text' | 'list' | 'structure';

interface Line {
  text: string; // trimmed
  indent: number;
  kind: LineKind;
}

// Bullets, numbers, letters and Markdown definitions (": ").
const LIST_ITEM = /^(?:[-*+•·▪◦–:]|\d{1,3}[.)]|[a-zA-Z]\))\s+/;
const HEADING = /^#{1,6}(?:\s|$)/;
const FENCE = /^(?:```|~~~)/;
// Rules (---, ===), block quotes, tables and column-aligned lines are layout, never wrapped prose.
const LAYOUT_LINE = /^(?:[\p{P}\p{S}\s]+$|>)/u;
const SENTENCE_END = /[.!?…。！？؟।]["'’”»)\]]*$/u;
const STARTS_LOWER = /^[\p{Ps}\p{Pi}"'*_`]*\p{Ll}/u;
const CJK_END = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]$/u;
const CJK_START = /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]/u;
// Nobody hard-wraps wider than this; a block with longer lines has one logical line per line.
const MAX_WRAP_WIDTH = 160;
// Lines shorter than this are never taken for wrapped prose (lists, addresses, poems).
const MIN_WRAPPED_LINE = 40;

/**
 * Whether a line is layout: LAYOUT_LINE, or a bar, a tab or three spaces anywhere. Those three by
 * native searches: as alternatives of the one expression they were tried at every character of
 * every line, a quarter of a page's segmentation.
 */
function isLayout(line: string): boolean {
  return line.includes('|') || line.includes('\t') || line.includes('   ') || LAYOUT_LINE.test(line);
}

/** Paragraphs of a page, trimmed, wrapped lines joined and structural lines kept on their own. */
export function splitParagraphs(text: string): string[] {
  const paragraphs: string[] = [];
  for (const block of blocks(classify(text))) {
    // Indented as a whole: code, a poem or a quotation laid out by hand.
    if (block.every((line) => line.indent >= 4)) block.forEach((line) => (line.kind = 'structure'));
    const width = block.reduce((max, line) => (line.kind === 'structure' ? max : Math.max(max, line.text.length)), 0);
    const unwrapped = width > MAX_WRAP_WIDTH;
    // A line this long filled the wrap width, so its line break is a wrap, not a choice.
    const fullAt = unwrapped ? Infinity : Math.max(MIN_WRAPPED_LINE, 0.6 * width);
    let start = 0;
    for (let i = 1; i <= block.length; i++) {
      if (i === block.length || startsParagraph(block[i - 1], block[i], unwrapped)) {
        paragraphs.push(joinLines(block.slice(start, i), fullAt));
        start = i;
      }
    }
  }
  return paragraphs.filter((paragraph) => paragraph.length > 0);
}

function classify(text: string): Line[] {
  const lines: Line[] = [];
  let inFence = false;
  const normalised = text.replace(/\r\n?|\u2028/g, '\n').replace(/[\f\u2029]/g, '\n\n');
  for (const raw of normalised.split('\n')) {
    const trimmed = raw.trim();
    const indent = raw.slice(0, raw.length - raw.trimStart().length).replace(/\t/g, '    ').length;
    const fence = FENCE.test(trimmed);
    const marker = LIST_ITEM.exec(trimmed)?.[0] ?? '';
    let kind: LineKind = marker ? 'list' : 'text';
    if (inFence || fence || HEADING.test(trimmed) || isLayout(trimmed.slice(marker.length))) kind = 'structure';
    if (fence) inFence = !inFence;
    lines.push({ text: trimmed, indent, kind });
  }
  return lines;
}

/** Runs of non-blank lines; lines holding only whitespace separate them. */
function blocks(lines: Line[]): Line[][] {
  const result: Line[][] = [[]];
  for (const line of lines) {
    if (line.text) result[result.length - 1].push(line);
    else if (result[result.length - 1].length > 0) result.push([]);
  }
  return result.filter((block) => block.length > 0);
}

/** A paragraph break without a blank line: an indented first line, or a new logical line. */
function startsParagraph(prev: Line, next: Line, unwrapped: boolean): boolean {
  if (prev.kind !== 'text' || next.kind !== 'text') return false;
  if (!SENTENCE_END.test(prev.text) || STARTS_LOWER.test(next.text)) return false;
  return unwrapped || next.indent - prev.indent >= 2;
}

function joinLines(lines: Line[], fullAt: number): string {
  const parts = [lines[0].text];
  for (let i = 1; i < lines.length; i++) {
    const separator = joinWith(lines[i - 1], lines[i], fullAt);
    if (separator === '-') parts[parts.length - 1] = parts[parts.length - 1].slice(0, -1);
    else parts.push(separator);
    parts.push(lines[i].text);
  }
  return parts.join('');
}

/** How two lines join: '\n' keeps the break, ' ' or '' joins wrapped prose, '-' drops a hyphen. */
function joinWith(prev: Line, next: Line, fullAt: number): string {
  // A list item may wrap onto continuation lines; other structure keeps every break.
  if (next.kind !== 'text' || prev.kind === 'structure') return '\n';
  const lower = STARTS_LOWER.test(next.text);
  if (lower && /\p{L}-$/u.test(prev.text)) return '-';
  // Mid-sentence: the next line starts lowercase, or the previous line stops on a lowercase
  // word ("if the") and the next starts with a number, code or a quote.
  const midSentence =
    !SENTENCE_END.test(prev.text) &&
    (lower || (/(?:^|\s)\p{Ll}+$/u.test(prev.text) && /^[^\p{L}\s]/u.test(next.text)));
  if (!midSentence && prev.text.length < fullAt) return '\n';
  return CJK_END.test(prev.text) && CJK_START.test(next.text) ? '' : ' ';
}

// ---------------------------------------------------------------------------------------------
// Sentences

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
// Intl.Segmenter's cost grows with input length times sentence count, so long paragraphs are
// fed to it in chunks of about this size.
const CHUNK = 2000;
// Where the segmenter would break anyway: a terminal before a capitalised word, CJK terminals,
// line breaks.
const SAFE_CUT = /[.!?]["'’”)\]]*\s+(?=["'‘“([]?[\p{Lu}\p{Lo}])|[。！？]+[」』）”’]*|\n/gu;

// Abbreviations after which a split is always wrong (case matters: "Mar." but not "mar.").
const ALWAYS = new Set(
  (
    'Dr Mr Mrs Ms Mx Prof Rev Hon Gen Col Capt Lt Sgt Gov Sen Rep Pres Mt Messrs Mme Mlle ' +
    'e.g i.e cf vs viz ca approx Fig Figs Eq Eqs Vol Vols pp Sec Ch Chap Ref Refs ' +
    'Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Mon Tue Tues Wed Thu Thur Thurs Fri Sat'
  ).split(' '),
);
// Abbreviations that often end a sentence too ("works at Acme Inc. The ..."): merge unless the
// next word typically starts a sentence. Single-letter initials and U.S.-style acronyms join these.
const UNLESS_SENTENCE_STARTS = new Set('St Jr Sr Inc Ltd Co Corp Bros al Ave Blvd Rd Dept Univ Sun'.split(' '));
// Abbreviations that are also ordinary words ("No.", "Art."): merge only before a number. "etc."
// is merged only before a lowercase word, like any split.
const BEFORE_NUMBER = new Set('No Nos Art'.split(' '));
const SENTENCE_STARTERS = new Set(
  (
    'A An The This That These Those There Then It Its He She They We I You His Her Their Our My Your ' +
    'But And Or So In On At As If When While After Before However Also Yet For With What Who Why How ' +
    'Where Which No Yes Not All Some Many Most Each One Today Now'
  ).split(' '),
);

/** Sentences of one paragraph, trimmed; each is a substring of the paragraph. */
export function splitSentences(paragraph: string): string[] {
  // Raw segments keep their whitespace so that merged sentences stay substrings of the paragraph.
  const segments: string[] = [];
  let carry = ''; // the tail of a chunk cut mid-sentence, glued to the next chunk's first segment
  for (const [chunk, cutAtBoundary] of chunks(paragraph)) {
    const pieces = isAsciiText(chunk) ? asciiSentences(chunk) : Array.from(segmenter.segment(chunk), (piece) => piece.segment);
    pieces[0] = carry + pieces[0];
    carry = cutAtBoundary ? '' : (pieces.pop() ?? '');
    segments.push(...pieces);
  }
  if (carry) segments.push(carry);

  const sentences: string[] = [];
  let current: string[] = []; // the sentence being built, in parts: merges can be many
  for (let segment of segments) {
    if (current.length > 0) {
      const last = current.length - 1;
      // Without a space the segmenter gives an opening bracket to the sentence before it ("。(").
      const opener = /[\p{Ps}\p{Pi}]+$/u.exec(current[last].slice(-8))?.[0];
      if (opener) {
        current[last] = current[last].slice(0, -opener.length);
        segment = opener + segment;
      }
      if (continuesAfter(lastChars(current), segment)) {
        current.push(segment);
        continue;
      }
      sentences.push(current.join(''));
    }
    current = [segment];
  }
  if (current.length > 0) sentences.push(current.join(''));
  return sentences.map((sentence) => sentence.trim()).filter((sentence) => sentence.length > 0);
}

/** Cuts text into pieces of at most CHUNK chars, each flagged whether it ends at a sentence boundary. */
function* chunks(text: string): Generator<[string, boolean]> {
  let start = 0;
  while (text.length - start > CHUNK) {
    const from = start + CHUNK / 2;
    const window = text.slice(from, start + CHUNK);
    let cut = -1;
    for (const match of window.matchAll(SAFE_CUT)) cut = match.index + match[0].length;
    const atBoundary = cut > 0;
    if (!atBoundary) cut = window.search(/\s\S*$/) + 1 || window.length; // else after a space, else anywhere
    let end = from + cut;
    if (/[\uD800-\uDBFF]/.test(text[end - 1])) end--; // never halve a surrogate pair
    yield [text.slice(start, end), atBoundary];
    start = end;
  }
  if (start < text.length) yield [text.slice(start), true];
}

/** The last 40 characters of parts joined: enough to see the word before a split. */
function lastChars(parts: string[]): string {
  let text = '';
  for (let i = parts.length - 1; i >= 0 && text.length < 40; i--) text = parts[i].slice(-40) + text;
  return text.slice(-40);
}

/** Whether the segmenter's split after tail (the end of a sentence) is one of its known faults. */
function continuesAfter(tail: string, next: string): boolean {
  const trimmed = tail.trimEnd();
  if (tail.slice(trimmed.length).includes('\n')) return false; // a kept line break is deliberate
  // It splits after ?! before a lowercase word ("'Well!' thought Alice") and inside tokens such
  // as `!n` or "![": neither starts a sentence.
  if (STARTS_LOWER.test(next.trimStart())) return true;
  if (trimmed === tail && /[.!?]["'’”)\][]*$/.test(tail) && /^\S/.test(next)) return true;
  const word = /(?:^|[^\p{L}.])((?:\p{L}+\.)*\p{L}+)\.$/u.exec(trimmed)?.[1]; // "--Mr." gives Mr
  if (!word) return false;
  if (ALWAYS.has(word)) return true;
  if (BEFORE_NUMBER.has(word)) return /^\s*\p{Nd}/u.test(next);
  const initialOrAcronym = /^(?:\p{L}\.)*\p{L}$/u.test(word); // J. / U.S.
  if (!initialOrAcronym && !UNLESS_SENTENCE_STARTS.has(word)) return false;
  const nextWord = /^\s*["'“‘(]*(\p{L}*)/u.exec(next)?.[1] ?? '';
  return !SENTENCE_STARTERS.has(nextWord);
}
