// The offline extractor: schema-guided, no model. Each field is looked for under its labels
// (the property name, title, description words and synonyms; see labels.ts) in label-value
// pairs and table headers, and by the shape of its type (dates, e-mail addresses, URLs,
// amounts, DOIs) near words that name it; titles and person names have their own cues.
// Every value is parsed to the schema's type and checked against the property's schema.
// For `multiple`, table rows become records (columns matched to properties by header, or
// by position and type when the table has no header), else repeated label-value blocks.
import { labelScore, stem, valueKind, vocabulary, words, type FieldVocabulary, type ValueKind } from './labels.js';
import { buildLayout, isHeadingLabel, segments, type Layout, type Line, type Pair, type PairSource, type Table } from './layout.js';
import { describeSchema, fitsField, type FieldSpec } from './schema.js';
import {
  findDates,
  findDateTimes,
  findDois,
  findEmails,
  findMoney,
  findPercents,
  findPhones,
  findTimes,
  findUrls,
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
  type Match,
} from './values.js';

export interface ExtractionInput {
  /** The document's text, one string per page. */
  pages: string[];
  /** A title known from the file or the document's metadata. */
  title?: string | null;
}

export type ExtractedRecord = Record<string, unknown>;

/** Scores below this are not taken: better no value than a guess. */
const MIN_SCORE = 0.3;

const SOURCE_WEIGHT: Record<PairSource, number> = { colon: 1, table: 0.95, citation: 0.9, prefix: 0.85, heading: 0.8 };

interface Candidate {
  value: unknown;
  score: number;
  /** Line index, for ties: earlier wins. */
  at: number;
}

interface Field {
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

function fieldOf(spec: FieldSpec, context: string[] = []): Field {
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

// ---------------------------------------------------------------------------------------------
// Values

function cleanText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/^[\s\-–—:;,.•·*]+|[\s,;:–—-]+$/gu, '')
    .trim();
}

