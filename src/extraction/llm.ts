// Extraction with a language model: the document is cut into parts that fit the model's
// prompt budget (paragraph boundaries, a little overlap), each part is asked for JSON in the
// schema's strict form (structured outputs), every answer is normalised (typed parsers) and
// checked against the schema, an invalid one is asked again with the problems named, and the
// parts' answers are merged: one record by vote per field, or records concatenated with the
// duplicates of the overlaps removed and a record cut by a part boundary joined again. With
// `multiple`, each part also reports how many records it saw; a count that disagrees with
// the list is asked again once (the list wins after that).
// This module asks; llm/ holds the parts, the reading of answers and the merging.
import { LlmOutputError, LlmRequestError, estimateTokens, type ChatMessage, type LlmProvider } from '../providers/llm/types.js';
import { readAnswer } from './llm/answer.js';
import { mergeRecords, mergeSingle } from './llm/merge.js';
import { splitIntoParts } from './llm/parts.js';
import type { ExtractedRecord, ExtractionInput } from './offline.js';
import { describeSchema, strictSchema, type FieldSpec } from './schema.js';

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

/** Tokens of a prompt that are not document text (instructions, framing). */
const PROMPT_OVERHEAD_TOKENS = 600;

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
