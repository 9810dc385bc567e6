// Extraction with a language model: the document is cut into parts that fit the model's
// prompt budget (paragraph boundaries, a little overlap), each part is asked for JSON in the
// schema's strict form (structured outputs), every answer is normalised (typed parsers) and
// checked against the schema, an invalid one is asked again with the problems named, and the
// parts' answers are merged: one record by vote per field, or records concatenated with the
// duplicates of the overlaps removed and a record cut by a part boundary joined again. With
// `multiple`, each part also reports how many records it saw; a count that disagrees with
// the list is asked again once (the list wins after that).
import { LlmOutputError, LlmRequestError, estimateTokens, type ChatMessage, type LlmProvider } from '../providers/llm/types.js';
import { valueKind } from './labels.js';
import type { ExtractedRecord, ExtractionInput } from './offline.js';
import { describeSchema, fitsField, strictSchema, type FieldSpec } from './schema.js';
import { parseBoolean, parseDate, parseDateTime, parseEmail, parseInteger, parseMoney, parseNumber, parseTime, parseUrl } from './values.js';

/** A run that cannot finish; `transient` when trying again later may help (the model's server was down). */
export class ExtractionFailure extends Error {
  constructor(
    message: string,
    readonly transient = false,
  ) {
    super(message);
    this.name = 'ExtractionFailure';
  }
}

export interface LlmExtractionOptions {
  /** The extraction's name and description, for the prompt. */
  name: string;
  description?: string | null;
  signal?: AbortSignal;
  /** Called after each part with (parts done, parts in all). */
  onProgress?: (done: number, total: number) => Promise<void> | void;
  /** Asks per part, the first included (default 3). */
  attempts?: number;
  /** Prompt tokens per call when the provider does not say (default 8000). */
  promptTokens?: number;
  /** Most parts one document may have (default 100). */
  maxParts?: number;
}

export interface Part {
  text: string;
  firstPage: number;
  lastPage: number;
}

/** Tokens of a prompt that are not document text (instructions, framing). */
const PROMPT_OVERHEAD_TOKENS = 600;
/** Characters of the previous part repeated at the start of the next. */
const OVERLAP_CHARS = 600;

function paragraphsOf(pages: string[]): { text: string; page: number }[] {
  const out: { text: string; page: number }[] = [];
  pages.forEach((page, p) => {
    for (const paragraph of page.split(/\n\s*\n/)) if (paragraph.trim() !== '') out.push({ text: paragraph.trim(), page: p + 1 });
  });
  return out;
}

/** Pieces of a paragraph of at most `maxTokens`, cut at line ends or spaces. */
function splitLong(text: string, maxTokens: number): string[] {
  if (estimateTokens(text) <= maxTokens) return [text];
  const pieces: string[] = [];
  let rest = text;
  while (estimateTokens(rest) > maxTokens) {
    // Characters per token of this text, to find the cut.
    const ratio = rest.length / estimateTokens(rest);
    let cut = Math.max(1, Math.floor(maxTokens * ratio * 0.95));
    const newline = rest.lastIndexOf('\n', cut);
    const space = rest.lastIndexOf(' ', cut);
    if (newline > cut / 2) cut = newline;
    else if (space > cut / 2) cut = space;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest !== '') pieces.push(rest);
  return pieces;
}

/** The end of a text, at most OVERLAP_CHARS, starting at a line or word boundary. */
function tailOf(text: string): string {
  if (text.length <= OVERLAP_CHARS) return text;
  const from = text.length - OVERLAP_CHARS;
  const newline = text.indexOf('\n', from);
  const space = text.indexOf(' ', from);
  const cut = newline >= 0 && newline < text.length - 1 ? newline + 1 : space >= 0 ? space + 1 : from;
  return text.slice(cut);
}

/**
 * The document cut into parts of about `maxTokens` each at paragraph boundaries (a longer
 * paragraph at line ends), each marked with its pages; a part starts with the end of the
 * previous one, so that a record cut by the boundary is whole in one of them.
 */