function matchEnum(text: string, options: unknown[]): unknown {
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

function stripMarkers(name: string): string {
  return name.replace(/[∗*†‡§¶#$+\d⁰¹²³⁴⁵⁶⁷⁸⁹]+(?=\s|,|$)/gu, '').trim();
}

/** A value for the field from a piece of text, parsed and checked, or null. */
function convert(text: string, field: Field): unknown {
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

// ---------------------------------------------------------------------------------------------
// Cues for titles and people

const NAME_PARTICLES = new Set(['de', 'van', 'von', 'der', 'den', 'da', 'di', 'du', 'le', 'la', 'bin', 'al', 'del', 'dos', 'ter']);
const NOT_NAMES = new Set(
  'university school department institute faculty college abstract introduction table figure contents chapter section article original journal review company corporation inc ltd llc gmbh the and of for in on with to a an from by monday tuesday wednesday thursday friday saturday sunday street road avenue press edition page pages volume issue vol no received accepted published keywords key words doi email e-mail phone tel fax www http https summary conclusion references appendix draft internet standard status memo copyright notice document documents lorem ipsum'.split(
    ' ',
  ),
);
const MONTH_WORDS = new Set('january february march april may june july august september october november december'.split(' '));

/** "Satoshi Nakamoto", "Özcan SAYGIN", "Michiel B. de Jong": two to five capitalised name words. */
export function isPersonName(text: string): boolean {
  const tokens = stripMarkers(text).replace(/,$/, '').split(/\s+/).filter(Boolean);
  if (tokens.length < 2 || tokens.length > 5) return false;
  let capitalised = 0;
  for (const token of tokens) {
    const lower = token.toLowerCase();
    if (NOT_NAMES.has(lower) || MONTH_WORDS.has(lower)) return false;
    if (NAME_PARTICLES.has(token)) continue;
    if (/^\p{Lu}\.(\p{Lu}\.)*$/u.test(token)) continue;
    if (/^\p{Lu}[\p{Ll}'’-]+(?:-\p{Lu}[\p{Ll}'’]+)?$/u.test(token) || /^\p{Lu}{2,}$/u.test(token)) {
      capitalised++;
      continue;
    }
    return false;
  }
  return capitalised >= 2;
}

/** A line listing several people: "Andreas Gal, Brendan Eich, Mike Shaver". */
function personList(text: string): string[] | null {
  const parts = text
    .split(/\s*,\s*|\s+and\s+|\s*;\s*/)
    .map((p) => stripMarkers(p))
    .filter((p) => p !== '');
  return parts.length >= 2 && parts.every(isPersonName) ? parts : null;
}

const FUNCTION_WORDS = /\b(?:of|for|on|in|and|the|a|an|with|to|from|via|using|as|at|by|into|towards?)\b/;
const AFFILIATION = /\b(?:University|Universit[äéà]t?|Institute|School|Department|Faculty|College|Corporation|Laboratory|Laboratories|Inc\.?|Ltd\.?|GmbH|Hospital|Center|Centre)\b/;

/** How much a line (or a few joined lines) looks like a document title, 0..1. */
function titleLikeness(text: string): number {
  const tokens = text.split(/\s+/).filter(Boolean);
  const n = tokens.length;
  if (n === 0 || text.length > 250) return 0;
  if (/@|https?:\/\/|www\./i.test(text)) return 0.05;
  let score = 0.45;
  if (n >= 6 && n <= 25) score += 0.25;
  else if (n >= 3) score += 0.1;
  else score -= 0.2;
  const capitalised = tokens.filter((t) => /^\p{Lu}/u.test(t)).length / n;
  if (FUNCTION_WORDS.test(text) || capitalised >= 0.6) score += 0.15;
  if (isPersonName(text) || personList(text)) score -= 0.45;
  if (AFFILIATION.test(text)) score -= 0.35;
  const digits = (text.match(/\d/g) ?? []).length;
  if (digits / text.length > 0.15) score -= 0.35;
  // Abbreviations only ("Turk J Med Sci"), or one shouted label ("ORIGINAL ARTICLE").
  if (tokens.every((t) => t.replace(/\W/g, '').length <= 4)) score -= 0.3;
  if (/^[\p{Lu}\s\W]+$/u.test(text) && n <= 3) score -= 0.25;
  // A sentence of running text (dialogue too), or a label with its value.
  const bare = text.replace(/["'”’»)\]]+$/u, '');
  if (/[.!?]$/.test(bare) && n > 8) score -= 0.4;
  else if (/\p{Ll}{2}\.$/u.test(bare) && n >= 4) score -= 0.45;
  if (/^["“'‘].*["”'’]$/u.test(text)) score -= 0.4;
  if (((text.match(/,/g) ?? []).length >= 2 || /["“”]/.test(text) || /[?!]\s/.test(text)) && n > 6) score -= 0.3;
  if (/^[^:]{1,30}:\s*\d/.test(text)) score -= 0.4;
  if (/^(?:abstract|contents|introduction|table of contents|summary|key ?words?|results?|methods?|materials|aims?|objectives?|purpose|background|conclusions?|discussion|references)\b/i.test(text)) score -= 0.5;
  return Math.max(0, Math.min(1, score));
}

function titleCandidates(layout: Layout): Candidate[] {
  const out: Candidate[] = [];
  if (layout.title) out.push({ value: layout.title, score: 0.85, at: -1 });
  const firstPage = layout.lines.find((l) => l.text.trim() !== '')?.page ?? 0;
  const lines = layout.lines.filter((l) => l.page === firstPage && l.text.trim() !== '').slice(0, 40);
  // Runs of consecutive lines of one block (at most three, short), plus a following block
  // that starts in lower case (a title broken over a gap by the PDF layout).
  const blockSize = new Map<number, number>();
  const blockWidth = new Map<number, number>();
  for (const line of lines) {
    blockSize.set(line.block, (blockSize.get(line.block) ?? 0) + 1);
    blockWidth.set(line.block, Math.max(blockWidth.get(line.block) ?? 0, line.text.trim().length));
  }
  for (let i = 0; i < lines.length; i++) {
    let text = lines[i].text.trim();
    // Titles start a block of a few short lines, with a capital or a digit.
    if (text.length > 160 || tableLine(lines[i]) || !/^[\p{Lu}\p{N}"“'‘]/u.test(text) || (blockSize.get(lines[i].block) ?? 0) > 3 || (blockWidth.get(lines[i].block) ?? 0) > 110) continue;
    if (i > 0 && lines[i - 1].block === lines[i].block && !/[.:]$/.test(lines[i - 1].text.trim())) continue;
    const pieces = [text];
    for (let j = i + 1; j < lines.length && pieces.length < 3; j++) {
      const next = lines[j].text.trim();
      const sameBlock = lines[j].block === lines[j - 1].block;
      const continuation = /^\p{Ll}/u.test(next) && next.length < 120 && lines[j].block - lines[j - 1].block <= 1;
      if ((!sameBlock && !continuation) || next.length > 160 || isPersonName(next) || personList(next)) break;
      if (!continuation && !/\p{Ll}\s*$|[-–:,]$/u.test(pieces[pieces.length - 1])) break;
      pieces.push(next);
    }
    // The whole run is the candidate: a line that only starts a title (or a sentence) is none.
    text = pieces.join(' ');
    const likeness = titleLikeness(text);
    if (likeness > 0.3) out.push({ value: text, score: 0.8 * likeness * Math.max(0.6, 1 - 0.01 * i), at: lines[i].index });
  }
  return out;
}

const COMPANY = /\b(?:Ltd|Limited|Inc|Incorporated|LLC|LLP|GmbH|AG|SA|S\.A|SAS|SRL|BV|NV|Oy|AB|plc|PLC|Corp|Corporation|Co|Company|Group|Holdings)\b\.?/;

/** Lines near the top that name a company ("ACME Supplies Ltd."). */
function organisationCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  const lines = layout.lines.filter((l) => l.text.trim() !== '').slice(0, 15);
  lines.forEach((line, rank) => {
    for (const segment of segments(line.text)) {
      if (!COMPANY.test(segment) || segment.split(/\s+/).length > 8 || /[:@]/.test(segment)) continue;
      const value = convert(segment, field);
      if (value !== null) out.push({ value, score: 0.45 * Math.max(0.6, 1 - 0.03 * rank), at: line.index });
    }
  });
  return out;
}

function tableLine(line: Line): boolean {
  return /\t| \| /.test(line.text);
}

function personCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  const firstPage = layout.lines.find((l) => l.text.trim() !== '')?.page ?? 0;
  const lines = layout.lines.filter((l) => l.page === firstPage && l.text.trim() !== '').slice(0, 30);
  lines.forEach((line, rank) => {
    for (const segment of segments(line.text)) {
      let list = personList(segment);
      if (list) {
        // An author list wrapped over lines of one block: "A, B,\nC, D".
        for (let j = rank + 1; j < lines.length && lines[j].block === line.block; j++) {
          const more = personList(lines[j].text) ?? (isPersonName(lines[j].text) ? [stripMarkers(lines[j].text)] : null);
          if (!more) break;
          list = [...list, ...more];
        }
      }
      const text = list ? list.join(', ') : isPersonName(segment) ? stripMarkers(segment) : null;
      if (!text) continue;
      const value = convert(text, field);
      if (value !== null) out.push({ value, score: 0.5 * Math.max(0.5, 1 - 0.02 * rank), at: line.index });
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Candidates for one field

function pairCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  const total = Math.max(1, layout.lines.length);
  for (const pair of layout.pairs) {
    const label = labelScore(pair.label, field.vocab);
    if (label < MIN_SCORE) continue;
    let weight = SOURCE_WEIGHT[pair.source];
    let text = pair.value;
    if (field.longText && pair.long) text = pair.long;
    // A heading's next line is its value only for short values; running text is not a name.
    if (field.personLike && !isPersonName(pair.value) && !personList(pair.value)) weight *= pair.source === 'heading' ? 0.5 : 0.7;
    const value = convert(text, field);
    if (value === null) continue;
    // Document-level facts sit near the start: later pairs lose a little.
    out.push({ value, score: label * weight * (1 - 0.1 * (pair.line.index / total)), at: pair.line.index });
  }
  return out;
}

function typedMatches(text: string, kind: ValueKind): Match<unknown>[] {
  switch (kind) {
    case 'email':
      return findEmails(text);
    case 'url':
      return findUrls(text);
    case 'date':
      return findDates(text);
    case 'datetime':
      return findDateTimes(text);
    case 'time':
      return findTimes(text).map((m) => ({ ...m, value: m.value.time }));
    case 'doi':
      return findDois(text);
    case 'phone':
      return findPhones(text);
    case 'money':
      return findMoney(text)
        .filter((m) => m.value.currency !== null)
        .map((m) => ({ ...m, value: m.value.amount }));
    case 'percent':
      return findPercents(text);
    case 'year':
      return findYears(text);
    default:
      return [];
  }
}

/** How well the words around a match name the field: its segment's label, nearby words, headings above. */
function contextScore(layout: Layout, line: Line, start: number, field: Field): number {
  const before = line.text.slice(0, start);
  const segment = segments(before).pop() ?? '';
  const tokens = segment.replace(/[:：]\s*$/, '').split(/\s+/).filter(Boolean);
  let best = 0;
  const consider = (label: string, weight: number) => {
    if (label.trim() !== '') best = Math.max(best, labelScore(label, field.vocab) * weight);
  };
  consider(segment.replace(/[:：]\s*$/, ''), 1);
  consider(tokens.slice(0, 4).join(' '), 0.9);
  consider(tokens.slice(-4).join(' '), 0.9);
  // Headings up to eight lines above on the same page ("Correspondence" over an address).
  let distance = 0;
  for (let i = line.index - 1; i >= 0 && distance < 8; i--) {
    const above = layout.lines[i];
    if (above.page !== line.page) break;
    if (above.text.trim() === '') continue;
    distance++;
    if (isHeadingLabel(above.text)) consider(above.text.trim(), 0.9 ** distance);
  }
  return best;
}

function typedCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  const total = Math.max(1, layout.lines.length);
  // With a name that only says the kind ("email"), any value of the kind will do; with a
  // distinctive one ("received_date"), the words around must name it.
  // (words from the description are weaker evidence than the name: the bar is lower).
  const distinctive = field.vocab.concepts.filter((c) => !field.vocab.kindWords.has(c.stem));
  const base = distinctive.length === 0 ? 0.4 : distinctive.every((c) => c.fromDescription) ? 0.3 : 0.15;
  for (const line of layout.lines) {
    if (line.text.trim() === '') continue;
    for (const match of typedMatches(line.text, field.kind)) {
      const value = field.spec.type === 'array' ? [match.value] : match.value;
      if (!fitsField(field.spec, value)) continue;
      const context = contextScore(layout, line, match.start, field);
      out.push({ value, score: base + 0.55 * context + 0.05 * (1 - line.index / total), at: line.index });
    }
  }
  return out;
}

function enumCandidates(layout: Layout, field: Field): Candidate[] {
  const options = field.spec.enum?.filter((o): o is string => typeof o === 'string') ?? [];
  if (options.length === 0) return [];
  const out: Candidate[] = [];
  for (const line of layout.lines) {
    const value = matchEnum(line.text, options);
    if (value === undefined) continue;
    const at = line.text.toLowerCase().indexOf(String(value).toLowerCase());
    out.push({ value, score: 0.2 + 0.55 * contextScore(layout, line, Math.max(0, at), field), at: line.index });
  }
  return out;
}

/** Check boxes next to the label: "☑ Member", "[x] Paid". */
function checkboxCandidates(layout: Layout, field: Field): Candidate[] {
  const out: Candidate[] = [];
  for (const line of layout.lines) {
    const m = /^\s*(?<box>\[[ xX✓]\]|[☐☑☒✓✔])\s*(?<label>.+)$/u.exec(line.text);
    if (!m?.groups) continue;
    const score = labelScore(m.groups.label, field.vocab);
    if (score < MIN_SCORE) continue;
    out.push({ value: /[xX✓✔☑☒]/u.test(m.groups.box), score, at: line.index });
  }
  return out;
}

function best(candidates: Candidate[]): Candidate | null {
  let top: Candidate | null = null;
  for (const c of candidates) {
    if (c.score < MIN_SCORE) continue;
    if (!top || c.score > top.score + 1e-9 || (Math.abs(c.score - top.score) <= 1e-9 && c.at < top.at)) top = c;
  }
  return top;
}

function extractField(layout: Layout, field: Field, context: string[]): unknown {
  const spec = field.spec;
  if (spec.type === 'object') {
    const record = extractFields(layout, spec.properties, [...context, spec.key]);
    return Object.keys(record).length > 0 && fitsField(spec, record) ? record : undefined;
  }
  if (spec.type === 'array' && spec.items?.type === 'object') {
    const records = tableRecords(layout, spec.items.properties).records;
    return records.length > 0 && fitsField(spec, records) ? records : undefined;
  }
  const candidates = [...pairCandidates(layout, field)];
  if (spec.type === 'boolean') candidates.push(...checkboxCandidates(layout, field));
  else if (spec.enum) candidates.push(...enumCandidates(layout, field));
  else candidates.push(...typedCandidates(layout, field));
  if (field.titleLike) candidates.push(...titleCandidates(layout).map((c) => ({ ...c, value: convert(String(c.value), field) })).filter((c) => c.value !== null));
  if (field.personLike) candidates.push(...personCandidates(layout, field));
  if (field.organisationLike) candidates.push(...organisationCandidates(layout, field));
  return best(candidates)?.value;
}

function extractFields(layout: Layout, specs: FieldSpec[], context: string[] = []): ExtractedRecord {
  const record: ExtractedRecord = {};
  for (const spec of specs) {
    const value = extractField(layout, fieldOf(spec, context), context);
    if (value !== undefined && value !== null) record[spec.key] = value;
  }
  return record;
}

// ---------------------------------------------------------------------------------------------
// Records from tables

interface TableReading {
  records: ExtractedRecord[];
  score: number;
  header: string | null;
}

function mode(values: number[]): number {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]?.[0] ?? 0;
}

/** A header cell naming several properties ("Population (millions) Area (km2) Capital" from a PDF) split in their order. */
function splitHeader(header: string[], columns: number, fields: Field[]): string[] {
  if (header.length >= columns) return header;
  const out: string[] = [];
  for (const cell of header) {
    const tokens = cell.split(/\s+/).filter(Boolean);
    const starts: number[] = [];
    for (const field of fields) {
      const at = tokens.findIndex((t) => labelScore(t, field.vocab) >= 0.5);
      if (at >= 0 && !starts.includes(at)) starts.push(at);
    }
    starts.sort((a, b) => a - b);
    if (starts.length < 2) {
      out.push(cell);
      continue;
    }
    starts[0] = 0;
    starts.forEach((s, i) => out.push(tokens.slice(s, starts[i + 1]).join(' ')));
  }
  return out.length === columns ? out : header;
}

function fits(text: string, field: Field): boolean {
  return text.trim() !== '' && convert(text, field) !== null;
}

/** Columns for properties: by header labels; for a table without a matching header, by position among the columns whose values fit. */
function mapColumns(table: Table, fields: Field[]): { columns: Map<number, number>; headerRow: boolean; score: number } {
  const data = table.rows.slice(1);
  const columns = mode(data.map((r) => r.length));
  const header = splitHeader(table.rows[0], columns, fields);
  const scored: { f: number; c: number; s: number }[] = [];
  fields.forEach((field, f) => {
    header.forEach((cell, c) => {
      const s = labelScore(cell, field.vocab);
      if (s >= 0.4) scored.push({ f, c, s });
    });
  });
  scored.sort((a, b) => b.s - a.s || a.c - b.c);
  const map = new Map<number, number>();
  const used = new Set<number>();
  let score = 0;
  for (const { f, c, s } of scored) {
    if (map.has(f) || used.has(c)) continue;
    map.set(f, c);
    used.add(c);
    score += s;
  }
  if (map.size > 0) {
    if (header !== table.rows[0]) table.rows[0] = header;
    return { columns: map, headerRow: true, score };
  }
  // No header names a property: a first row of labels over differently filled rows is still
  // a header (skipped), and properties take the fitting columns in order.
  const first = table.rows[0];
  const filled = (row: string[]) => row.filter((c) => c !== '').length / Math.max(1, row.length);
  const dataFill = data.reduce((sum, r) => sum + filled(r), 0) / Math.max(1, data.length);
  const numeric = (row: string[]) => row.filter((c) => /^[-+(]?[$€£]?\d[\d.,]*%?\)?$/.test(c)).length;
  const headerRow =
    first.every((c) => !/^[-+(]?[$€£]?\d[\d.,]*%?\)?$/.test(c)) && (Math.abs(filled(first) - dataFill) > 0.4 || data.some((r) => numeric(r) > 0));
  const body = headerRow ? data : table.rows;
  // Columns by position only when the table has the schema's shape: as many columns as
  // scalar properties, or a schema of one property (a list's first fitting column).
  const scalars = fields.filter((field) => field.spec.type !== 'object' && !(field.spec.type === 'array' && field.spec.items?.type === 'object'));
  if (scalars.length !== 1 && scalars.length !== columns) return { columns: map, headerRow, score };
  let next = 0;
  fields.forEach((field, f) => {
    if (field.spec.type === 'object' || (field.spec.type === 'array' && field.spec.items?.type === 'object')) return;
    for (let c = next; c < columns; c++) {
      const values = body.map((r) => r[c] ?? '').filter((v) => v !== '');
      if (values.length === 0) continue;
      if (values.filter((v) => fits(v, field)).length / values.length >= 0.6) {
        map.set(f, c);
        next = c + 1;
        score += 0.3;
        return;
      }
    }
  });
  return { columns: map, headerRow, score };
}

function readTable(table: Table, fields: Field[]): TableReading {
  const { columns, headerRow, score } = mapColumns(table, fields);
  if (columns.size === 0) return { records: [], score: 0, header: null };
  const header = headerRow ? table.rows[0].join('\u0001') : null;
  const body = headerRow ? table.rows.slice(1) : table.rows;
  const records: ExtractedRecord[] = [];
  for (const row of body) {
    if (header !== null && row.join('\u0001') === header) continue;
    const record: ExtractedRecord = {};
    for (const [f, c] of columns) {
      const cell = row[c];
      if (cell === undefined || cell.trim() === '') continue;
      const value = convert(cell, fields[f]);
      if (value !== null) record[fields[f].spec.key] = value;
    }
    if (Object.keys(record).length === 0) continue;
    if (fields.some((f) => f.spec.required && record[f.spec.key] === undefined)) continue;
    records.push(record);
  }
  const completeness = records.length / Math.max(1, body.length);
  return { records, score: score * (0.5 + completeness) + 0.01 * records.length, header };
}

function tableRecords(layout: Layout, specs: FieldSpec[]): TableReading {
  const fields = specs.map((s) => fieldOf(s));
  const readings = layout.tables.map((t) => readTable({ ...t, rows: t.rows.map((r) => [...r]) }, fields));
  let top: TableReading | null = null;
  for (const r of readings) if (r.records.length > 0 && (!top || r.score > top.score)) top = r;
  if (!top) return { records: [], score: 0, header: null };
  // A table continued on later pages repeats its header: those rows are records too.
  if (top.header !== null) {
    const records = readings.filter((r) => r.header === top!.header).flatMap((r) => r.records);
    return { ...top, records };
  }
  return top;
}

/** Records from repeated label-value blocks ("Name: A / Age: 3", "Name: B / Age: 4"). */
function blockRecords(layout: Layout, specs: FieldSpec[]): ExtractedRecord[] {
  const fields = specs.filter((s) => s.type !== 'object' && !(s.type === 'array' && s.items?.type === 'object')).map((s) => fieldOf(s));
  const records: ExtractedRecord[] = [];
  let current: ExtractedRecord = {};
  const pairs: Pair[] = layout.pairs.filter((p) => p.source !== 'citation');
  for (const pair of pairs) {
    let top: { field: Field; score: number } | null = null;
    for (const field of fields) {
      const score = labelScore(pair.label, field.vocab);
      if (score >= 0.5 && (!top || score > top.score)) top = { field, score };
    }
    if (!top) continue;
    const value = convert(pair.value, top.field);
    if (value === null) continue;
    if (current[top.field.spec.key] !== undefined) {
      records.push(current);
      current = {};
    }
    current[top.field.spec.key] = value;
  }
  records.push(current);
  const enough = Math.min(2, fields.length);
  const complete = records.filter((r) => Object.keys(r).length >= enough && specs.every((s) => !s.required || r[s.key] !== undefined));
  return complete.length >= 2 ? complete : [];
}

// ---------------------------------------------------------------------------------------------

/**
 * Extracts from a document's text with a (checked) extraction schema: one record, or with
 * `multiple` one per table row or repeated block found. Values not found are left out.
 */
export function extractOffline(schema: Record<string, unknown>, multiple: boolean, input: ExtractionInput): ExtractedRecord[] {
  const specs = describeSchema(schema);
  const layout = buildLayout(input.pages, input.title ?? null);
  if (!multiple) return [extractFields(layout, specs)];
  const fromTables = tableRecords(layout, specs);
  if (fromTables.records.length > 0) return fromTables.records;
  const fromBlocks = blockRecords(layout, specs);
  if (fromBlocks.length > 0) return fromBlocks;
  const single = extractFields(layout, specs);
  return Object.keys(single).length > 0 ? [single] : [];
}
