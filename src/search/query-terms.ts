// The query's lexemes as the pages' text configuration makes them, weighted qtf x idf, with
// as few statements as possible. PostgreSQL's parser takes a query of plain words (ASCII
// letters, separated by whitespace, with sentence punctuation after a word) one word at a
// time, and a word's lexeme does not depend on its neighbours: such a query's lexemes are
// those of its words. A word's lexeme comes from english-lexeme.ts, the configuration's
// stemmer rewritten here, once the engine has been seen to agree with it on words that
// exercise each of its rules (else from a statement, once per word), and its prior frequency
// from the prior held in memory: a query of plain words needs no statement at all. Any other
// text (digits, hyphens, apostrophes, non-ASCII letters, addresses) is asked whole, and kept
// by its text.
import type { Kysely } from 'kysely';
import { LruMap } from '../lru.js';
import type { Database } from '../store/schema.js';
import { queryLexemes, wordLexemes, wordPrior } from '../store/pages.js';
import { ENGLISH_STOP_WORDS, englishLexeme, type EnglishRules } from '../text/english-lexeme.js';
import { priorIdf, type QueryTerm } from './keyword-index.js';

/** Whole query texts whose terms are kept (the prior and the configuration never change). */
const TEXTS_CACHED = 1000;
/** Words whose lexeme is kept. */
const WORDS_CACHED = 50_000;
/**
 * Bounds of the word-by-word path: far below PostgreSQL's 255 positions kept per lexeme and
 * its 2,047-character words, so counting words gives what to_tsvector counts.
 */
const MAX_WORDS = 64;
const MAX_WORD_LENGTH = 100;

const PLAIN_TOKEN = /^[A-Za-z]*[.,;:!?]*$/;
/** A word english-lexeme.ts takes. */
const LOWER_WORD = /^[a-z]{1,100}$/;

/**
 * Words on which the engine's stemmer must agree with english-lexeme.ts before it is used:
 * the stop words and words through each step's rules, exceptions and regions.
 */
const PROBE_WORDS = [
  ...ENGLISH_STOP_WORDS,
  ...'skis skies dying lying tying idly gently ugly early only singly sky news howe atlas cosmos bias andes inning innings outing canning herring earring proceed exceed succeed'.split(' '),
  ...'generate generously communism communication arsenal arsenic past universe later emergency organ organization'.split(' '),
  ...'caresses ponies ties cries gas gaps kiwis us bus consolidated feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing luxuriated'.split(' '),
  ...'cry by say crying happy enjoy yes youth boyish sayings'.split(' '),
  ...'relational conditional valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti archaeology fully carelessly'.split(' '),
  ...'triplicate formative formalize electriciti electrical hopeful goodness'.split(' '),
  ...'revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou activate angulariti homologous effective bowdlerize'.split(' '),
  ...'probate rate cease controll roll generation dyed spied eyed reply replied'.split(' '),
  ...'add egg off inn bed sea ski added adding egging offed erred ebbing'.split(' '),
  // Stems that later Snowball versions change: an engine with one of them fails the check.
  ...'pasted geologist evening interest international'.split(' '),
];

/** The stemmer's rules as the engine follows them, and the prior by lexeme. */
interface Lexicon {
  rules: EnglishRules;
  prior: ReadonlyMap<string, number>;
}

type LexemeOf = (word: string, rules: EnglishRules) => string | null;

/**
 * The rules the engine's english stemmer follows, once its lexemes of the probe words are
 * `lexemeOf`'s under them; null when they differ (another stemmer version: keep to statements).
 */
export async function engineEnglishRules(db: Kysely<Database>, lexemeOf: LexemeOf = englishLexeme): Promise<EnglishRules | null> {
  const engine = new Map<string, string[]>(PROBE_WORDS.map((w) => [w, []]));
  for (const { word, lexeme } of await wordLexemes(db, [...engine.keys()])) if (lexeme !== null) engine.get(word)!.push(lexeme);
  const rules = { keepsLoneVowelDouble: engine.get('added')![0] === 'add' };
  const agrees = [...engine].every(([word, lexemes]) => {
    const mine = lexemeOf(word, rules);
    return mine === null ? lexemes.length === 0 : lexemes.length === 1 && lexemes[0] === mine;
  });
  return agrees ? rules : null;
}

/** The lower-cased words of a plain query, or null when the text is not one. */
export function plainWords(text: string): string[] | null {
  const tokens = text.split(/[ \t\n\r]+/).filter((t) => t.length > 0);
  if (tokens.length > MAX_WORDS || !tokens.every((t) => PLAIN_TOKEN.test(t))) return null;
  const words = tokens.map((t) => t.replace(/[.,;:!?]+$/, '').toLowerCase()).filter((w) => w.length > 0);
  return words.every((w) => w.length <= MAX_WORD_LENGTH) ? words : null;
}

interface Lexeme {
  lexeme: string;
  priorFrequency: number | null;
}

/** A word's one lexeme with its prior frequency, or null for a word that has none (a stop word). */
type Known = Lexeme | null;

/** What a word of one lexeme or none is kept as. */
const knownOf = (lexemes: Lexeme[]): Known => lexemes[0] ?? null;

