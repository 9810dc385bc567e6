// What a field is called in documents: words from the property name ("invoice_number",
// "invoiceNumber" -> invoice, number), its title and description, widened with synonyms
// ("author" -> by, written by, correspondence), and how well a label found in a text
// ("Received:", "Key Words", a table header) names the field.
import type { FieldSpec } from './schema.js';

/** The kind of value a field holds, from its type, format and name; it picks the parser. */
export type ValueKind = 'string' | 'number' | 'integer' | 'money' | 'percent' | 'date' | 'datetime' | 'time' | 'year' | 'boolean' | 'email' | 'url' | 'doi' | 'phone' | 'currency';

const STOPWORDS = new Set(
  'a an the of in on at to for from by with and or as is are was were be been this that these those it its which who whom whose what when where how any all each per if not no into onto than then there their them they he she his her our your my we you i me us also e.g i.e etc usually typically such'.split(' '),
);
// Words descriptions use about any field; they say nothing about which one.
const DESCRIPTION_NOISE = new Set('value field name document text found given one two string number written shown listed stated mentioned appears appear'.split(' '));

/** Lower-case word stems: "Received" -> receiv, "e-mail" -> email, "authors" -> author. */
export function stem(word: string): string {
  let w = word.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  w = w.replace(/^e-?mail$/, 'email').replace(/[^a-z0-9]/g, '');
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 4 && /(?:ss|us|is)$/.test(w)) return w;
  if (w.length > 3 && w.endsWith('es') && /(?:ch|sh|x|z)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s')) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ed')) return w.slice(0, -2).replace(/e$/, '');
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('e')) return w.slice(0, -1);
  return w;
}

