// The layout the offline extractor reads in a document's text: lines and blocks, label-value
// pairs ("Received: February 25, 2009", "Correspondence" over a name, two-cell table rows,
// citations such as "2009; 39 (3): 361-365") and tables (cells split by " | " as the DOCX and
// HTML parsers write them, by tabs as the PDF parser does, or Markdown pipes).

export interface Line {
  page: number;
  /** Index among all lines of the document. */
  index: number;
  text: string;
  /** Index of the blank-line separated block it belongs to. */
  block: number;
}

export type PairSource = 'colon' | 'table' | 'heading' | 'prefix' | 'citation';

export interface Pair {
  label: string;
  value: string;
  /** The rest of the block after a heading label (long values such as an abstract). */
  long: string | null;
  line: Line;
  source: PairSource;
}

export interface Table {
  page: number;
  /** Line index of the first row. */
  start: number;
  rows: string[][];
}

export interface Layout {
  pages: string[];
  lines: Line[];
  pairs: Pair[];
  tables: Table[];
  /** Title from the file (HTML <title>, DOCX/PDF properties, document metadata), if any. */
  title: string | null;
}

const MAX_LABEL_WORDS = 6;
const MAX_LABEL_CHARS = 60;

/** Segments of a line split at tabs and runs of three or more spaces (column gaps). */
export function segments(text: string): string[] {
  return text
    .split(/\t+| {3,}/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function labelLike(label: string): boolean {
  const words = label.split(/\s+/).filter(Boolean);
  return words.length > 0 && words.length <= MAX_LABEL_WORDS && label.length <= MAX_LABEL_CHARS && /\p{L}/u.test(label) && !/[.!?]$/.test(label);
}

const COLON_PAIR = /^(?<label>[^:：]{1,60}?)\s*[:：]\s*(?<value>.*\S)\s*$/u;
// A byline starts a line with a capital: "Posted by kovarex, ..." (any name), "By Nathan
// Willis" (a capitalised name: "By convention" is prose, "written by" mid-sentence too).
const PREFIX_PAIR = /^(?:(?<label>(?:Posted|Written|Authored|Edited|Published|Reported|Compiled|Prepared|Submitted|Signed)\s+by)\s+(?<value>\p{L}.*)|(?<by>By)\s+(?<named>\p{Lu}\p{Ll}+\s+\p{Lu}.*))$/u;

/** Cells of a table row, or null when the line is not one. */
export function tableCells(text: string): { cells: string[]; kind: 'pipe' | 'tab' } | null {
  if (text.includes('|')) {
    let body = text.trim();
    const markdown = body.startsWith('|') && body.endsWith('|') && body.length > 1;
    if (markdown) body = body.slice(1, -1);
    const cells = body.split('|').map((c) => c.trim());
    // "a | b" needs its spaces (the parsers' separator); bare pipes only in Markdown rows.
    if (!markdown && !/ \| |^\| | \|$/.test(text.trim()) && !text.trim().startsWith('|')) return null;
    if (cells.length >= 2) return { cells, kind: 'pipe' };
  }
  if (text.includes('\t')) {
    const cells = text.split('\t').map((c) => c.trim());
    if (cells.filter((c) => c !== '').length >= 2) return { cells, kind: 'tab' };
  }
  return null;
}

function isRule(cells: string[]): boolean {
  return cells.every((c) => /^:?-{2,}:?$/.test(c) || c === '');
}

function findTables(lines: Line[]): Table[] {
  const tables: Table[] = [];
  let current: (Table & { kind: 'pipe' | 'tab'; last: number }) | null = null;
  const close = () => {
    if (current && current.rows.length >= 2) tables.push({ page: current.page, start: current.start, rows: current.rows });
    current = null;
  };
  for (const line of lines) {
    if (line.text.trim() === '') continue;
    const row = tableCells(line.text);
    // A table goes on over one blank line, not over text or a page break.
    const previous = current?.rows[current.rows.length - 1];
    const continues =
      current !== null &&
      row !== null &&
      row.kind === current.kind &&
      line.page === current.page &&
      // PDF tables (tabs) may have a blank line between header and rows; the DOCX and HTML
      // parsers write a table's rows together, and a blank line ends it.
      (line.index - current.last === 1 || (row.kind === 'tab' && line.index - current.last === 2 && previous !== undefined && Math.abs(previous.length - row.cells.length) <= 2));
    if (!continues) close();
    if (!row) continue;
    if (isRule(row.cells)) {
      if (current) current.last = line.index;
      continue;
    }
    if (!current) current = { page: line.page, start: line.index, rows: [], kind: row.kind, last: line.index };
    current.rows.push(row.cells);
    current.last = line.index;
  }
  close();
  return tables;
}

const CITATION = [
  // Vancouver: 2009; 39 (3): 361-365
  /(?<year>(?:1[89]|20)\d{2})\s*;\s*(?<volume>\d{1,4})\s*(?:\(\s*(?<issue>[\w-]{1,8})\s*\))?\s*:\s*(?<first>[A-Za-z]?\d{1,6})\s*[-–]\s*(?<last>[A-Za-z]?\d{1,6})/,
  // Vol. 12, No. 3, pp. 45-67 (Year)
  /Vol(?:ume|\.)?\s*(?<volume>\d{1,4})\s*[,;]?\s*(?:(?:No|Nr|Issue|Iss)\.?\s*(?<issue>[\w-]{1,8}))?\s*[,;]?\s*(?:pp?\.?\s*(?<first>\d{1,6})\s*[-–]\s*(?<last>\d{1,6}))?(?:\s*[,;(]\s*(?<year>(?:1[89]|20)\d{2}))?/i,
];

function citationPairs(line: Line): Pair[] {
  for (const re of CITATION) {
    const g = re.exec(line.text)?.groups;
    if (!g || (!g.first && !g.issue)) continue;
    const pairs: Pair[] = [];
    const add = (label: string, value: string | undefined) => {
      if (value) pairs.push({ label, value, long: null, line, source: 'citation' });
    };
    add('volume', g.volume);
    add('issue', g.issue);
    add('year', g.year);
    if (g.first && g.last) {
      add('pages', `${g.first}-${g.last}`);
      add('first page', g.first);
      add('last page', g.last);
    }
    return pairs;
  }
  return [];
}

export function isHeadingLabel(text: string): boolean {
  const t = text.trim().replace(/[:：]$/, '');
  // A heading starts with a capital and ends without sentence punctuation (quotes included).
  return labelLike(t) && /^\p{Lu}/u.test(t) && !/[.!?,;"'”’»)]$/u.test(t) && t.split(/\s+/).length <= 4 && !/\d/.test(t) && !/[,;@/:：]/.test(t) && !tableCells(text);
}

function findPairs(lines: Line[]): Pair[] {
  const pairs: Pair[] = [];
  const content = lines.filter((l) => l.text.trim() !== '');
  for (let i = 0; i < content.length; i++) {
    const line = content[i];
    const row = tableCells(line.text);
    if (row && row.kind === 'pipe') {
      const cells = row.cells.filter((c) => c !== '');
      if (cells.length === 2 && labelLike(cells[0])) pairs.push({ label: cells[0], value: cells[1], long: null, line, source: 'table' });
    }
    for (const segment of row?.kind === 'pipe' ? [] : segments(line.text)) {
      const colon = COLON_PAIR.exec(segment);
      if (colon?.groups && labelLike(colon.groups.label) && !/^https?$|^mailto$/i.test(colon.groups.label.trim())) {
        pairs.push({ label: colon.groups.label.trim(), value: colon.groups.value.trim(), long: null, line, source: 'colon' });
      }
      const prefix = PREFIX_PAIR.exec(segment);
      if (prefix?.groups) {
        // "Posted by A, B on 2019-02-15": the names end where the date phrase begins.
        const value = (prefix.groups.value ?? prefix.groups.named).replace(/\s+on\s+.*$|\s*[|·•].*$/i, '').trim();
        pairs.push({ label: prefix.groups.label ?? prefix.groups.by, value, long: null, line, source: 'prefix' });
      }
    }
    pairs.push(...citationPairs(line));
    // Two tab-separated segments: a label and its value ("Intended Status\tProposed Standard").
    if (row?.kind === 'tab') {
      const cells = row.cells.filter((c) => c !== '');
      if (cells.length === 2 && labelLike(cells[0]) && !/\d/.test(cells[0])) pairs.push({ label: cells[0], value: cells[1], long: null, line, source: 'table' });
    }
    // A heading line over its value: "Correspondence" / "Özcan SAYGIN", "Abstract" / text.
    if (isHeadingLabel(line.text) && i + 1 < content.length && content[i + 1].page === line.page && content[i + 1].index - line.index <= 2) {
      const next = content[i + 1];
      // The next line is the value unless it is a heading or a label-value line itself.
      const labelled = COLON_PAIR.exec(next.text.trim())?.groups;
      if ((!isHeadingLabel(next.text) || /[:：]$/.test(line.text.trim())) && !(labelled && labelLike(labelled.label))) {
        const block = content.filter((l) => l.block === next.block).map((l) => l.text.trim());
        pairs.push({ label: line.text.trim().replace(/[:：]$/, ''), value: next.text.trim(), long: block.join(' '), line, source: 'heading' });
      }
    }
  }
  return pairs;
}

export function buildLayout(pages: string[], title: string | null): Layout {
  const lines: Line[] = [];
  let block = 0;
  let index = 0;
  pages.forEach((page, p) => {
    block++;
    for (const raw of page.split(/\r?\n/)) {
      const text = raw.replace(/\s+$/, '');
      if (text.trim() === '') block++;
      lines.push({ page: p, index: index++, text, block });
    }
  });
  return { pages, lines, pairs: findPairs(lines), tables: findTables(lines), title: title && title.trim() !== '' ? title.trim() : null };
}