export class QueryTermReader {
  private readonly texts = new LruMap<string, QueryTerm[]>(TEXTS_CACHED);
  private readonly words = new LruMap<string, Known>(WORDS_CACHED);
  /** Once the engine agrees with english-lexeme.ts; null when it does not. */
  private lexicon: Promise<Lexicon | null> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    /** The stemmer checked against the engine (tests give another to see it refused). */
    private readonly lexemeOf: LexemeOf = englishLexeme,
  ) {}

  /** Reads what the first query of plain words would otherwise wait for: the engine's rules and the prior. */
  async prepare(): Promise<void> {
    await this.readLexicon();
  }

  async read(text: string): Promise<QueryTerm[]> {
    const kept = this.texts.get(text);
    if (kept) return kept;
    const words = plainWords(text);
    const terms = (words && (await this.fromWords(words))) ?? (await this.fromText(text));
    this.texts.set(text, terms);
    return terms;
  }

  private async fromText(text: string): Promise<QueryTerm[]> {
    return (await queryLexemes(this.db, text)).map((l) => ({ lexeme: l.lexeme, weight: l.count * priorIdf(l.lexeme, l.priorFrequency) }));
  }

  /** The terms from the words' lexemes, or null when a word turns out to have several (then the text is asked whole). */
  private async fromWords(words: string[]): Promise<QueryTerm[] | null> {
    const resolved = new Map<string, Known>();
    for (const word of words) if (this.words.has(word)) resolved.set(word, this.words.get(word)!);
    const unknown = [...new Set(words.filter((w) => !resolved.has(w)))];
    if (unknown.length > 0) {
      const learned = await this.learn(unknown);
      if (!learned) return null;
      for (const [word, known] of learned) resolved.set(word, known);
    }
    const counts = new Map<string, { count: number; frequency: number | null }>();
    for (const word of words) {
      const known = resolved.get(word);
      if (!known) continue;
      const entry = counts.get(known.lexeme);
      if (entry) entry.count++;
      else counts.set(known.lexeme, { count: 1, frequency: known.priorFrequency });
    }
    // The order of the tsvector's lexemes, which is the order the whole-text statement returns.
    return [...counts]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([lexeme, { count, frequency }]) => ({ lexeme, weight: count * priorIdf(lexeme, frequency) }));
  }

  /** Each word's lexemes when taken alone (none for a stop word), one statement for the words not kept. */
  async lexemesOfWords(words: readonly string[]): Promise<Map<string, string[]>> {
    const lexemes = new Map<string, string[]>();
    const unknown: string[] = [];
    for (const word of new Set(words)) {
      if (this.words.has(word)) {
        const known = this.words.get(word);
        lexemes.set(word, known ? [known.lexeme] : []);
      } else {
        unknown.push(word);
      }
    }
    if (unknown.length > 0) {
      for (const [word, rows] of await this.ask(unknown)) lexemes.set(word, rows.map((r) => r.lexeme));
    }
    return lexemes;
  }

  /** Asks for the words' lexemes and keeps them; null when some word has more than one. */
  private async learn(words: string[]): Promise<Map<string, Known> | null> {
    const asked = await this.ask(words);
    if ([...asked.values()].some((rows) => rows.length > 1)) return null;
    return new Map([...asked].map(([word, rows]) => [word, knownOf(rows)]));
  }

  /**
   * Each word's lexemes with their prior frequencies, from one statement; keeps the words of
   * one lexeme or none, the form a query is built from.
   */
  private async ask(words: string[]): Promise<Map<string, Lexeme[]>> {
    const byWord = new Map<string, Lexeme[]>(words.map((w) => [w, []]));
    const lexicon = await this.readLexicon();
    const asked = lexicon ? words.filter((w) => !LOWER_WORD.test(w)) : words;
    if (lexicon) {
      for (const word of words) {
        const lexeme = LOWER_WORD.test(word) ? this.lexemeOf(word, lexicon.rules) : null;
        if (lexeme !== null) byWord.get(word)!.push({ lexeme, priorFrequency: lexicon.prior.get(lexeme) ?? null });
      }
    }
    if (asked.length > 0) {
      for (const { word, lexeme, priorFrequency } of await wordLexemes(this.db, asked)) {
        if (lexeme !== null) byWord.get(word)!.push({ lexeme, priorFrequency });
      }
    }
    for (const [word, rows] of byWord) if (rows.length <= 1) this.words.set(word, knownOf(rows));
    return byWord;
  }

  /**
   * The engine's rules and the prior in memory, once the engine's lexemes of the probe words
   * are english-lexeme.ts's under those rules (an engine with another stemmer version keeps to
   * statements); read once per process, and again after a failed read.
   */
  private readLexicon(): Promise<Lexicon | null> {
    this.lexicon ??= this.checkLexicon().catch(() => {
      this.lexicon = null;
      return null;
    });
    return this.lexicon;
  }

  private async checkLexicon(): Promise<Lexicon | null> {
    const rules = await engineEnglishRules(this.db, this.lexemeOf);
    return rules ? { rules, prior: await wordPrior(this.db) } : null;
  }
}
