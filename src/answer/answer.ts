// Question answering: optimise the question and filter when asked, retrieve pages with the
// hybrid search under the filters, then answer: with a language model, a grounded answer
// whose citations are checked (an uncited or failed one gives way to the extractive answer);
// without one, the extractive answer from the best sentences. Sources list the cited pages
// first (marker [n] is sources[n-1]), then the other retrieved pages, up to top_k.
// Streamed, everything up to the retrieval happens first (its errors are the request's);
// then the answer is told as it is written, and the outcome is the one the call without a
// stream gives.
import type { LlmProvider } from '../providers/llm/types.js';
import { findPages, type SearchDeps } from '../search/search.js';
import { compileDocumentFilter } from '../store/filter.js';
import {
  NOT_FOUND_ANSWER,
  composeExtractive,
  pickSentences,
  questionTerms,
  scoreSentences,
  type AnswerFormat,
  type CandidatePage,
  type ScoredSentence,
} from './extractive.js';
import { buildPassages, groundedAnswer } from './grounded.js';
import type { Optimizer } from './optimize.js';
import { documentMetadata, sentencesOfPages } from '../store/passages.js';

/** alpha of the retrieval: keyword and semantic scores weigh the same. */
export const ANSWER_ALPHA = 0.5;
/** Pages retrieved at least, whatever top_k: sentences are chosen among them. */
const MIN_POOL = 10;
const MAX_POOL = 50;
/** Prompt tokens kept for the instructions and the question. */
const PROMPT_OVERHEAD_TOKENS = 600;

export interface AnswerRequest {
  question: string;
  format?: AnswerFormat;
  metadata_filter?: Record<string, unknown> | null;
  created_at_filter?: Record<string, unknown> | null;
  updated_at_filter?: Record<string, unknown> | null;
  optimize_metadata?: boolean;
  optimize_question?: boolean;
  top_k?: number;
}

export interface AnswerSource {
  document_id: number;
  page_number: number;
  /** The page's retrieval relevance, as a string with four decimals ("0.8731"). */
  relevance: string;
  document_metadata: Record<string, unknown>;
  /** Ids of the page's sentences the answer drew on (empty for pages not cited). */
  sentence_ids: number[];
}

export interface AnswerData {
  answer: string;
  format: AnswerFormat;
  sources: AnswerSource[];
  optimized_question: string;
  optimized_metadata: Record<string, unknown>;
}

/**
 * How the answer was made: `llm` (the model's, citations checked), `extractive` (offline),
 * `fallback` (extractive, because the model failed or its answer was refused), `none`
 * (nothing relevant found).
 */
export type AnswerMode = 'llm' | 'extractive' | 'fallback' | 'none';

export interface AnswerOutcome {
  data: AnswerData;
  mode: AnswerMode;
}

export interface AnswerDeps extends SearchDeps {
  llm: LlmProvider | null;
  optimizer: Optimizer;
  /** Told when the model failed or its answer was refused (the extractive answer is used). */
  onLlmError?: (error: unknown) => void;
}

interface Cited {
  page: CandidatePage;
  sentenceIds: number[];
}

/**
 * Where a streamed answer goes. `sources` is told once, before the first delta: the sources
 * the deltas' markers refer to. They are the outcome's, except while a model writes: then
 * they are the passages it was given ([n] is passage n), and the outcome's answer (markers
 * renumbered to its sources and checked, or the extractive answer when the model's was
 * refused) replaces the deltas.
 */
export interface AnswerStream {
  sources(sources: AnswerSource[]): void;
  delta(text: string): void;
  /** Aborts the model's call (the client has gone); the answer then rejects. */
  signal?: AbortSignal;
}

/** Writes the prepared answer, streaming it when given a stream. */
export type AnswerWriter = (stream?: AnswerStream) => Promise<AnswerOutcome>;

export async function answerQuestion(deps: AnswerDeps, workspaceId: number, req: AnswerRequest): Promise<AnswerOutcome> {
  const write = await prepareAnswer(deps, workspaceId, req);
  return write();
}

/** Pieces of an answer written out at once: words with the space after them. */
export function answerPieces(answer: string): string[] {
  return answer.match(/\S+\s*|\s+/g) ?? [];
}

