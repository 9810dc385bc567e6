// A plain query's terms read word by word (and from words already known) equal those
// PostgreSQL makes of the whole text, on both engines; other texts are asked whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { priorIdf } from '../../src/search/keyword-index.js';
import { QueryTermReader, plainWords } from '../../src/search/query-terms.js';
import { queryLexemes } from '../../src/store/pages.js';
import { ENGINES, openTestStore, type TestStore } from '../helpers/stores.js';

describe('plainWords', () => {
  it('takes ASCII words with sentence punctuation after them, lower-cased', () => {
    expect(plainWords('What is  the Boundary-free flow?')).toBeNull();
    expect(plainWords('What is the boundary layer flow?')).toEqual(['what', 'is', 'the', 'boundary', 'layer', 'flow']);
    expect(plainWords(' Heat, transfer; plates: Nozzles!? ... ')).toEqual(['heat', 'transfer', 'plates', 'nozzles']);
    expect(plainWords('')).toEqual([]);
  });

  it('refuses what the parser may read as something else than words', () => {
    for (const text of ['mach 3', 'abc123', "don't", 'e.g. this', 'a.b', 'x/y', 'café', 'a-b', '(wing)', '"lift"', 'user@example', 'a\u00a0b']) {
      expect(plainWords(text), text).toBeNull();
    }
    expect(plainWords(Array(65).fill('wing').join(' '))).toBeNull();
    expect(plainWords('w'.repeat(101))).toBeNull();
  });
});

const VOCABULARY = [
  'the', 'a', 'of', 'and', 'is', 'was', 'are', 'what', 'how', 'which', 'between', 'through', 'into',
  'running', 'runs', 'run', 'ran', 'runner', 'flows', 'flow', 'flowing', 'Flow', 'FLOWING', 'boundary', 'boundaries',
  'layers', 'layer', 'heat', 'heated', 'heating', 'transfer', 'transferred', 'pressure', 'pressures', 'nozzle', 'supersonic',
  'hypersonic', 'wings', 'wing', 'lift', 'drag', 'oscillating', 'theory', 'theoretical', 'experimentally', 'zzyzx', 'qwertyuiop',
  'analyses', 'analysis', 'studies', 'studied', 'agreed', 'agreement', 'generalizations', 'I', 'me', 'ourselves',
  'added', 'adding', 'egging', 'offed',
];
const PUNCTUATION = ['', '', '', ',', '.', '?', '!', ';', ':', '...', '?!'];

/** A seeded generator, so a failure names a text that can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

function texts(count: number): string[] {
  const next = random(7);
  const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)];
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(next() * 12) }, () => pick(VOCABULARY) + pick(PUNCTUATION)).join(pick([' ', '  ', '\n', '\t'])),
  );
}

describe.each(ENGINES)('query terms on %s', (engine) => {
  let store: TestStore;

  beforeAll(async () => {
    store = await openTestStore(engine);
  });
  afterAll(async () => {
    await store.close();
  });

  const whole = async (text: string) =>
    (await queryLexemes(store.db, text)).map((l) => ({ lexeme: l.lexeme, weight: l.count * priorIdf(l.lexeme, l.priorFrequency) }));

  it('equal the whole text’s lexemes, counts and weights, whether the words are new or known', async () => {
    const queries = texts(150);
    const warm = new QueryTermReader(store.db);
    for (const [i, text] of queries.entries()) {
      expect(plainWords(text), text).not.toBeNull();
      const expected = await whole(text);
      // A new reader reads the engine's lexicon first: one in five texts is read by one.
      if (i % 5 === 0) expect(await new QueryTermReader(store.db).read(text), text).toEqual(expected);
      expect(await warm.read(text), text).toEqual(expected);
    }
  });

  /** A reader on the store that counts the statements it runs. */
  function countingReader(lexemeOf?: (word: string) => string | null) {
    const counter = { statements: 0 };
    const db = store.db.withPlugin({
      transformQuery: (args) => {
        counter.statements++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    return { reader: new QueryTermReader(db, lexemeOf), counter };
  }

  it('reads new plain words with no statement once the engine agrees with the stemmer', async () => {
    const { reader, counter } = countingReader();
    await reader.read('wing');
    const before = counter.statements;
    for (const text of texts(40).map((t, i) => `${t} novelword${'x'.repeat(i % 5)}`)) {
      expect(await reader.read(text), text).toEqual(await whole(text));
    }
    expect(counter.statements).toBe(before);
  });

  it('asks the engine for the words when its stemmer disagrees with the one checked', async () => {
    const { reader, counter } = countingReader((word) => word);
    for (const text of texts(20)) expect(await reader.read(text), text).toEqual(await whole(text));
    expect(counter.statements).toBeGreaterThan(2);
  });

  it('asks for the whole text when it is not plain words', async () => {
    const reader = new QueryTermReader(store.db);
    for (const text of ['Mach 3 flow', "the wing's lift", 'heat-transfer rates', 'naïve théorie', 'see www.example.com/a']) {
      expect(await reader.read(text), text).toEqual(await whole(text));
    }
  });
});