export function splitIntoParts(pages: string[], maxTokens: number): Part[] {
  const pieces = paragraphsOf(pages).flatMap((p) => splitLong(p.text, Math.floor(maxTokens * 0.8)).map((text) => ({ text, page: p.page })));
  const parts: Part[] = [];
  let overlap: { text: string; page: number } | null = null;
  let i = 0;
  while (i < pieces.length) {
    const texts: string[] = [];
    let tokens = 0;
    let lastPage = -1;
    const firstPage: number = overlap?.page ?? pieces[i].page;
    if (overlap) {
      texts.push(`[Page ${overlap.page}]\n${overlap.text}`);
      tokens += estimateTokens(texts[0]) + 2;
      lastPage = overlap.page;
    }
    const start = i;
    while (i < pieces.length) {
      const piece = pieces[i];
      const text = piece.page !== lastPage ? `[Page ${piece.page}]\n${piece.text}` : piece.text;
      const cost = estimateTokens(text) + 2;
      if (tokens + cost > maxTokens && i > start) break;
      texts.push(text);
      tokens += cost;
      lastPage = piece.page;
      i++;
    }
    parts.push({ text: texts.join('\n\n'), firstPage, lastPage });
    overlap = i < pieces.length ? { text: tailOf(pieces[i - 1].text), page: pieces[i - 1].page } : null;
  }
  return parts;
}

// ---------------------------------------------------------------------------------------------
// Normalising the model's values

/** A value the model wrote in words ("$1,234", "25 Feb 2009", "yes") turned into the schema's type; undefined = drop. */
export function normaliseValue(spec: FieldSpec, value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (spec.type === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) return undefined;
    const out = normaliseRecord(spec.properties, value as Record<string, unknown>);
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (spec.type === 'array') {
    const items = Array.isArray(value) ? value : [value];
    const out = items.map((v) => (spec.items ? normaliseValue(spec.items, v) : v)).filter((v) => v !== undefined);
    return out;
  }
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '' || /^(?:null|none|n\/a|unknown|not (?:stated|given|found|available))$/i.test(text)) return undefined;
    switch (spec.type) {
      case 'number':
        return (valueKind(spec) === 'money' ? parseMoney(text) : parseNumber(text)) ?? value;
      case 'integer':
        return parseInteger(text) ?? value;
      case 'boolean':
        return parseBoolean(text) ?? value;
      case 'string':
        switch (spec.format) {
          case 'date':
            return parseDate(text) ?? text;
          case 'date-time':
            return parseDateTime(text) ?? text;
          case 'time':
            return parseTime(text) ?? text;
          case 'email':
            return parseEmail(text) ?? text;
          case 'uri':
            return parseUrl(text, { bareDomains: true }) ?? text;
        }
        if (spec.enum) return spec.enum.find((o) => typeof o === 'string' && o.toLowerCase() === text.toLowerCase()) ?? text;
        return text;
    }
  }
  if (spec.type === 'string' && (typeof value === 'number' || typeof value === 'boolean')) return String(value);
  if (spec.type === 'integer' && typeof value === 'number' && Number.isInteger(value)) return value;
  return value;
}

export function normaliseRecord(specs: FieldSpec[], record: Record<string, unknown>): ExtractedRecord {
  const out: ExtractedRecord = {};
  for (const spec of specs) {
    const value = normaliseValue(spec, record[spec.key]);
    if (value !== undefined && !(Array.isArray(value) && value.length === 0 && !spec.required)) out[spec.key] = value;
  }
  return out;
}