/** Checks the request and retrieves what the answer is made from; the writer then answers. */
export async function prepareAnswer(deps: AnswerDeps, workspaceId: number, req: AnswerRequest): Promise<AnswerWriter> {
  const format = req.format ?? 'MARKDOWN';
  const topK = req.top_k ?? 5;
  const question = req.question.trim();
  // The caller's filters are checked before anything else (400 on an invalid one).
  const filter = compileDocumentFilter(req);

  const optimized = await deps.optimizer.optimize(workspaceId, {
    text: question,
    metadata_filter: req.metadata_filter,
    filter,
    optimizeText: req.optimize_question === true,
    optimizeMetadata: req.optimize_metadata === true,
  });
  const searchQuestion = optimized.text;
  const envelope = (answer: string, sources: AnswerSource[]): AnswerData => ({
    answer,
    format,
    sources,
    optimized_question: searchQuestion,
    optimized_metadata: optimized.metadata_filter ?? {},
  });

  const results = await findPages(
    deps,
    workspaceId,
    { query: searchQuestion, alpha: ANSWER_ALPHA, top_k: Math.min(MAX_POOL, Math.max(topK, MIN_POOL)) },
    optimized.filter,
  );
  if (results.length === 0) return written({ data: envelope(NOT_FOUND_ANSWER, []), mode: 'none' });

  const sentences = await sentencesOfPages(deps.db, results.map((r) => r.id));
  const pages: CandidatePage[] = results.map((r) => ({
    id: r.id,
    documentId: r.document_id,
    pageNumber: r.page_number,
    relevance: r.relevance,
    content: r.content,
    sentences: sentences.get(r.id) ?? [],
  }));
  const terms = questionTerms(searchQuestion);
  const known = await deps.index.knownWords(workspaceId, Array.from(terms.values()).flat());
  const scored = scoreSentences(searchQuestion, pages, (term) => terms.get(term)!.some((w) => known.has(w)));
  const metadata = await documentMetadata(deps.db, Array.from(new Set(pages.map((p) => p.documentId))));
  const source = ({ page, sentenceIds }: Cited): AnswerSource => ({
    document_id: page.documentId,
    page_number: page.pageNumber,
    relevance: page.relevance.toFixed(4),
    document_metadata: metadata.get(page.documentId) ?? {},
    sentence_ids: sentenceIds,
  });
  const sourcesFor = (cited: Cited[]): AnswerSource[] => {
    const citedIds = new Set(cited.map((c) => c.page.id));
    const rest = pages.filter((p) => !citedIds.has(p.id)).slice(0, Math.max(0, topK - cited.length));
    return [...cited, ...rest.map((page) => ({ page, sentenceIds: [] }))].map(source);
  };
  const llm = deps.llm;

  return async (stream) => {
    let drafting = false;
    const told = (outcome: AnswerOutcome) => {
      // Unless a model's draft was streamed, the answer is told whole now.
      if (stream && !drafting) tellWhole(stream, outcome.data);
      return outcome;
    };
    let mode: AnswerMode = 'extractive';
    if (llm) {
      try {
        const budget = (llm.promptTokenBudget ?? 8000) - PROMPT_OVERHEAD_TOKENS - Math.ceil(question.length / 3);
        const passages = buildPassages(pages, scored, budget);
        const draft = stream && {
          signal: stream.signal,
          onText: (text: string) => {
            if (!drafting) stream.sources(passages.map((p) => source({ page: p.page, sentenceIds: [] })));
            drafting = true;
            stream.delta(text);
          },
        };
        const grounded = await groundedAnswer(llm, question, passages, format, draft);
        if (!grounded.answerable) return told({ data: envelope(NOT_FOUND_ANSWER, []), mode: 'llm' });
        const byNumber = new Map(passages.map((p) => [p.number, p]));
        const cited = grounded.cited.map((n) => ({ page: byNumber.get(n)!.page, sentenceIds: grounded.sentenceIds.get(n) ?? [] }));
        const renumbered = new Map(grounded.cited.map((n, i) => [n, i + 1]));
        const answer = grounded.answer.replace(/\[(\d+)\]/g, (whole, n: string) => (renumbered.has(Number(n)) ? `[${renumbered.get(Number(n))}]` : whole));
        return told({ data: envelope(answer, sourcesFor(cited)), mode: 'llm' });
      } catch (error) {
        // A client that went away wants no fallback.
        if (stream?.signal?.aborted) throw error;
        deps.onLlmError?.(error);
        mode = 'fallback';
      }
    }
    return told(extractive(scored, topK, format, envelope, sourcesFor, mode));
  };
}

function tellWhole(stream: AnswerStream, data: AnswerData): void {
  stream.sources(data.sources);
  for (const piece of answerPieces(data.answer)) stream.delta(piece);
}

/** The writer of an answer known before it is written. */
function written(outcome: AnswerOutcome): AnswerWriter {
  return async (stream) => {
    if (stream) tellWhole(stream, outcome.data);
    return outcome;
  };
}

function extractive(
  scored: ScoredSentence[],
  topK: number,
  format: AnswerFormat,
  envelope: (answer: string, sources: AnswerSource[]) => AnswerData,
  sourcesFor: (cited: Cited[]) => AnswerSource[],
  mode: AnswerMode,
): AnswerOutcome {
  const picked = pickSentences(scored, topK);
  if (picked.length === 0) return { data: envelope(NOT_FOUND_ANSWER, []), mode: mode === 'fallback' ? mode : 'none' };
  // Cited pages in order of their best sentence; each page's sentences in the order used.
  const cited: Cited[] = [];
  for (const s of picked) {
    const entry = cited.find((c) => c.page.id === s.page.id);
    if (entry) entry.sentenceIds.push(s.sentence.id);
    else cited.push({ page: s.page, sentenceIds: [s.sentence.id] });
  }
  const marker = new Map(cited.map((c, i) => [c.page.id, i + 1]));
  const answer = composeExtractive(
    picked.map((s) => ({ text: s.sentence.content, marker: marker.get(s.page.id)! })),
    format,
  );
  return { data: envelope(answer, sourcesFor(cited)), mode };
}
