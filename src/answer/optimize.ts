// Query and metadata optimisation for search and answers. optimize_metadata derives a
// metadata filter from the text using the workspace's metadata catalogue; optimize_query /
// optimize_question removes from the text what the filter in force already covers. With a
// language model the model proposes both; offline, a matcher finds catalogue values named in
// the text (case-insensitive, whole words). Either way a derived filter is used only when the
// filter compiler accepts it and, together with the caller's filters, it matches at least
// one document; the caller's own filter is always kept (combined with $and).
import type { Kysely } from 'kysely';
import { AppError } from '../errors.js';
import type { LlmProvider } from '../providers/llm/types.js';
import { estimateTokens } from '../providers/llm/types.js';
import type { OptimizeInput, OptimizeOutput, QueryOptimizer } from '../search/search.js';
import { narrowDocumentFilter, type DocumentFilter } from '../store/filter.js';
import { anyDocumentMatches } from '../store/matching.js';
import type { Database } from '../store/schema.js';
import { MetadataCatalogue, type Catalogue, type CatalogueScalar } from './catalogue.js';
import { STOP_WORDS, contentTerms, findWholeWord, tidy } from './text.js';

type Filter = Record<string, unknown>;

export interface OptimizeResult extends OptimizeOutput {
  /** The filter derived from the text and used, or null. */
  derived: Filter | null;
  /** Who proposed: the model, the offline matcher, or nobody (flags off). */
  mode: 'llm' | 'offline' | 'none';
  /** Why a proposal was not used, when one was not. */
  rejected?: string;
}

export interface OptimizerOptions {
  db: Kysely<Database>;
  catalogue: MetadataCatalogue;
  llm: LlmProvider | null;
  /** Told when the model failed and the offline matcher stood in. */
  onLlmError?: (error: unknown) => void;
}

// ---------------------------------------------------------------------------------------------
// Offline matcher

export interface ValueMatch {
  field: string;
  value: CatalogueScalar;
  inArray: boolean;
  start: number;
  end: number;
}

/** "doc_type" and "docType" are mentioned as "doc type". */
function fieldPhrase(name: string): string {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim();
}

function fieldMentioned(text: string, name: string): boolean {
  const phrase = fieldPhrase(name);
  return phrase !== '' && (findWholeWord(text, phrase).length > 0 || findWholeWord(text, `${phrase}s`).length > 0);
}

/**
 * Whether a value may be matched by itself: strings of three characters or more that are
 * not function words, numbers of three digits or more. Shorter ones (and function words)
 * only when the field's name is mentioned too ("version 2"). Booleans never: "true" in a
 * question rarely means a field.
 */
function matchable(value: CatalogueScalar, named: boolean): string | null {
  if (typeof value === 'boolean') return null;
  const text = String(value).trim();
  if (text === '' || text.length > 100) return null;
  const strong = text.length >= 3 && (typeof value === 'number' || !STOP_WORDS.has(text.toLowerCase()));
  return strong || named ? text : null;
}

/** Catalogue values mentioned in the text, without overlaps (the longest mention wins, then the most frequent value). */
export function matchCatalogue(text: string, catalogue: Catalogue): ValueMatch[] {
  const candidates: (ValueMatch & { count: number })[] = [];
  for (const field of catalogue.fields) {
    const named = fieldMentioned(text, field.name);
    for (const v of field.values) {
      const phrase = matchable(v.value, named);
      if (phrase === null) continue;
      for (const span of findWholeWord(text, phrase)) {
        candidates.push({ field: field.name, value: v.value, inArray: v.inArray, count: v.count, ...span });
      }
    }
  }
  candidates.sort(
    (a, b) => b.end - b.start - (a.end - a.start) || b.count - a.count || (a.field < b.field ? -1 : a.field > b.field ? 1 : 0) || a.start - b.start,
  );
  const taken: ValueMatch[] = [];
  for (const c of candidates) {
    if (taken.some((t) => c.start < t.end && t.start < c.end)) continue;
    taken.push({ field: c.field, value: c.value, inArray: c.inArray, start: c.start, end: c.end });
  }
  return taken.sort((a, b) => a.start - b.start);
}

/** One condition per field: equality or $in for plain fields, $containsAny for array fields. */
export function filterFromMatches(matches: ValueMatch[]): Filter | null {
  const byField = new Map<string, { values: CatalogueScalar[]; inArray: boolean }>();
  for (const m of matches) {
    const entry = byField.get(m.field) ?? { values: [], inArray: false };
    if (!entry.values.includes(m.value)) entry.values.push(m.value);
    entry.inArray ||= m.inArray;
    byField.set(m.field, entry);
  }
  if (byField.size === 0) return null;
  const filter: Filter = {};
  for (const [field, { values, inArray }] of byField) {
    filter[field] = inArray ? { $containsAny: values } : values.length === 1 ? values[0] : { $in: values };
  }
  return filter;
}

export interface Covered {
  field: string;
  value: CatalogueScalar;
}