/** Words of a name or phrase: snake_case, kebab-case, camelCase, digits and spaces split. */
export function words(text: string): string[] {
  return text
    .replace(/[Ee]-[Mm]ail/g, 'email')
    .replace(/([\p{Ll}\d])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

export function stems(text: string): string[] {
  return words(text)
    .map(stem)
    .filter((s) => s !== '');
}

function contentStems(text: string): string[] {
  return words(text)
    .filter((w) => !STOPWORDS.has(w.toLowerCase()) && !DESCRIPTION_NOISE.has(w.toLowerCase()))
    .map(stem)
    .filter((s) => s.length > 1);
}

// Groups of words that name the same thing in documents. A field word in a group brings the
// whole group (as stems and as phrases).
const SYNONYM_GROUPS: string[][] = [
  ['title', 'heading', 'headline', 'name of the document', 'document title', 'paper title', 'article title'],
  ['author', 'authors', 'by', 'written by', 'writer', 'posted by', 'correspondence', 'corresponding author', 'byline', 'creator', 'contributor'],
  ['email', 'e-mail', 'mail', 'email address', 'contact email'],
  ['url', 'website', 'web site', 'homepage', 'home page', 'link', 'site', 'web', 'address on the web'],
  ['phone', 'telephone', 'tel', 'mobile', 'cell', 'fax', 'phone number'],
  ['date', 'dated', 'day'],
  ['published', 'publication date', 'publish', 'posted', 'released', 'issued', 'date of publication'],
  ['received', 'submitted', 'submission'],
  ['accepted', 'approved', 'acceptance'],
  ['expires', 'expiry', 'expiration', 'valid until', 'expiry date', 'due'],
  ['founded', 'established', 'formed', 'inception', 'created'],
  ['founder', 'founders', 'founded by', 'creator'],
  ['keywords', 'key words', 'keyword', 'tags', 'index terms', 'subjects', 'topics'],
  ['abstract', 'summary', 'synopsis', 'overview'],
  ['journal', 'publication', 'periodical', 'magazine', 'venue'],
  ['volume', 'vol'],
  ['issue', 'no', 'number', 'iss'],
  ['pages', 'page', 'pp', 'page range'],
  ['doi', 'digital object identifier'],
  ['company', 'organization', 'organisation', 'employer', 'firm', 'corporation', 'business'],
  ['affiliation', 'institution', 'university', 'department', 'school', 'institute'],
  ['address', 'location', 'street', 'city', 'postal address'],
  ['customer', 'client', 'bill to', 'billed to', 'buyer', 'purchaser', 'sold to', 'recipient', 'ship to'],
  ['vendor', 'supplier', 'seller', 'merchant', 'issuer', 'sold by', 'from'],
  ['birth', 'born', 'date of birth', 'dob', 'birthday'],
  ['country', 'nation', 'state'],
  ['capital', 'capital city'],
  ['language', 'languages', 'official language', 'tongue'],
  ['population', 'inhabitants', 'people', 'residents'],
  ['area', 'size', 'surface', 'km2'],
  ['total', 'amount', 'sum', 'grand total', 'balance due', 'amount due', 'total due'],
  ['price', 'cost', 'fee', 'charge', 'rate', 'unit price'],
  ['quantity', 'qty', 'count', 'units'],
  ['invoice', 'bill', 'receipt'],
  ['identifier', 'id', 'number', 'no', 'reference', 'ref', 'code'],
  ['status', 'state', 'intended status', 'stage'],
  ['industry', 'sector', 'field'],
  ['product', 'products', 'item', 'goods'],
  ['year', 'yr'],
  ['version', 'release', 'revision', 'draft'],
  ['game', 'sport'],
  ['screen', 'gui', 'window', 'dialog', 'view'],
];

const GROUPS_BY_STEM = new Map<string, string[][]>();
for (const group of SYNONYM_GROUPS) {
  for (const phrase of group) {
    const key = stems(phrase).join(' ');
    if (key === '') continue;
    const list = GROUPS_BY_STEM.get(key) ?? [];
    list.push(group);
    GROUPS_BY_STEM.set(key, list);
  }
}

/** Words of a name that say what kind of value it is, rather than which one. */
const KIND_WORDS: Partial<Record<ValueKind, string[]>> = {
  email: ['email', 'mail', 'address', 'contact'],
  url: ['url', 'uri', 'link', 'website', 'site', 'homepage', 'web', 'address'],
  date: ['date', 'day', 'dated'],
  datetime: ['date', 'time', 'datetime', 'timestamp', 'at'],
  time: ['time'],
  year: ['year', 'yr'],
  money: ['amount', 'price', 'cost', 'total', 'sum', 'fee', 'usd', 'eur', 'value'],
  phone: ['phone', 'number', 'telephone', 'tel'],
  doi: ['doi'],
  number: ['number', 'count', 'amount', 'value'],
  integer: ['number', 'count'],
  percent: ['percent', 'percentage', 'rate', 'share'],
};

/** One word of a field's vocabulary: its stem, the synonyms that stand for it, and its weight. */
interface Concept {
  stem: string;
  alternatives: Set<string>;
  /** Phrases of several words that also stand for it ("written by"). */
  phrases: string[][];
  /** Taken from the description because the name only says what kind of value it is ("email"). */
  fromDescription: boolean;
}

export interface FieldVocabulary {
  /** What the property name says (each must be matched for a full score). */
  concepts: Concept[];
  /** Description words (partial evidence). */
  description: Set<string>;
  /** Stems that only name the kind of value ("date" in "received_date"). */
  kindWords: Set<string>;
  /** Whole labels that name the field exactly (the humanised name and title). */
  exact: Set<string>;
  kind: ValueKind;
}

function concept(word: string, fromDescription = false): Concept {
  const s = stem(word);
  const alternatives = new Set([s]);
  const phrases: string[][] = [];
  for (const group of GROUPS_BY_STEM.get(s) ?? []) {
    for (const phrase of group) {
      const ps = stems(phrase);
      if (ps.length === 1) alternatives.add(ps[0]);
      else if (ps.length > 1) phrases.push(ps);
    }
  }
  return { stem: s, alternatives, phrases, fromDescription };
}

/** The kind of value a field holds, for choosing a parser. */
export function valueKind(field: FieldSpec): ValueKind {
  const spec = field.type === 'array' && field.items ? field.items : field;
  const name = new Set(stems(`${field.key} ${field.title ?? ''}`));
  const described = new Set(contentStems(field.description));
  const has = (...ws: string[]) => ws.some((w) => name.has(stem(w)));
  const says = (...ws: string[]) => ws.some((w) => name.has(stem(w)) || described.has(stem(w)));
  switch (spec.type) {
    case 'boolean':
      return 'boolean';
    case 'integer':
      if (has('year', 'yr')) return 'year';
      return 'integer';
    case 'number':
      if (has('percent', 'percentage', 'pct')) return 'percent';
      if (says('price', 'cost', 'amount', 'total', 'fee', 'salary', 'revenue', 'balance', 'subtotal', 'tax', 'money', 'paid', 'due', 'usd', 'eur', 'dollar', 'euro', 'currency', 'payment', 'budget', 'income', 'wage', 'wages')) return 'money';
      return 'number';
    case 'string':
      switch (spec.format) {
        case 'date':
          return 'date';
        case 'date-time':
          return 'datetime';
        case 'time':
          return 'time';
        case 'email':
          return 'email';
        case 'uri':
          return 'url';
      }
      if (has('email', 'mail')) return 'email';
      if (has('url', 'uri', 'website', 'homepage', 'link')) return 'url';
      if (has('doi')) return 'doi';
      if (has('phone', 'telephone', 'tel', 'fax', 'mobile')) return 'phone';
      if (has('currency')) return 'currency';
      if (has('date', 'dob', 'birthday')) return 'date';
      return 'string';
    default:
      return 'string';
  }
}

export function vocabulary(field: FieldSpec): FieldVocabulary {
  const kind = valueKind(field);
  const nameWords = [...new Set(words(`${field.key} ${field.title ?? ''}`).filter((w) => !STOPWORDS.has(w.toLowerCase()) || ['by', 'no'].includes(w.toLowerCase())))];
  const kindWords = new Set((KIND_WORDS[kind] ?? []).map(stem));
  const concepts = nameWords.map((w) => concept(w));
  if (concepts.every((c) => kindWords.has(c.stem))) {
    // "email" alone says nothing about whose: the description's words ("of the corresponding
    // author") tell this e-mail from the others.
    const described = [...new Set(words(field.description).filter((w) => !STOPWORDS.has(w.toLowerCase()) && !DESCRIPTION_NOISE.has(w.toLowerCase())))].filter((w) => stem(w).length > 1 && !kindWords.has(stem(w)));
    concepts.push(...described.slice(0, 4).map((w) => concept(w, true)));
  }
  const description = new Set(contentStems(field.description));
  for (const c of concepts) description.delete(c.stem);
  // A name that only says the kind ("email") is no exact label when the description says whose.
  const nameIsKind = concepts.some((c) => c.fromDescription);
  const exact = new Set(nameIsKind ? [] : [stems(field.key).join(' '), ...(field.title ? [stems(field.title).join(' ')] : [])]);
  // Quoted words in the description are labels the author expects in the text ("labelled 'Total due'").
  for (const m of field.description.matchAll(/["'“‘]([^"'”’]{1,40})["'”’]/g)) exact.add(stems(m[1]).join(' '));
  return { concepts, description, exact, kind, kindWords };
}

/** Equal stems, or one a prefix of the other when both are long ("correspond", "correspondenc"). */
function sameWord(token: string, alternatives: Set<string>): boolean {
  if (alternatives.has(token)) return true;
  if (token.length < 6) return false;
  for (const a of alternatives) {
    const [short, long] = a.length < token.length ? [a, token] : [token, a];
    if (short.length >= 6 && short.length >= 0.7 * long.length && long.startsWith(short)) return true;
  }
  return false;
}

function containsPhrase(tokens: string[], phrase: string[]): boolean {
  outer: for (let i = 0; i + phrase.length <= tokens.length; i++) {
    for (let j = 0; j < phrase.length; j++) if (tokens[i + j] !== phrase[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * How well a label from a text names the field, 0..1: 1 when it is the field's name or every
 * word of the name (or a synonym) is there; partial for some of them or description words;
 * words that only name the kind of value ("E-mail" for any e-mail field) count for little.
 */
export function labelScore(label: string, vocab: FieldVocabulary): number {
  const tokens = stems(label);
  if (tokens.length === 0 || tokens.length > 10) return 0;
  const joined = tokens.join(' ');
  if (vocab.exact.has(joined)) return 1;
  const kindWords = vocab.kindWords;
  const distinctive = vocab.concepts.filter((c) => !kindWords.has(c.stem));
  const matched = (c: Concept) => tokens.some((t) => sameWord(t, c.alternatives)) || c.phrases.some((p) => containsPhrase(tokens, p));
  const used = new Set<string>();
  for (const c of vocab.concepts) {
    if (!matched(c)) continue;
    for (const t of tokens) if (sameWord(t, c.alternatives)) used.add(t);
    for (const p of c.phrases) if (containsPhrase(tokens, p)) p.forEach((t) => used.add(t));
  }
  let score: number;
  if (distinctive.length > 0) {
    const hits = distinctive.filter(matched).length;
    // Description words are many and loosely chosen: two of them are as good as all.
    const needed = distinctive.every((c) => c.fromDescription) ? Math.min(2, distinctive.length) : distinctive.length;
    score = Math.min(1, hits / needed);
    // The kind words alone ("Date:" for "received_date") say only what kind of value follows.
    if (hits === 0 && vocab.concepts.some((c) => kindWords.has(c.stem) && matched(c))) score = 0.3;
  } else {
    score = vocab.concepts.length > 0 && vocab.concepts.some(matched) ? 1 : 0;
  }
  if (score === 0) {
    const described = tokens.filter((t) => vocab.description.has(t)).length;
    const meaningful = tokens.filter((t) => !STOPWORDS.has(t)).length;
    if (described > 0) score = 0.45 * (described / Math.max(1, meaningful));
    tokens.filter((t) => vocab.description.has(t)).forEach((t) => used.add(t));
  }
  if (score === 0) return 0;
  // Matched only through a function word ("by" for author) among other words: "by the market".
  if ([...used].every((t) => STOPWORDS.has(t)) && tokens.some((t) => !used.has(t))) return 0;
  // Labels with many words the field does not know are about something else.
  const unknown = tokens.filter((t) => !used.has(t) && !STOPWORDS.has(t)).length;
  return score * Math.max(0.2, 1 - 0.25 * unknown);
}
