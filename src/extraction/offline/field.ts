// A schema property as the offline extractor sees it (its vocabulary, value kind and cues for
// long text, titles, people and organisations), a scored value found for it, and how a piece
// of text becomes its value: parsed to the property's type and checked against its schema.
import { stem, valueKind, vocabulary, words, type FieldVocabulary, type ValueKind } from '../labels.js';
import { fitsField, type FieldSpec } from '../schema.js';
import {
  findDois,
  findEmails,
  findPercents,
  findPhones,
  findYears,
  parseBoolean,
  parseCurrency,
  parseDate,
  parseDateTime,
  parseInteger,
  parseMoney,
  parseNumber,
  parseTime,
  parseUrl,
} from '../values.js';

export type ExtractedRecord = Record<string, unknown>;

/** Scores below this are not taken: better no value than a guess. */
export const MIN_SCORE = 0.3;

export interface Candidate {
  value: unknown;
  score: number;
  /** Line index, for ties: earlier wins. */
  at: number;
}

export interface Field {
  spec: FieldSpec;
  vocab: FieldVocabulary;
  kind: ValueKind;
  longText: boolean;
  titleLike: boolean;
  personLike: boolean;
  organisationLike: boolean;
}

const LONG_TEXT = new Set(['abstract', 'summary', 'synopsi', 'overview', 'description', 'text', 'body', 'content', 'excerpt', 'conclusion', 'introduction', 'aim', 'purpose'].map(stem));
const TITLE_WORDS = new Set(['title', 'headline', 'heading'].map(stem));
const ORGANISATION_WORDS = new Set(['company', 'vendor', 'supplier', 'seller', 'merchant', 'organization', 'organisation', 'employer', 'firm', 'business', 'publisher', 'manufacturer', 'issuer', 'corporation'].map(stem));
const PERSON_WORDS = new Set(['author', 'writer', 'creator', 'byline', 'editor', 'person', 'contact', 'correspondence', 'corresponding', 'owner', 'signatory', 'poster'].map(stem));

export function fieldOf(spec: FieldSpec, context: string[] = []): Field {
  // Nested properties are named in their parent's words too: author.email is "author email".
  const named: FieldSpec = context.length > 0 ? { ...spec, key: `${context.join(' ')} ${spec.key}` } : spec;
  const vocab = vocabulary(named);
  const nameStems = new Set(words(`${named.key} ${spec.title ?? ''}`).map(stem));
  const kind = valueKind(spec);
  return {
    spec,
    vocab,
    kind,
    longText: [...nameStems].some((s) => LONG_TEXT.has(s)),
    titleLike: kind === 'string' && [...nameStems].some((s) => TITLE_WORDS.has(s)),
    personLike: kind === 'string' && [...nameStems].some((s) => PERSON_WORDS.has(s)) && !nameStems.has('email'),
    organisationLike: kind === 'string' && [...nameStems].some((s) => ORGANISATION_WORDS.has(s)),
  };
}


function cleanText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/^[\s\-–—:;,.•·*]+|[\s,;:–—-]+$/gu, '')
    .trim();
}

export function matchEnum(text: string, options: unknown[]): unknown {
  const lower = text.toLowerCase().trim();
  const strings = options.filter((o): o is string => typeof o === 'string');
  const exact = strings.find((o) => o.toLowerCase() === lower);
  if (exact !== undefined) return exact;
  // The longest option named in the text as whole words ("Married filing jointly" in a sentence).
  const named = strings
    .filter((o) => new RegExp(`(?<![\\p{L}\\p{N}])${o.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'iu').test(text))
    .sort((a, b) => b.length - a.length);
  return named[0];
}

/** One value of a scalar kind read from a piece of text, or null. */
function readScalar(text: string, spec: FieldSpec, kind: ValueKind): unknown {
  if (spec.enum && spec.type === 'string') return matchEnum(text, spec.enum) ?? null;
  switch (kind) {
    case 'string': {
      const value = cleanText(text);
      return value === '' || value.length > 2000 ? null : value;
    }
    case 'number':
      return parseNumber(text);
    case 'integer':
      return parseInteger(text);
    case 'money':
      return spec.type === 'integer' ? parseInteger(text) : parseMoney(text);
    case 'percent':
      return findPercents(text)[0]?.value ?? parseNumber(text);
    case 'year':
      return findYears(text)[0]?.value ?? null;
    case 'date':
      return parseDate(text);
    case 'datetime':
      return parseDateTime(text);
    case 'time':
      return parseTime(text);
    case 'boolean':
      return parseBoolean(text);
    case 'email':
      return findEmails(text)[0]?.value ?? null;
    case 'url':
      return parseUrl(text, { bareDomains: true });
    case 'doi':
      return findDois(text)[0]?.value ?? null;
    case 'phone':
      return findPhones(text)[0]?.value ?? null;
    case 'currency':
      return parseCurrency(text);
  }
}

export function stripMarkers(name: string): string {
  return name.replace(/[∗*†‡§¶#$+\d⁰¹²³⁴⁵⁶⁷⁸⁹]+(?=\s|,|$)/gu, '').trim();
}

/** A value for the field from a piece of text, parsed and checked, or null. */
export function convert(text: string, field: Field): unknown {
  const spec = field.spec;
  if (spec.type === 'array') {
    const item = spec.items;
    if (!item || item.type === 'object' || item.type === 'array') return null;
    const itemKind = valueKind({ ...item, key: spec.key, title: spec.title, description: spec.description });
    const parts = text
      .split(/\s*[;•·|]\s*|,\s+|\s+and\s+|\s*,\s*(?=\p{Lu})/u)
      .map((p) => (field.personLike || PERSON_WORDS.has(stem(spec.key)) ? stripMarkers(p) : p))
      .filter((p) => p.trim() !== '');
    const values: unknown[] = [];
    for (const part of parts) {
      const value = readScalar(part, item, itemKind);
      if (value !== null && value !== undefined && !values.some((v) => JSON.stringify(v) === JSON.stringify(value)) && fitsField(item, value)) values.push(value);
    }
    return values.length > 0 && fitsField(spec, values) ? values : null;
  }
  let value = readScalar(text, spec, field.kind);
  if (typeof value === 'string' && field.personLike) value = stripMarkers(value) || null;
  if (value === null || value === undefined) return null;
  return fitsField(spec, value) ? value : null;
}