function isScalar(v: unknown): v is CatalogueScalar {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** Field values a filter pins down: equality, $eq, $in, $contains and $containsAny, at the top or under $and. */
export function coveredValues(filter: unknown): Covered[] {
  const out: Covered[] = [];
  const visit = (node: unknown) => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$and' && Array.isArray(value)) value.forEach(visit);
      if (key.startsWith('$')) continue;
      if (isScalar(value)) out.push({ field: key, value });
      else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const [op, operand] of Object.entries(value)) {
          const list = Array.isArray(operand) ? operand : [operand];
          if (['$eq', '$in', '$contains', '$containsAny'].includes(op)) {
            for (const v of list) if (isScalar(v)) out.push({ field: key, value: v });
          }
        }
      }
    }
  };
  visit(filter);
  return out;
}

const CONNECTOR = /^[\s,;/&]*(?:(?:and|or|&)[\s,;/&]*)?$/i;

/**
 * The text without the mentions of covered values. Values that could not be matched by
 * themselves (short ones, function words) are removed only next to their field's name, with
 * it; "field: value" is removed whole. Connectors left between two removals go too
 * ("finance and legal"). When nothing with content would be left, the text is kept.
 */
export function removeCovered(text: string, covered: Covered[]): string {
  const spans: { start: number; end: number }[] = [];
  for (const { field, value } of covered) {
    const phrase = String(value).trim();
    if (phrase === '' || typeof value === 'boolean') continue;
    const name = fieldPhrase(field);
    const named = [
      ...findWholeWord(text, `${name}: ${phrase}`),
      ...findWholeWord(text, `${name}:${phrase}`),
      ...findWholeWord(text, `${name}=${phrase}`),
      ...findWholeWord(text, `${name} ${phrase}`),
    ];
    if (matchable(value, false) !== null) spans.push(...named, ...findWholeWord(text, phrase));
    else spans.push(...named);
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: { start: number; end: number }[] = [];
  for (const span of spans) {
    const last = merged.at(-1);
    if (last && (span.start <= last.end || CONNECTOR.test(text.slice(last.end, span.start)))) {
      last.end = Math.max(last.end, span.end);
    } else merged.push({ ...span });
  }
  let out = '';
  let at = 0;
  for (const span of merged) {
    out += `${text.slice(at, span.start)} `;
    at = span.end;
  }
  out = tidy(out + text.slice(at));
  return contentTerms(out).length > 0 ? out : text;
}

// ---------------------------------------------------------------------------------------------
// With a language model

const PROPOSAL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['metadata_filter', 'question'],
  properties: {
    metadata_filter: {
      type: 'string',
      description: 'The metadata filter as JSON object text, "{}" when the question names no catalogue value',
    },
    question: { type: 'string', description: 'The question without the parts the filter covers' },
  },
};

interface Proposal {
  metadata_filter: string;
  question: string;
}

const SYSTEM_PROMPT = `You turn a search question into a metadata filter over a document collection.
The filter syntax: {"field": value} for equality; operators $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin (array),
$contains / $containsAny (for array fields: elements), $and / $or (arrays of filters).
Use only fields and values from the catalogue, and only when the question clearly names them; numbers stay numbers.
When the question names no catalogue value, the filter is "{}".
The question you return is the original question without the words the filter (and the caller's filter) already covers,
otherwise unchanged; never answer it.
Reply with JSON: {"metadata_filter": "<filter as JSON text>", "question": "<question>"}.`;

function catalogueForPrompt(catalogue: Catalogue, budgetTokens: number): string {
  let valuesPerField = 20;
  for (;;) {
    const view = catalogue.fields.map((f) => ({
      field: f.name,
      types: Object.keys(f.types),
      documents: f.documents,
      values: f.values.slice(0, valuesPerField).map((v) => v.value),
      ...(f.values.some((v) => v.inArray) ? { array: true } : {}),
    }));
    const text = JSON.stringify(view);
    if (estimateTokens(text) <= budgetTokens || valuesPerField <= 1) return text;
    valuesPerField = Math.floor(valuesPerField / 2);
  }
}

// ---------------------------------------------------------------------------------------------
// The optimiser

function isEmpty(filter: Filter | null | undefined): boolean {
  return !filter || Object.keys(filter).length === 0;
}

/** The caller's filter and a derived one, both required. */
export function combineFilters(caller: Filter | null | undefined, derived: Filter | null): Filter | null {
  if (isEmpty(derived)) return isEmpty(caller) ? null : caller!;
  if (isEmpty(caller)) return derived;
  return { $and: [caller, derived] };
}

/** A derived metadata filter that passed the checks, and the caller's filters narrowed by it. */
interface Checked {
  metadata: Filter;
  filter: DocumentFilter;
}

