// Reading-order text of one PDF page from positioned text runs: runs become fragments, a
// column gutter splits the page into columns read left before right (recursively, between
// full-width lines such as titles; see pdf-columns.ts), fragments group into lines by vertical
// overlap, vertical gaps and first-line indents mark paragraphs, and words hyphenated at line
// ends are joined.
import { columns } from './pdf-columns.js';
import { maxOf, median, minOf, type Fragment } from './pdf-fragments.js';

/** A horizontal run of text in page space (y grows downwards, y is the baseline). */
export interface TextRun {
  text: string;
  x: number;
  y: number;
  width: number;
  /** Font size in page units (the run's height). */
  size: number;
}

interface Line {
  frags: Fragment[];
  text: string;
  x0: number;
  x1: number;
  y: number;
  size: number;
  top: number;
  bottom: number;
}

const WHITESPACE = /^\s*$/;

/** The page's text: paragraphs separated by blank lines, the lines of a paragraph by newlines. */
export function layoutPage(runs: TextRun[]): string {
  const fragments = mergeRuns(runs);
  if (fragments.length === 0) return '';
  const { header, body, footer } = peelMargins(fragments);
  const regions = [
    ...header.map((frags) => ({ frags, margin: true })),
    ...columns(body, 0).map((frags) => ({ frags, margin: false })),
    ...footer.map((frags) => ({ frags, margin: true })),
  ];
  const lines: string[] = [];
  let last: { line: Line; margin: boolean } | null = null;
  for (const region of regions) {
    const text = regionLines(region.frags);
    if (text.length === 0) continue;
    if (last && !(continues(last.line, text[0]) && !last.margin && !region.margin)) lines.push('');
    lines.push(...text.map((line) => (line ? line.text : '')));
    last = { line: text[text.length - 1]!, margin: region.margin };
  }
  return joinLines(lines);
}

// -------------------------------------------------------------------------------------------
// Runs to fragments: consecutive runs on one baseline that touch or are a word space apart.

function mergeRuns(runs: TextRun[]): Fragment[] {
  const frags: Fragment[] = [];
  let cur: Fragment | null = null;
  let last: TextRun | null = null;
  for (const run of runs) {
    if (!(run.size > 0) || !Number.isFinite(run.x) || !Number.isFinite(run.y)) continue;
    if (WHITESPACE.test(run.text)) {
      if (cur && run.text.length > 0) cur.spaceAfter = true;
      continue;
    }
    // Fake bold: the same run drawn again a hair to the side.
    if (last && last.text === run.text && Math.abs(last.x - run.x) < 0.2 * run.size && Math.abs(last.y - run.y) < 0.1 * run.size) {
      continue;
    }
    last = run;
    const size = run.size;
    const x1 = run.x + Math.max(0, run.width);
    if (cur) {
      const gap = run.x - cur.x1;
      const maxGap = (cur.spaceAfter ? 1.6 : 1.0) * Math.max(size, cur.size);
      if (sameLine(cur, run) && gap >= -0.5 * size && gap <= maxGap) {
        const space = cur.spaceAfter || gap > 0.12 * Math.min(size, cur.size) || /\s$/.test(cur.text) || /^\s/.test(run.text);
        cur.text = space ? `${cur.text.trimEnd()} ${run.text.trimStart()}` : cur.text + run.text;
        cur.x1 = Math.max(cur.x1, x1);
        cur.top = Math.min(cur.top, run.y - 0.8 * size);
        cur.bottom = Math.max(cur.bottom, run.y + 0.2 * size);
        if (size > cur.size) {
          // The fragment began with a superscript: its baseline is the larger text's.
          cur.size = size;
          cur.y = run.y;
        }
        cur.spaceAfter = false;
        continue;
      }
    }
    cur = { text: run.text, x0: run.x, x1, y: run.y, size, top: run.y - 0.8 * size, bottom: run.y + 0.2 * size, spaceAfter: false };
    frags.push(cur);
  }
  for (const f of frags) f.text = f.text.trim();
  return frags.filter((f) => f.text.length > 0);
}

