// What PostgreSQL's `english` text search configuration makes of one lower-case ASCII word:
// the default parser reads it as one `asciiword`, which goes to the `english_stem` Snowball
// dictionary: no lexeme for a word of its stop list, else the Snowball English (Porter2) stem.
// Written after snowballstem.org's english.sbl as PostgreSQL ships it (Snowball 2.x); the one
// rule that differs between the versions in PostgreSQL 15 to 18 is a choice (EnglishRules).

/** The stop words of PostgreSQL's english.stop list. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  ('i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers ' +
    'herself it its itself they them their theirs themselves what which who whom this that these those am is ' +
    'are was were be been being have has had having do does did doing a an the and but if or because as until ' +
    'while of at by for with about against between into through during before after above below to from up ' +
    'down in out on off over under again further then once here there when where why how all any both each few ' +
    'more most other some such no nor not only own same so than too very s t can will just don should now').split(' '),
);

/** Words the stemmer maps as a whole, before any rule (some to themselves). */
const EXCEPTIONS = new Map([
  ['skis', 'ski'], ['skies', 'sky'], ['dying', 'die'], ['lying', 'lie'], ['tying', 'tie'],
  ['idly', 'idl'], ['gently', 'gentl'], ['ugly', 'ugli'], ['early', 'earli'], ['only', 'onli'], ['singly', 'singl'],
  ['sky', 'sky'], ['news', 'news'], ['howe', 'howe'], ['atlas', 'atlas'], ['cosmos', 'cosmos'], ['bias', 'bias'], ['andes', 'andes'],
]);

/** Words left as they are after step 1a (so "innings" gives "inning"). */
const KEPT_AFTER_1A = new Set(['inning', 'outing', 'canning', 'herring', 'earring', 'proceed', 'exceed', 'succeed']);

/** Prefixes whose end is taken as the start of R1, where the usual rule would put it too early. */
const R1_PREFIX = /^(gener|commun|arsen)/;

// `y` is a vowel; a `y` the prelude marked as a consonant is written `Y` until the end.
const isVowel = (c: string | undefined) => c !== undefined && 'aeiouy'.includes(c);

/** The index just past the first non-vowel that follows a vowel at or after `from`, or the word's length. */
function afterVowelConsonant(w: string, from: number): number {
  let i = from;
  while (i < w.length && !isVowel(w[i])) i++;
  while (i < w.length && isVowel(w[i])) i++;
  return Math.min(i + 1, w.length);
}

/** Whether the word ends in a short syllable: non-vowel, vowel, non-vowel other than w, x, Y; or is vowel, non-vowel. */
function endsShort(w: string): boolean {
  const n = w.length;
  if (n === 2) return isVowel(w[0]) && !isVowel(w[1]);
  return n > 2 && !isVowel(w[n - 3]) && isVowel(w[n - 2]) && !isVowel(w[n - 1]) && !'wxY'.includes(w[n - 1]);
}

interface Regions {
  r1: number;
  r2: number;
}

/** A suffix, its replacement, and what else the part before it must satisfy. */
type Rule = [suffix: string, replacement: string, when?: (stem: string, regions: Regions) => boolean];

/**
 * Applies the rule of the longest suffix the word ends with, when that suffix lies in the
 * region starting at `start`. A failing longest rule leaves the word alone: Snowball's
 * `among` does not fall back to a shorter suffix.
 */
function step(w: string, rules: readonly Rule[], start: keyof Regions, regions: Regions): string {
  let best: Rule | undefined;
  for (const rule of rules) if (w.endsWith(rule[0]) && (!best || rule[0].length > best[0].length)) best = rule;
  if (!best) return w;
  const [suffix, replacement, when] = best;
  const stem = w.slice(0, w.length - suffix.length);
  return stem.length >= regions[start] && (when?.(stem, regions) ?? true) ? stem + replacement : w;
}

const STEP_2: readonly Rule[] = [
  ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['abli', 'able'], ['entli', 'ent'],
  ['izer', 'ize'], ['ization', 'ize'], ['ational', 'ate'], ['ation', 'ate'], ['ator', 'ate'],
  ['alism', 'al'], ['aliti', 'al'], ['alli', 'al'], ['fulness', 'ful'], ['ousli', 'ous'], ['ousness', 'ous'],
  ['iveness', 'ive'], ['iviti', 'ive'], ['biliti', 'ble'], ['bli', 'ble'], ['fulli', 'ful'], ['lessli', 'less'],
  ['ogi', 'og', (stem) => stem.endsWith('l')],
  ['li', '', (stem) => /[cdeghkmnrt]$/.test(stem)],
];

