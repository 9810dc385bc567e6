// Whether the service may compute this engine's tsvectors itself (text/english-tsvector.ts), and
// with which lexemes: checked once per store against the engine's stemmer and parser.
import type { Kysely } from 'kysely';
import { isTsvectorOf } from '../store/pages.js';
import type { Engine } from '../store/engine.js';
import type { Database } from '../store/schema.js';
import type { EnglishRules } from '../text/english-lexeme.js';
import { cachedEnglishLexeme, pageTsvector, type WordLexeme } from '../text/english-tsvector.js';
import { engineEnglishRules } from './query-terms.js';

/** Text with each construct pageTsvector covers, in the forms the parser tells apart. */
export const PROBE_TEXT =
  'The well-known keepers’ “state-of-the-art” lighthouses—said--rightly: 45.3% of 1,000 (3rd, abc123) x_y … Wait... why?\n\tEnd.';

/**
 * The stemmer's rules with which pageTsvector computes this engine's tsvectors, once the engine's
 * stemmer follows english-lexeme.ts and its parser reads PROBE_TEXT as pageTsvector does; null
 * otherwise (another stemmer version, configuration or database encoding: the engine computes
 * them all). A plain object, which a parser thread is sent.
 */
export async function engineTsvectorRules(db: Kysely<Database>): Promise<EnglishRules | null> {
  const rules = await engineEnglishRules(db);
  if (!rules) return null;
  const tsv = pageTsvector(PROBE_TEXT, cachedEnglishLexeme(rules));
  return tsv !== null && (await isTsvectorOf(db, PROBE_TEXT, tsv)) ? rules : null;
}

/** The word lexemes pageTsvector needs on this engine (engineTsvectorRules), or null. */
export async function enginePageLexemes(db: Kysely<Database>): Promise<WordLexeme | null> {
  const rules = await engineTsvectorRules(db);
  return rules ? cachedEnglishLexeme(rules) : null;
}

/**
 * engineTsvectorRules for the store `db` belongs to, checked once for every writer of pages
 * there (and again after a check that failed to run).
 */
export function storeTsvectorRules(db: Kysely<Database>): Promise<EnglishRules | null> {
  let checked = storeRules.get(db);
  if (!checked) {
    checked = engineTsvectorRules(db).catch(() => {
      // Asked again by the next writer; this one leaves its tsvectors to the database.
      storeRules.delete(db);
      return null;
    });
    storeRules.set(db, checked);
  }
  return checked;
}

const storeRules = new WeakMap<Kysely<Database>, Promise<EnglishRules | null>>();
const storeLexemes = new WeakMap<Kysely<Database>, Promise<WordLexeme | null>>();

/**
 * The word lexemes with which the service computes, on the main thread, the tsvectors of the
 * ingested embeddings' pages, or null where the database computes them (a file's pages get theirs
 * on the parser thread, on both engines: storeTsvectorRules). On the embedded engine the
 * database's text parser would run on its one thread, which every statement shares
 * (storePageLexemes). On the server engine it runs in the backends, beside the service's own
 * thread: ingesting 20k one-page documents in batches took 380-417 documents/s computing them
 * here and 480-503 leaving them to the database. Sent in binary form they gained 4% at 50k
 * (bench/scale/README.md), but made the main thread, which searches under ingestion wait for, the
 * busiest one.
 */
export function pageLexemesFor(db: Kysely<Database>, engine: Engine): Promise<WordLexeme | null> {
  return engine === 'postgres' ? Promise.resolve(null) : storePageLexemes(db);
}

/** enginePageLexemes for the store `db` belongs to, from storeTsvectorRules. */
export function storePageLexemes(db: Kysely<Database>): Promise<WordLexeme | null> {
  let lexemes = storeLexemes.get(db);
  if (!lexemes) {
    lexemes = storeTsvectorRules(db).then((rules) => {
      if (!rules) storeLexemes.delete(db);
      return rules ? cachedEnglishLexeme(rules) : null;
    });
    storeLexemes.set(db, lexemes);
  }
  return lexemes;
}
