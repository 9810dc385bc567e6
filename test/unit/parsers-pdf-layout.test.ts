// PDF page layout on synthetic text runs: columns, lines, paragraphs, hyphenation, tables.
import { describe, expect, it } from 'vitest';
import { combineAccents, isGarbage } from '../../src/sources/parsers/pdf.js';
import { layoutPage, type TextRun } from '../../src/sources/parsers/pdf-layout.js';

const SIZE = 10;
const LEADING = 12;

/** One run per line, top to bottom from y0, left-aligned at x (width ~0.5 em a character). */
function column(lines: string[], x: number, y0: number, leading = LEADING): TextRun[] {
  return lines.map((text, i) => ({ text, x, y: y0 + i * leading, width: text.length * 0.5 * SIZE, size: SIZE }));
}

/** Prose lines of about `chars` characters each. */
function prose(words: string[], chars: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && line.length + 1 + word.length > chars) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

const LEFT = prose(
  'the left column opens the article and talks about many things at some length so that it fills several lines of the page before it stops at the bottom of the column in the middle of a'.split(' '),
  45,
);
const RIGHT = prose(
  'sentence that the right column finishes and then the right column goes on with its own text for a while until the page ends at the very bottom.'.split(' '),
  45,
);

describe('layoutPage', () => {
  it('returns nothing for no runs or only whitespace runs', () => {
    expect(layoutPage([])).toBe('');
    expect(layoutPage([{ text: '  ', x: 0, y: 0, width: 5, size: 10 }])).toBe('');
  });

  it('reads two columns left before right, even when the runs come interleaved by line', () => {
    const left = column(LEFT, 50, 100);
    const right = column(RIGHT, 300, 100);
    const interleaved: TextRun[] = [];
    for (let i = 0; i < Math.max(left.length, right.length); i++) {
      if (left[i]) interleaved.push(left[i]);
      if (right[i]) interleaved.push(right[i]);
    }
    const text = layoutPage(interleaved);
    expect(text).toBe([...LEFT, ...RIGHT].join('\n'));
    // The sentence split across the columns reads as one.
    expect(text.replace(/\s+/g, ' ')).toContain('in the middle of a sentence that the right column finishes');
  });

  it('keeps a full-width title above the columns and a page number below them', () => {
    const runs = [
      { text: 'A Title Wide Enough To Span Both Columns Of The Page', x: 120, y: 60, width: 300, size: 16 },
      ...column(LEFT, 50, 100),
      ...column(RIGHT, 300, 100),
      { text: '7', x: 270, y: 700, width: 5, size: SIZE },
    ];
    const text = layoutPage(runs);
    expect(text.startsWith('A Title Wide Enough To Span Both Columns Of The Page\n\nthe left column')).toBe(true);
    expect(text.endsWith('very bottom.\n\n7')).toBe(true);
  });

  it('does not take table columns for text columns: rows stay whole, cells apart', () => {
    const runs: TextRun[] = [];
    const rows = [
      ['Country', 'Capital', 'Population'],
      ['Austria', 'Vienna', '8.9'],
      ['Belgium', 'Brussels', '11.5'],
      ['Denmark', 'Copenhagen', '5.8'],
      ['Finland', 'Helsinki', '5.5'],
    ];
    rows.forEach((row, r) =>
      row.forEach((cell, c) => runs.push({ text: cell, x: 60 + c * 150, y: 100 + r * LEADING, width: cell.length * 5, size: SIZE })),
    );
    expect(layoutPage(runs)).toBe(rows.map((row) => row.join('\t')).join('\n'));
  });

  it('orders lines by position, words by x, and spaces words by their gaps', () => {
    const runs: TextRun[] = [
      { text: 'second', x: 50, y: 112, width: 30, size: SIZE },
      { text: 'line', x: 85, y: 112, width: 20, size: SIZE },
      { text: 'first', x: 80, y: 100, width: 25, size: SIZE }, // drawn out of order
      { text: 'The', x: 50, y: 100, width: 18, size: SIZE },
      { text: 'Some', x: 50, y: 124, width: 25, size: SIZE },
      { text: 'thing', x: 75, y: 124, width: 25, size: SIZE }, // touching: one word
    ];
    expect(layoutPage(runs)).toBe('The first\nsecond line\nSomething');
  });

  it('keeps superscripts on their line', () => {
    const runs: TextRun[] = [
      { text: 'Andreas Gal', x: 50, y: 100, width: 55, size: 11 },
      { text: '∗', x: 105, y: 96, width: 4, size: 8 },
      { text: ', Brendan Eich', x: 110, y: 100, width: 65, size: 11 },
      { text: '+', x: 175, y: 96, width: 4, size: 8 },
    ];
    expect(layoutPage(runs)).toBe('Andreas Gal∗, Brendan Eich+');
  });

  it('separates paragraphs by a blank line at a vertical gap or an indented first line', () => {
    const runs = [
      ...column(['First paragraph runs over', 'two lines.'], 50, 100),
      ...column(['After a gap.'], 50, 100 + 2 * LEADING + 10),
      ...column(['Indented first line of a new', 'paragraph goes on here and', 'ends.'], 50, 100 + 3 * LEADING + 10),
    ];
    runs[runs.length - 3].x = 65; // the indent
    expect(layoutPage(runs)).toBe(
      'First paragraph runs over\ntwo lines.\n\nAfter a gap.\n\nIndented first line of a new\nparagraph goes on here and\nends.',
    );
  });

  it('joins words hyphenated at line ends when the next line starts lowercase', () => {
    const runs = column(['an inter-', 'national treaty between', 'Anglo-', 'Saxon states'], 50, 100);
    expect(layoutPage(runs)).toBe('an international\ntreaty between\nAnglo-\nSaxon states');
  });

  it('drops fake bold (a run drawn twice a hair apart)', () => {
    const runs: TextRun[] = [
      { text: 'Bold', x: 50, y: 100, width: 20, size: SIZE },
      { text: 'Bold', x: 50.3, y: 100, width: 20, size: SIZE },
      { text: 'text', x: 73, y: 100, width: 20, size: SIZE },
    ];
    expect(layoutPage(runs)).toBe('Bold text');
  });
});

describe('PDF text checks', () => {
  it('tells glyph garbage from text', () => {
    expect(isGarbage('\u0002\u0003\u0004\u0005\u0003\u0006 \u0004\u0007\b 1\u0002')).toBe(true);
    expect(isGarbage('/g18/g152/g3/g28/g150/g147')).toBe(true);
    expect(isGarbage('Ordinary words with a stray \u0002 symbol in a long sentence.')).toBe(false);
    expect(isGarbage('世界人権宣言')).toBe(false);
    expect(isGarbage('')).toBe(false);
  });

  it('combines spacing accents drawn before their letter', () => {
    expect(combineAccents('na¨ıve caf´e')).toBe('naïve café');
    expect(combineAccents('˜x0 and don´t')).toBe('x̃0 and don´t');
  });
});