const STEP_3: readonly Rule[] = [
  ['tional', 'tion'], ['ational', 'ate'], ['alize', 'al'], ['icate', 'ic'], ['iciti', 'ic'], ['ical', 'ic'],
  ['ful', ''], ['ness', ''], ['ative', '', (stem, { r2 }) => stem.length >= r2],
];

const STEP_4: readonly Rule[] = [
  ...'al ance ence er ic able ible ant ement ment ent ism ate iti ous ive ize'.split(' ').map((suffix): Rule => [suffix, '']),
  ['ion', '', (stem) => /[st]$/.test(stem)],
];

/** Step 1a: plural and -ied endings. */
function step1a(w: string): string {
  if (w.endsWith('sses')) return w.slice(0, -2);
  // "cries" gives "cri" but "ties" "tie": i alone needs two letters before it.
  if (w.endsWith('ied') || w.endsWith('ies')) return w.slice(0, -3) + (w.length > 4 ? 'i' : 'ie');
  if (w.endsWith('us') || w.endsWith('ss') || !w.endsWith('s')) return w;
  // The letter just before the s does not count: "gas" stays, "gaps" loses its s.
  return [...w.slice(0, -2)].some(isVowel) ? w.slice(0, -1) : w;
}

/** Where Snowball versions that PostgreSQL ships differ. */
export interface EnglishRules {
  /**
   * A double consonant after a lone a, e or o stays ("added" gives "add"), as in Snowball since
   * October 2023 (PostgreSQL 18, so PGlite); before, it was undoubled ("ad", PostgreSQL 15).
   */
  keepsLoneVowelDouble: boolean;
}

const CURRENT_RULES: EnglishRules = { keepsLoneVowelDouble: true };

/** Step 1b: -eed, -ed, -ing and their -ly forms. */
function step1b(w: string, { r1 }: Regions, rules: EnglishRules): string {
  const suffix = ['eedly', 'ingly', 'edly', 'eed', 'ing', 'ed'].find((s) => w.endsWith(s)); // longest first
  if (!suffix) return w;
  const stem = w.slice(0, w.length - suffix.length);
  if (suffix.startsWith('ee')) return stem.length >= r1 ? stem + 'ee' : w;
  if (![...stem].some(isVowel)) return w;
  if (/(at|bl|iz)$/.test(stem)) return stem + 'e';
  if (/(bb|dd|ff|gg|mm|nn|pp|rr|tt)$/.test(stem)) {
    return rules.keepsLoneVowelDouble && /^[aeo].$/.test(stem.slice(0, -1)) ? stem : stem.slice(0, -1);
  }
  return stem.length === r1 && endsShort(stem) ? stem + 'e' : stem;
}

/** The lexeme PostgreSQL's `english` configuration makes of one lower-case ASCII word, or null for a stop word. */
export function englishLexeme(word: string, rules: EnglishRules = CURRENT_RULES): string | null {
  if (ENGLISH_STOP_WORDS.has(word)) return null;
  const exception = EXCEPTIONS.get(word);
  if (exception !== undefined) return exception;
  if (word.length < 3) return word;

  // A y at the start or after a vowel is a consonant.
  let w = '';
  for (const c of word) w += c === 'y' && (w === '' || isVowel(w.at(-1))) ? 'Y' : c;

  const prefix = R1_PREFIX.exec(w);
  const r1 = prefix ? prefix[0].length : afterVowelConsonant(w, 0);
  const regions = { r1, r2: afterVowelConsonant(w, r1) };

  w = step1a(w);
  if (!KEPT_AFTER_1A.has(w)) {
    w = step1b(w, regions, rules);
    // A final y after a non-vowel that is not the first letter becomes i.
    if (w.length > 2 && /[yY]$/.test(w) && !isVowel(w.at(-2))) w = w.slice(0, -1) + 'i';
    w = step(w, STEP_2, 'r1', regions);
    w = step(w, STEP_3, 'r1', regions);
    w = step(w, STEP_4, 'r2', regions);
    // Step 5: a final e goes unless it would leave a short word, a final ll loses an l in R2.
    const stem = w.slice(0, -1);
    if (w.endsWith('e') && (stem.length >= regions.r2 || (stem.length >= regions.r1 && !endsShort(stem)))) w = stem;
    else if (w.endsWith('ll') && stem.length >= regions.r2) w = stem;
  }
  return w.replaceAll('Y', 'y');
}
