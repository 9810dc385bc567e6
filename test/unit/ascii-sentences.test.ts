// asciiSentences gives exactly the segments Intl.Segmenter gives for ASCII text: on the corpus's
// prose and documentation, and on generated text that packs every class the rules tell apart
// (terminals, closing marks, spaces, line ends, continuations, letters of either case, digits)
// against each other, abbreviations and decimals included.
import { describe, expect, it } from 'vitest';
import { asciiSentences, isAsciiText } from '../../src/text/ascii-sentences.js';
import { corpusFile } from '../helpers/corpus.js';
import { seededRandom } from '../helpers/random.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
const icu = (text: string) => Array.from(segmenter.segment(text), (piece) => piece.segment);

const PIECES = [
  'a', 'b', 'x', 'Z', 'Q', 'The', ' the ', '1', '9', '3.5', '.', '.', '!', '?', '...', '"', "'", '(', ')', ']', '{', '}',
  ',', '-', ':', ';', ' ', ' ', '  ', '\t', '\n', '\r', '\r\n', '\f', '\v', '#', '/', '_', '&', '\u0000', '\u0007',
  'e.g.', 'Mr.', 'U.S.', 'etc.', 'a.b.c', '."', '.)', '!"', '?)', '. ', '.\n',
];

function expectSameSegments(texts: string[]): void {
  const differing = texts.filter((text) => JSON.stringify(asciiSentences(text)) !== JSON.stringify(icu(text)));
  const shown = differing.slice(0, 5).map((text) => `${JSON.stringify(text)}\n  mine: ${JSON.stringify(asciiSentences(text))}\n  ICU:  ${JSON.stringify(icu(text))}`);
  expect(differing.length, `${differing.length} of ${texts.length} texts differ:\n${shown.join('\n')}`).toBe(0);
}

describe('asciiSentences', () => {
  it('splits generated text where Intl.Segmenter does', () => {
    const next = seededRandom(29);
    const texts = Array.from({ length: 60_000 }, () => {
      let text = '';
      for (let k = 1 + Math.floor(next() * 30); k > 0; k--) text += PIECES[Math.floor(next() * PIECES.length)];
      return text;
    });
    expectSameSegments(texts);
  });

  it('splits the corpus’s ASCII text where Intl.Segmenter does', () => {
    const files = ['txt/alice-in-wonderland.txt', 'txt/pride-and-prejudice.txt', 'txt/terrier-document.txt', 'markdown/pandoc-MANUAL.md'];
    const pieces = files.flatMap((rel) => {
      const text = corpusFile(rel).toString('utf8');
      return Array.from({ length: Math.ceil(text.length / 1500) }, (_, i) => text.slice(i * 1500, (i + 1) * 1500));
    });
    const ascii = pieces.filter(isAsciiText);
    expect(ascii.length).toBeGreaterThan(pieces.length / 2);
    expectSameSegments(ascii);
  });

  it('takes only ASCII text', () => {
    expect(isAsciiText('Plain text. With \t\n\r\u0000 and ~.')).toBe(true);
    for (const text of ['café', 'a\u0085b', '“quoted”', 'end…', '😀']) expect(isAsciiText(text), text).toBe(false);
  });
});
