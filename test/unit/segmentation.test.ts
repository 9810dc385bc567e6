import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { segmentPage, splitParagraphs, splitSentences } from '../../src/text/segmentation.js';
import { CORPUS_DOCS as CORPUS } from '../helpers/corpus.js';

const squash = (text: string) => text.replace(/\s+/g, '');

describe('splitParagraphs', () => {
  it('splits on blank lines, including whitespace-only ones, and trims', () => {
    expect(splitParagraphs('  First paragraph.\n\n\nSecond one.\n \t \nThird.\n\n')).toEqual([
      'First paragraph.',
      'Second one.',
      'Third.',
    ]);
  });

  it('returns nothing for empty or whitespace-only text', () => {
    expect(splitParagraphs('')).toEqual([]);
    expect(splitParagraphs(' \n\t\n  \r\n')).toEqual([]);
    expect(segmentPage('')).toEqual([]);
    expect(segmentPage('   \n\n  ')).toEqual([]);
  });

  it('normalises CRLF and CR line ends', () => {
    expect(splitParagraphs('One line\r\ncontinues here.\r\n\r\nTwo.\rThree.')).toEqual([
      'One line continues here.',
      'Two.\nThree.',
    ]);
  });

  it('joins hard-wrapped prose with a space', () => {
    const text =
      'It is a truth universally acknowledged, that a single man in possession\n' +
      'of a good fortune, must be in want of a wife. However little known the\n' +
      'feelings or views of such a man may be on his first entering a\n' +
      'neighbourhood, this truth is so well fixed.';
    expect(splitParagraphs(text)).toEqual([
      'It is a truth universally acknowledged, that a single man in possession of a good fortune, ' +
        'must be in want of a wife. However little known the feelings or views of such a man may be ' +
        'on his first entering a neighbourhood, this truth is so well fixed.',
    ]);
  });

  it('joins a word hyphenated across a line end without the hyphen', () => {
    expect(splitParagraphs('The inter-\nnational office and the well-\nknown Anglo-\nSaxon.')).toEqual([
      'The international office and the wellknown Anglo-\nSaxon.',
    ]);
  });

  it('keeps list items, headings and tables on their own lines', () => {
    expect(splitParagraphs('# Shopping\n- eggs\n- flour\n* milk\n• salt\n1. first\na) second')).toEqual([
      '# Shopping\n- eggs\n- flour\n* milk\n• salt\n1. first\na) second',
    ]);
    expect(splitParagraphs('| name | age |\n|------|-----|\n| ann  | 31  |')).toEqual([
      '| name | age |\n|------|-----|\n| ann  | 31  |',
    ]);
    expect(splitParagraphs('name\tage\nann\t31')).toEqual(['name\tage\nann\t31']);
  });

  it('joins a wrapped list item onto its continuation line', () => {
    expect(splitParagraphs('- a list item that is long enough to wrap onto\n  the next line\n- another')).toEqual([
      '- a list item that is long enough to wrap onto the next line\n- another',
    ]);
  });

  it('keeps short lines of an address or a poem', () => {
    expect(splitParagraphs('Jane Smith\n12 Main Street\nSpringfield, IL 62701')).toEqual([
      'Jane Smith\n12 Main Street\nSpringfield, IL 62701',
    ]);
    expect(splitParagraphs('Roses are red,\nViolets are blue,\nSugar is sweet,\nAnd so are you.')).toEqual([
      'Roses are red,\nViolets are blue,\nSugar is sweet,\nAnd so are you.',
    ]);
  });

  it('keeps the lines of fenced code', () => {
    expect(splitParagraphs('Run this:\n```sh\nnpm install\nnpm test\n```')).toEqual([
      'Run this:\n```sh\nnpm install\nnpm test\n```',
    ]);
  });

  it('splits paragraphs started by an indented line when there are no blank lines', () => {
    const text =
      '    It was a dark and stormy night; the rain fell in torrents, except at\n' +
      'occasional intervals, when it was checked by a violent gust of wind.\n' +
      '    The lamps struggled against the darkness. Nobody was out in the\n' +
      'streets that night.';
    expect(splitParagraphs(text)).toEqual([
      'It was a dark and stormy night; the rain fell in torrents, except at occasional intervals, ' +
        'when it was checked by a violent gust of wind.',
      'The lamps struggled against the darkness. Nobody was out in the streets that night.',
    ]);
  });

  it('splits one-paragraph-per-line text', () => {
    const first = 'This paragraph was written on one long line, as editors and exporters do. '.repeat(3).trim();
    const second = 'So was this one, which follows it directly without a blank line between them. '.repeat(3).trim();
    expect(splitParagraphs(`${first}\n${second}`)).toEqual([first, second]);
  });

  it('keeps a long paragraph without breaks whole', () => {
    const text = 'A sentence that goes on and on. '.repeat(200).trim();
    expect(text.length).toBeGreaterThan(4000);
    expect(splitParagraphs(text)).toEqual([text]);
  });
});