/** On the fragment's baseline, or a smaller super- or subscript beside it. */
function sameLine(frag: Fragment, run: TextRun): boolean {
  const small = Math.min(run.size, frag.size);
  if (Math.abs(run.y - frag.y) <= 0.25 * small) return true;
  if (Math.abs(run.size - frag.size) < 0.15 * Math.max(run.size, frag.size)) return false;
  const overlap = Math.min(frag.bottom, run.y + 0.2 * run.size) - Math.max(frag.top, run.y - 0.8 * run.size);
  return overlap >= 0.5 * small;
}

// -------------------------------------------------------------------------------------------
// Margins: running headers and page numbers, set apart from the body by a wide gap.

const MAX_MARGIN_LINES = 2;
const MAX_MARGIN_CHARS = 120;

function peelMargins(frags: Fragment[]): { header: Fragment[][]; body: Fragment[]; footer: Fragment[][] } {
  const sorted = [...frags].sort((a, b) => a.y - b.y);
  const rows: Fragment[][] = [];
  for (const f of sorted) {
    const row = rows[rows.length - 1];
    if (row && Math.abs(row[0].y - f.y) <= 0.5 * Math.min(row[0].size, f.size)) row.push(f);
    else rows.push([f]);
  }
  const size = median(frags.map((f) => f.size));
  const isMargin = (row: Fragment[], neighbour: Fragment[], above: boolean) => {
    const gap = above ? minOf(neighbour, 'top') - maxOf(row, 'bottom') : minOf(row, 'top') - maxOf(neighbour, 'bottom');
    return gap > 2 * size && row.reduce((n, f) => n + f.text.length, 0) <= MAX_MARGIN_CHARS;
  };
  let top = 0;
  while (top < MAX_MARGIN_LINES && rows.length - top > 2 && isMargin(rows[top], rows[top + 1], true)) top++;
  let bottom = rows.length;
  while (rows.length - bottom < MAX_MARGIN_LINES && bottom - top > 2 && isMargin(rows[bottom - 1], rows[bottom - 2], false)) bottom--;
  return { header: rows.slice(0, top), body: rows.slice(top, bottom).flat(), footer: rows.slice(bottom) };
}

// -------------------------------------------------------------------------------------------
// Lines and paragraphs within a region

/** The region's lines in order, with null between paragraphs. */
function regionLines(frags: Fragment[]): (Line | null)[] {
  const lines = groupLines(frags);
  if (lines.length === 0) return [];
  const spacing = typicalSpacing(lines);
  const left = mode(lines.map((l) => Math.round(l.x0)));
  const out: (Line | null)[] = [lines[0]];
  for (let i = 1; i < lines.length; i++) {
    if (startsParagraph(lines[i - 1], lines[i], spacing, left)) out.push(null);
    out.push(lines[i]);
  }
  return out;
}

function groupLines(frags: Fragment[]): Line[] {
  const sorted = [...frags].sort((a, b) => a.y - b.y || a.x0 - b.x0);
  const lines: Line[] = [];
  for (const f of sorted) {
    let home: Line | undefined;
    // Lines are built top-down, so only the last few can still take this fragment.
    for (let i = lines.length - 1; i >= 0 && i >= lines.length - 4; i--) {
      const line = lines[i];
      const overlap = Math.min(line.bottom, f.bottom) - Math.max(line.top, f.top);
      if (overlap >= 0.5 * Math.min(line.bottom - line.top, f.bottom - f.top) && !collides(line, f)) {
        home = line;
        break;
      }
    }
    if (home) {
      home.frags.push(f);
      home.top = Math.min(home.top, f.top);
      home.bottom = Math.max(home.bottom, f.bottom);
    } else {
      lines.push({ frags: [f], text: '', x0: f.x0, x1: f.x1, y: f.y, size: f.size, top: f.top, bottom: f.bottom });
    }
  }
  for (const line of lines) {
    line.frags.sort((a, b) => a.x0 - b.x0);
    // The line's baseline and size are those of its largest fragment (not a superscript's).
    const main = line.frags.reduce((a, b) => (b.size > a.size ? b : a));
    line.y = main.y;
    line.size = main.size;
    line.x0 = line.frags[0].x0;
    line.x1 = Math.max(...line.frags.map((f) => f.x1));
    line.text = joinFragments(line.frags);
  }
  return lines.sort((a, b) => a.y - b.y).filter((l) => l.text.length > 0);
}