/** The filters to apply: the caller's alone, or narrowed by the derived one. */
function outcome(input: OptimizeInput, used: Filter | null, derived: Checked | null): Pick<OptimizeResult, 'metadata_filter' | 'filter' | 'derived'> {
  return { metadata_filter: used, filter: derived?.filter ?? input.filter, derived: derived?.metadata ?? null };
}

export class Optimizer implements QueryOptimizer {
  constructor(private readonly options: OptimizerOptions) {}

  async optimize(workspaceId: number, input: OptimizeInput): Promise<OptimizeResult> {
    const caller = isEmpty(input.metadata_filter) ? null : input.metadata_filter!;
    if (!input.optimizeMetadata && !input.optimizeText) {
      return { text: input.text, metadata_filter: caller, filter: input.filter, derived: null, mode: 'none' };
    }
    const catalogue = input.optimizeMetadata ? await this.options.catalogue.get(workspaceId) : null;
    if (this.options.llm) {
      try {
        return await this.withModel(this.options.llm, workspaceId, input, caller, catalogue);
      } catch (error) {
        this.options.onLlmError?.(error);
      }
    }
    return this.offline(workspaceId, input, caller, catalogue);
  }

  private async offline(workspaceId: number, input: OptimizeInput, caller: Filter | null, catalogue: Catalogue | null): Promise<OptimizeResult> {
    let derived: Checked | null = null;
    let rejected: string | undefined;
    if (input.optimizeMetadata && catalogue) {
      // Values the caller's filter already pins are not derived again.
      const pinned = coveredValues(caller);
      const matches = matchCatalogue(input.text, catalogue).filter((m) => !pinned.some((p) => p.field === m.field && p.value === m.value));
      const proposal = filterFromMatches(matches);
      if (proposal) {
        const checked = await this.check(workspaceId, input, proposal);
        if (typeof checked === 'string') rejected = checked;
        else derived = checked;
      }
    }
    const used = combineFilters(caller, derived?.metadata ?? null);
    const text = input.optimizeText ? removeCovered(input.text, coveredValues(used)) : input.text;
    return { text, ...outcome(input, used, derived), mode: 'offline', ...(rejected ? { rejected } : {}) };
  }

  private async withModel(
    llm: LlmProvider,
    workspaceId: number,
    input: OptimizeInput,
    caller: Filter | null,
    catalogue: Catalogue | null,
  ): Promise<OptimizeResult> {
    const budget = llm.promptTokenBudget ?? 8000;
    const task = [
      input.optimizeMetadata ? 'Propose a metadata filter for the question.' : 'Do not propose a filter: return "{}".',
      input.optimizeText ? 'Return the question without what the filters cover.' : 'Return the question unchanged.',
    ].join(' ');
    const user = [
      `Task: ${task}`,
      catalogue ? `Metadata catalogue (fields, types, frequent values): ${catalogueForPrompt(catalogue, Math.floor(budget / 2))}` : '',
      `Filter the caller already applies (kept in any case): ${JSON.stringify(caller ?? {})}`,
      `Question: ${input.text}`,
    ]
      .filter((line) => line !== '')
      .join('\n\n');
    const response = await llm.chat({
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: user },
      ],
      jsonSchema: { name: 'query_optimisation', schema: PROPOSAL_SCHEMA },
      maxTokens: 512,
      temperature: 0,
    });
    const proposal = response.json as Proposal;

    let derived: Checked | null = null;
    let rejected: string | undefined;
    if (input.optimizeMetadata) {
      let parsed: unknown;
      try {
        parsed = proposal.metadata_filter.trim() === '' ? {} : JSON.parse(proposal.metadata_filter);
      } catch {
        parsed = undefined;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        rejected = 'the proposed filter is not a JSON object';
      } else if (Object.keys(parsed).length > 0) {
        const checked = await this.check(workspaceId, input, parsed as Filter);
        if (typeof checked === 'string') rejected = checked;
        else derived = checked;
      }
    }
    const used = combineFilters(caller, derived?.metadata ?? null);
    let text = input.text;
    if (input.optimizeText) {
      const proposed = tidy(proposal.question ?? '');
      // A rewrite that assumed a rejected filter, or that left nothing, is not used.
      text = !rejected && contentTerms(proposed).length > 0 ? proposed : removeCovered(input.text, coveredValues(used));
    }
    return { text, ...outcome(input, used, derived), mode: 'llm', ...(rejected ? { rejected } : {}) };
  }

  /**
   * The proposed filter narrowing the caller's, or why it cannot be used: the compiler refuses
   * it, or together with the caller's filters it matches no document.
   */
  private async check(workspaceId: number, input: OptimizeInput, proposal: Filter): Promise<Checked | string> {
    let filter: DocumentFilter;
    try {
      filter = narrowDocumentFilter(input.filter, proposal);
    } catch (error) {
      if (error instanceof AppError) return `invalid filter: ${error.message}`;
      throw error;
    }
    if (!(await anyDocumentMatches(this.options.db, workspaceId, filter))) return 'the filter matches no document';
    return { metadata: proposal, filter };
  }
}