describe('splitSentences', () => {
  it('splits plain sentences and trims them', () => {
    expect(splitSentences('One. Two!  Three? Four')).toEqual(['One.', 'Two!', 'Three?', 'Four']);
  });

  it('does not split after titles', () => {
    expect(splitSentences('Dr. Watson met Mr. Holmes and Mrs. Hudson. Ms. Adler and Prof. Moriarty left.')).toEqual([
      'Dr. Watson met Mr. Holmes and Mrs. Hudson.',
      'Ms. Adler and Prof. Moriarty left.',
    ]);
    expect(splitSentences('He lived on St. James Street with Sam Jr. Davis.')).toEqual([
      'He lived on St. James Street with Sam Jr. Davis.',
    ]);
  });

  it('does not split after company suffixes unless a sentence starts', () => {
    expect(splitSentences('Acme Inc. Paris office opened. Shares of Acme Corp. The stock rose.')).toEqual([
      'Acme Inc. Paris office opened.',
      'Shares of Acme Corp.',
      'The stock rose.',
    ]);
    expect(splitSentences('Smith Bros. Ltd. Holdings and Jones Co. Limited merged.')).toEqual([
      'Smith Bros. Ltd. Holdings and Jones Co. Limited merged.',
    ]);
  });

  it('does not split after Latin and reference abbreviations', () => {
    expect(splitSentences('Use a tool, e.g. Grep or Awk, i.e. Unix ones, cf. Section two.')).toEqual([
      'Use a tool, e.g. Grep or Awk, i.e. Unix ones, cf. Section two.',
    ]);
    expect(splitSentences('Smith et al. Showed it. See Fig. 3 and Eq. 2 in Vol. 4, pp. 10-12, Sec. 5, Ch. 2.')).toEqual([
      'Smith et al. Showed it.',
      'See Fig. 3 and Eq. 2 in Vol. 4, pp. 10-12, Sec. 5, Ch. 2.',
    ]);
    expect(splitSentences('It was Smith vs. Jones. Then No. 5 and Art. 12 applied.')).toEqual([
      'It was Smith vs. Jones.',
      'Then No. 5 and Art. 12 applied.',
    ]);
    expect(splitSentences('He said No. Then he left.')).toEqual(['He said No.', 'Then he left.']);
  });

  it('merges after etc. only before a lowercase word', () => {
    expect(splitSentences('Apples, pears, etc. are fruit. We bought apples, pears, etc. Then we left.')).toEqual([
      'Apples, pears, etc. are fruit.',
      'We bought apples, pears, etc.',
      'Then we left.',
    ]);
  });

  it('does not split after abbreviated months and days', () => {
    expect(splitSentences('It opened on Jan. 5, 2020. It closed on Mon. Sept. 14 and Dec. 24.')).toEqual([
      'It opened on Jan. 5, 2020.',
      'It closed on Mon. Sept. 14 and Dec. 24.',
    ]);
  });

  it('does not split after initials', () => {
    expect(splitSentences('J. R. R. Tolkien wrote it. The U. S. Army came. John F. Kennedy spoke.')).toEqual([
      'J. R. R. Tolkien wrote it.',
      'The U. S. Army came.',
      'John F. Kennedy spoke.',
    ]);
  });

  it('never splits inside decimals, versions or U.S.', () => {
    expect(splitSentences('It costs $3.50 now. Version 1.2.3 is out. The U.S. Army arrived. He left the U.S. The end.')).toEqual([
      'It costs $3.50 now.',
      'Version 1.2.3 is out.',
      'The U.S. Army arrived.',
      'He left the U.S.',
      'The end.',
    ]);
  });

  it('keeps quotes and brackets with the sentence they close', () => {
    expect(splitSentences('He said "Stop." Then he left. (See above.) \'Well!\' thought Alice. Really?! Yes.')).toEqual([
      'He said "Stop."',
      'Then he left.',
      '(See above.)',
      "'Well!' thought Alice.",
      'Really?!',
      'Yes.',
    ]);
  });

  it('does not split inside code such as `!n`', () => {
    expect(splitSentences('Follow with `!n` to run it again. Done.')).toEqual(['Follow with `!n` to run it again.', 'Done.']);
  });

  it('handles Japanese, German and Arabic', () => {
    expect(splitSentences('これは日本語です。次の文です。(括弧の文)最後！')).toEqual([
      'これは日本語です。',
      '次の文です。',
      '(括弧の文)最後！',
    ]);
    expect(splitSentences('Das ist z. B. ein Test. Es ist kalt.')).toEqual(['Das ist z. B. ein Test.', 'Es ist kalt.']);
    expect(splitSentences('هذه جملة. وهذه جملة أخرى؟ نعم.')).toEqual(['هذه جملة.', 'وهذه جملة أخرى؟', 'نعم.']);
  });

  it('keeps a kept line break as a sentence break', () => {
    expect(splitSentences('Shopping:\n- eggs\n- Dr.\nWho')).toEqual(['Shopping:', '- eggs', '- Dr.', 'Who']);
  });

  it('segments a 1 MB paragraph quickly, losing no text', () => {
    const sentences = ['Mr. Smith paid $3.50 on Jan. 5.', 'It rained!', 'Did it?', 'Yes, e.g. Here and there.'];
    const expected: string[] = [];
    for (let length = 0; length < 1_000_000; length += expected[expected.length - 1].length + 1) {
      expected.push(sentences[expected.length % sentences.length]);
    }
    const text = expected.join(' ');
    const result = splitSentences(text);
    expect(result).toEqual(expected);
    expect(squash(result.join(''))).toBe(squash(text));
  });

  it('segments 1 MB without any sentence end, losing no text', () => {
    const text = 'word '.repeat(200_000);
    const result = splitSentences(text);
    expect(result).toEqual([text.trim()]);
  });
});