/** Problems of the values of one record (each checked against its property's schema; required fields are checked after merging). */
function valueProblems(specs: FieldSpec[], record: ExtractedRecord, where: string): string[] {
  const problems: string[] = [];
  for (const spec of specs) {
    const value = record[spec.key];
    if (value === undefined) continue;
    if (!fitsField(spec, value)) problems.push(`${where}"${spec.key}" = ${JSON.stringify(value).slice(0, 80)} does not fit its schema ${JSON.stringify(spec.schema).slice(0, 160)}`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Merging parts

/** JSON with sorted keys, for comparing values. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** One record from the parts' answers: per field the value most parts gave (the earliest on a tie); lists united; objects field by field. */
export function mergeSingle(specs: FieldSpec[], records: ExtractedRecord[]): ExtractedRecord {
  const out: ExtractedRecord = {};
  for (const spec of specs) {
    const values = records.map((r) => r[spec.key]).filter((v) => v !== undefined);
    if (values.length === 0) continue;
    if (spec.type === 'object') {
      out[spec.key] = mergeSingle(spec.properties, values as ExtractedRecord[]);
    } else if (spec.type === 'array') {
      const seen = new Set<string>();
      const united: unknown[] = [];
      for (const list of values as unknown[][]) {
        for (const item of list) {
          const key = canonical(item);
          if (!seen.has(key)) {
            seen.add(key);
            united.push(item);
          }
        }
      }
      out[spec.key] = united;
    } else {
      const votes = new Map<string, { value: unknown; count: number; first: number }>();
      values.forEach((value, i) => {
        const key = canonical(value);
        const vote = votes.get(key) ?? { value, count: 0, first: i };
        vote.count++;
        votes.set(key, vote);
      });
      out[spec.key] = [...votes.values()].sort((a, b) => b.count - a.count || a.first - b.first)[0].value;
    }
  }
  return out;
}

function compatible(a: ExtractedRecord, b: ExtractedRecord): boolean {
  let shared = 0;
  for (const key of Object.keys(a)) {
    if (b[key] === undefined) continue;
    if (canonical(a[key]) !== canonical(b[key])) return false;
    shared++;
  }
  return shared > 0;
}

/**
 * Records of consecutive parts as one list: a record of a part that repeats one of the
 * previous part (the overlap) is dropped once per repetition, and the last record of a part
 * and the first of the next are joined when they agree on every field both have (a record
 * cut by the boundary).
 */
export function mergeRecords(parts: ExtractedRecord[][]): ExtractedRecord[] {
  const out: ExtractedRecord[] = [];
  let previous: ExtractedRecord[] = [];
  for (const records of parts) {
    const remaining = [...records];
    const pool = new Map<string, number>();
    for (const r of previous) pool.set(canonical(r), (pool.get(canonical(r)) ?? 0) + 1);
    for (let i = 0; i < remaining.length; ) {
      const key = canonical(remaining[i]);
      const left = pool.get(key) ?? 0;
      if (left > 0) {
        pool.set(key, left - 1);
        remaining.splice(i, 1);
      } else {
        i++;
      }
    }
    const last = out[out.length - 1];
    if (last && remaining.length > 0 && previous.length > 0 && compatible(last, remaining[0])) {
      const lastKeys = Object.keys(last).length;
      const firstKeys = Object.keys(remaining[0]).length;
      // Only a partial record is joined: two complete equal-looking records stay two.
      if (lastKeys !== firstKeys || lastKeys < Object.keys({ ...last, ...remaining[0] }).length) {
        out[out.length - 1] = { ...last, ...remaining[0] };
        remaining.shift();
      }
    }
    out.push(...remaining);
    previous = records;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Asking

const SYSTEM_PROMPT = [
  'You extract structured data from documents.',
  'Answer with JSON only, matching the given JSON Schema.',
  'Use only what the text states; never guess or use outside knowledge.',
  'Use null for anything the text does not state.',
  'Write dates as YYYY-MM-DD and numbers as plain JSON numbers (no units, currency signs or thousands separators).',
].join(' ');

function failureOf(error: unknown, part: string): ExtractionFailure {
  if (error instanceof LlmRequestError) {
    const transient = error.status === null || error.status === 429 || error.status === 408 || error.status >= 500;
    return new ExtractionFailure(`The language model could not be asked about ${part}: ${error.message}`, transient);
  }
  return new ExtractionFailure(`The language model failed on ${part}: ${(error as Error).message ?? String(error)}`, true);
}

interface PartAnswer {
  records: ExtractedRecord[];
}

async function askPart(
  llm: LlmProvider,
  specs: FieldSpec[],
  format: Record<string, unknown>,
  multiple: boolean,
  messages: ChatMessage[],
  label: string,
  options: LlmExtractionOptions,
): Promise<PartAnswer> {
  const attempts = options.attempts ?? 3;
  const conversation = [...messages];
  let problems: string[] = [];
  let lastContent: string | null = null;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) {
      if (lastContent !== null) conversation.push({ role: 'assistant', content: lastContent });
      conversation.push({
        role: 'user',
        content: `That answer cannot be used: ${problems.join('; ')}. Answer again with the complete, corrected JSON for the same text.`,
      });
    }
    let json: unknown;
    try {
      const response = await llm.chat({
        messages: conversation,
        jsonSchema: { name: 'extraction', schema: format },
        temperature: 0,
        signal: options.signal,
      });
      lastContent = response.content;
      json = response.json !== undefined ? response.json : JSON.parse(response.content);
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (error instanceof LlmOutputError || error instanceof SyntaxError) {
        problems = [error.message];
        lastContent = null;
        continue;
      }
      throw failureOf(error, label);
    }
    const found = readAnswer(specs, multiple, json);
    problems = found.problems;
    // A count that disagrees with the list is asked about once; then the list is taken.
    if (problems.length === 0 && found.countMismatch && attempt < Math.min(2, attempts)) {
      problems = [found.countMismatch];
      continue;
    }
    if (problems.length === 0) return { records: found.records };
  }
  throw new ExtractionFailure(`The language model gave no valid answer for ${label} after ${attempts} attempts: ${problems.join('; ').slice(0, 500)}`);
}

function readAnswer(specs: FieldSpec[], multiple: boolean, json: unknown): { records: ExtractedRecord[]; problems: string[]; countMismatch: string | null } {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(json)) return { records: [], problems: ['the answer is not a JSON object'], countMismatch: null };
  if (!multiple) {
    const record = normaliseRecord(specs, json);
    return { records: [record], problems: valueProblems(specs, record, ''), countMismatch: null };
  }
  if (!Array.isArray(json.records)) return { records: [], problems: ['the answer has no "records" list'], countMismatch: null };
  const problems: string[] = [];
  const records: ExtractedRecord[] = [];
  json.records.forEach((raw, i) => {
    if (!isObject(raw)) {
      problems.push(`records[${i}] is not an object`);
      return;
    }
    const record = normaliseRecord(specs, raw);
    problems.push(...valueProblems(specs, record, `records[${i}].`));
    if (Object.keys(record).length > 0) records.push(record);
  });
  const count = json.record_count;
  const countMismatch = typeof count === 'number' && count !== json.records.length ? `record_count is ${count} but "records" lists ${json.records.length}; list every record you counted` : null;
  return { records, problems, countMismatch };
}

/**
 * Extracts with the model: one record (merged over the parts), or with `multiple` every
 * record found. Values are normalised and checked per field here; the caller validates the
 * final records against the whole schema (required fields).
 */
export async function extractWithLlm(
  llm: LlmProvider,
  schema: Record<string, unknown>,
  multiple: boolean,
  input: ExtractionInput,
  options: LlmExtractionOptions,
): Promise<ExtractedRecord[]> {
  const specs = describeSchema(schema);
  const recordSchema = strictSchema(schema);
  const format: Record<string, unknown> = multiple
    ? {
        type: 'object',
        properties: {
          record_count: { type: 'integer', description: 'How many records this part of the document contains.' },
          records: { type: 'array', items: recordSchema, description: 'Every record in this part, in document order.' },
        },
        required: ['record_count', 'records'],
        additionalProperties: false,
      }
    : recordSchema;
  const budget = llm.promptTokenBudget ?? options.promptTokens ?? 8000;
  const schemaTokens = estimateTokens(JSON.stringify(format));
  // Room for the answer to a part's records, when each part may hold many.
  let partTokens = Math.floor(budget - PROMPT_OVERHEAD_TOKENS - schemaTokens);
  if (multiple) partTokens = Math.min(partTokens, 3000);
  if (partTokens < 200) throw new ExtractionFailure(`The schema is too large for the language model's prompt budget of ${budget} tokens`);
  const parts = splitIntoParts(input.pages, partTokens);
  if (parts.length === 0) throw new ExtractionFailure('The document has no text to extract from');
  const maxParts = options.maxParts ?? 100;
  if (parts.length > maxParts) {
    throw new ExtractionFailure(`The document is too long for extraction with the language model: ${parts.length} parts of at most ${partTokens} tokens (the limit is ${maxParts})`);
  }
  const about = [`Extraction: ${options.name}`, options.description ? `What to extract: ${options.description}` : null, input.title ? `Document title: ${input.title}` : null]
    .filter(Boolean)
    .join('\n');
  const task = multiple
    ? 'List every record this part of the document contains, in order, and give their number as record_count. A record only partly in this part is listed with the fields it shows. If there are none, answer an empty list.'
    : 'Fill in the fields this part of the document states; null for the others.';
  const answers: ExtractedRecord[][] = [];
  for (let i = 0; i < parts.length; i++) {
    options.signal?.throwIfAborted();
    const part = parts[i];
    const label = parts.length === 1 ? 'the document' : `part ${i + 1} of ${parts.length}`;
    const pages = part.firstPage === part.lastPage ? `page ${part.firstPage}` : `pages ${part.firstPage}-${part.lastPage}`;
    const messages: ChatMessage[] = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: `${about}\n\n${task}\n\nDocument text, ${label} (${pages}):\n<<<\n${part.text}\n>>>` },
    ];
    const answer = await askPart(llm, specs, format, multiple, messages, label, options);
    answers.push(answer.records);
    await options.onProgress?.(i + 1, parts.length);
  }
  if (!multiple) return [mergeSingle(specs, answers.flat())];
  return mergeRecords(answers);
}