/** A fragment overlapping a line's fragments horizontally belongs to another line. */
function collides(line: Line, f: Fragment): boolean {
  return line.frags.some((g) => Math.min(g.x1, f.x1) - Math.max(g.x0, f.x0) > 0.5 * Math.min(g.size, f.size) && Math.abs(g.y - f.y) > 0.1 * f.size);
}

function joinFragments(frags: Fragment[]): string {
  let text = frags[0].text;
  for (let i = 1; i < frags.length; i++) {
    const prev = frags[i - 1];
    const f = frags[i];
    const gap = f.x0 - prev.x1;
    const size = Math.max(prev.size, f.size);
    // Far apart on one line: table cells or form fields, kept apart by a tab.
    const sep = gap > 2.5 * size ? '\t' : gap > 0.12 * f.size || prev.spaceAfter ? ' ' : '';
    text += sep + f.text;
  }
  return text;
}

function typicalSpacing(lines: Line[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const d = lines[i].y - lines[i - 1].y;
    const size = Math.max(lines[i].size, lines[i - 1].size);
    if (d >= 0.8 * size && d <= 2.5 * size) gaps.push(d);
  }
  return gaps.length > 0 ? median(gaps) : 1.25 * median(lines.map((l) => l.size));
}

const SENTENCE_END = /[.!?:;…。！？"”’)]$/u;

function startsParagraph(prev: Line, line: Line, spacing: number, left: number): boolean {
  const d = line.y - prev.y;
  if (d > 1.3 * spacing + 0.1 * line.size) return true;
  if (Math.abs(line.size - prev.size) > 0.2 * Math.max(line.size, prev.size)) return true;
  // A first-line indent after a line that ended a sentence.
  const indent = line.x0 - left;
  return indent > 0.8 * line.size && indent < 5 * line.size && SENTENCE_END.test(prev.text) && Math.abs(prev.x0 - left) < 0.5 * line.size;
}

// -------------------------------------------------------------------------------------------
// Joining regions and lines

const HYPHENATED = /\p{L}[-\u00ad\u2010]$/u;
const STARTS_LOWER = /^\p{Ll}/u;

/** Whether the next region continues the previous one's paragraph (a column break mid-sentence). */
function continues(prev: Line | null, next: Line | null): boolean {
  if (!prev || !next || Math.abs(prev.size - next.size) > 0.15 * Math.max(prev.size, next.size)) return false;
  if (HYPHENATED.test(prev.text)) return STARTS_LOWER.test(next.text);
  return !SENTENCE_END.test(prev.text) && /^[\p{Ll}\p{Nd}]/u.test(next.text);
}

/** Lines joined by newlines ('' entries become blank lines); words split by a line-end hyphen are joined. */
function joinLines(lines: string[]): string {
  const out: string[] = [];
  for (let line of lines) {
    const prev = out[out.length - 1];
    if (prev && line && HYPHENATED.test(prev) && STARTS_LOWER.test(line)) {
      // "inter-" + "national law" -> "international" + "law"
      const word = /^\S+/.exec(line)![0];
      out[out.length - 1] = prev.slice(0, -1) + word;
      line = line.slice(word.length).trimStart();
      if (!line) continue;
    }
    out.push(line);
  }
  return out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

// -------------------------------------------------------------------------------------------

function mode(values: number[]): number {
  const counts = new Map<number, number>();
  let best = values[0];
  for (const v of values) {
    const n = (counts.get(v) ?? 0) + 1;
    counts.set(v, n);
    if (n > (counts.get(best) ?? 0)) best = v;
  }
  return best;
}