describe('segmentPage', () => {
  it('returns paragraphs with their sentences in order', () => {
    const page = 'Title\n\nDr. Who arrived. He\nleft soon.\n\n- one\n- two';
    expect(segmentPage(page)).toEqual([
      { content: 'Title', sentences: ['Title'] },
      { content: 'Dr. Who arrived. He left soon.', sentences: ['Dr. Who arrived.', 'He left soon.'] },
      { content: '- one\n- two', sentences: ['- one', '- two'] },
    ]);
  });

  it('segments a 1 MB single-paragraph page', () => {
    const text = 'The quick brown fox jumps over the lazy dog. Mr. Fox was quick. '.repeat(16_000);
    const [paragraph, ...rest] = segmentPage(text);
    expect(rest).toEqual([]);
    expect(paragraph.sentences.length).toBeGreaterThan(0);
    expect(paragraph.sentences.slice(0, 2)).toEqual(['The quick brown fox jumps over the lazy dog.', 'Mr. Fox was quick.']);
    expect(squash(paragraph.sentences.join(''))).toBe(squash(text));
  });
});

describe('corpus documents', () => {
  const files = ['txt', 'markdown'].flatMap((dir) =>
    fs.readdirSync(path.join(CORPUS, dir)).map((name) => path.join(CORPUS, dir, name)),
  );

  it.each(files)('%s segments into clean paragraphs and sentences', (file) => {
    const paragraphs = segmentPage(fs.readFileSync(file, 'utf8'));
    expect(paragraphs.length).toBeGreaterThan(0);
    for (const { content, sentences } of paragraphs) {
      expect(content).not.toBe('');
      expect(content).toBe(content.trim());
      expect(sentences.length).toBeGreaterThan(0);
      let from = 0;
      for (const sentence of sentences) {
        expect(sentence).not.toBe('');
        const at = content.indexOf(sentence, from);
        expect(at, sentence).toBeGreaterThanOrEqual(from);
        from = at + sentence.length;
      }
      // No sentence but a paragraph's last ends on a title on the same line as the next word.
      for (const sentence of sentences.slice(0, -1)) {
        expect(sentence, sentence).not.toMatch(/\b(?:Mr|Mrs|Dr|Ms|Prof)\.$/);
      }
    }
  });

  it('keeps the titles in Pride and Prejudice inside their sentences', () => {
    const text = fs.readFileSync(path.join(CORPUS, 'txt/pride-and-prejudice.txt'), 'utf8');
    const paragraphs = segmentPage(text);
    const opening = paragraphs.find((p) => p.content.startsWith('"My dear Mr. Bennet,"'));
    expect(opening).toEqual({
      content: '"My dear Mr. Bennet," said his lady to him one day, "have you heard that Netherfield Park is let at last?"',
      sentences: ['"My dear Mr. Bennet," said his lady to him one day, "have you heard that Netherfield Park is let at last?"'],
    });
    const mentions = paragraphs.flatMap((p) => p.sentences).filter((s) => s.includes('Mr. Bennet'));
    expect(mentions.length).toBeGreaterThan(50);
  });

  it('keeps the list items of the command-line guide on their own lines', () => {
    const text = fs.readFileSync(path.join(CORPUS, 'markdown/the-art-of-command-line.en.md'), 'utf8');
    const contents = new Set(segmentPage(text).map((p) => p.content));
    expect(contents).toContain('## Basics');
    expect([...contents].some((c) => c.startsWith('- [Meta](#meta)\n- [Basics](#basics)\n'))).toBe(true);
  });
});
