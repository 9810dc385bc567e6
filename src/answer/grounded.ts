// The answer with a language model: a grounded prompt over numbered passages (the retrieved
// pages, condensed to their best sentences when long, packed under the call's token budget),
// a structured reply {answerable, answer, citations: [{passage, quote}]}, and a check of the
// citations against what was retrieved: a passage counts as cited only when a quote given
// for it is found in it. Markers that point elsewhere are removed; an answer left citing
// nothing retrieved is refused (UncitedAnswerError), never returned. Streamed, the reply's
// answer text is passed on as the model writes it, before any of this checking.
import type { ChatStreamSink, LlmProvider } from '../providers/llm/types.js';
import { estimateTokens } from '../providers/llm/types.js';
import { neutraliseReferences, type AnswerFormat, type CandidatePage, type ScoredSentence } from './extractive.js';
import { PartialJsonField } from './partial-json.js';
import { contentTerms, stripMarkdown } from './text.js';

export interface Passage {
  /** 1-based, as the prompt numbers it. */
  number: number;
  page: CandidatePage;
  text: string;
}

export interface GroundedAnswer {
  answerable: boolean;
  /** With markers [n] where n is a passage number. */
  answer: string;
  /** Passage numbers cited (with a supported quote), in order of first mention. */
  cited: number[];
  /** Sentence ids the supporting quotes came from, by passage number. */
  sentenceIds: Map<number, number[]>;
}

export class UncitedAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UncitedAnswerError';
  }
}

export const ANSWER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['answerable', 'answer', 'citations'],
  properties: {
    answerable: { type: 'boolean', description: 'false when the passages do not contain the answer' },
    answer: { type: 'string', description: 'The answer, citing passages as [n]' },
    citations: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['passage', 'quote'],
        properties: {
          passage: { type: 'integer', description: 'The number of a cited passage' },
          quote: { type: 'string', description: 'A short exact quote from that passage supporting the answer' },
        },
      },
    },
  },
};

interface ModelAnswer {
  answerable: boolean;
  answer: string;
  citations: { passage: number; quote: string }[];
}

function systemPrompt(format: AnswerFormat): string {
  return `You answer questions using only the numbered passages provided.
Rules:
- Use only facts stated in the passages, never outside knowledge.
- Cite every claim with the number of the passage it comes from in square brackets, e.g. [2]. Cite only passages you used.
- For each passage you cite, add an entry to "citations" with its number and a short quote copied exactly from that passage that supports the claim.
- If the passages do not contain the answer, set "answerable" to false and say briefly that the documents do not answer the question.
- ${format === 'MARKDOWN' ? 'Write the answer in Markdown.' : 'Write the answer as plain text, without any Markdown syntax.'}
Reply with JSON: {"answerable": boolean, "answer": string, "citations": [{"passage": number, "quote": string}]}.`;
}

/** A page's text for the prompt: whole when it fits `capTokens`, else its best sentences in reading order. */
function passageText(page: CandidatePage, scored: ScoredSentence[], capTokens: number): string {
  const whole = page.content.replace(/[ \t]+/g, ' ').replace(/\n{3,}/g, '\n\n').trim();
  if (estimateTokens(whole) <= capTokens) return whole;
  const ranked = scored.filter((s) => s.page.id === page.id).map((s) => s.sentence);
  const rest = page.sentences.filter((s) => !ranked.includes(s));
  const chosen = [];
  let used = 0;
  for (const sentence of [...ranked, ...rest]) {
    const cost = estimateTokens(sentence.content) + 1;
    if (used + cost > capTokens) continue;
    chosen.push(sentence);
    used += cost;
  }
  chosen.sort((a, b) => a.paragraphIndex - b.paragraphIndex || a.sentenceIndex - b.sentenceIndex);
  return chosen.map((s) => s.content).join(' … ');
}

/** Numbered passages under the token budget, most relevant page first. */
export function buildPassages(pages: CandidatePage[], scored: ScoredSentence[], budgetTokens: number): Passage[] {
  const passages: Passage[] = [];
  const perPassage = Math.max(200, Math.min(1500, Math.floor(budgetTokens / Math.max(1, Math.min(pages.length, 6)))));
  let left = budgetTokens;
  for (const page of pages) {
    const text = neutraliseReferences(passageText(page, scored, Math.min(perPassage, left)));
    const cost = estimateTokens(text) + 12;
    if (text === '' || cost > left) break;
    passages.push({ number: passages.length + 1, page, text });
    left -= cost;
  }
  return passages;
}

export function answerMessages(question: string, passages: Passage[], format: AnswerFormat) {
  const blocks = passages.map((p) => `[${p.number}] (document ${p.page.documentId}, page ${p.page.pageNumber})\n${p.text}`);
  return [
    { role: 'system' as const, content: systemPrompt(format) },
    { role: 'user' as const, content: `Passages:\n\n${blocks.join('\n\n')}\n\nQuestion: ${question}` },
  ];
}

function normalise(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

/** Whether a quote is in the text: verbatim up to case, spacing and punctuation, or 75% of its content words. */
export function quoteSupported(quote: string, text: string): boolean {
  const q = normalise(quote);
  if (q === '') return false;
  if (normalise(text).includes(q)) return true;
  const words = contentTerms(quote);
  if (words.length < 3) return false;
  const present = new Set(contentTerms(text));
  return words.filter((w) => present.has(w)).length / words.length >= 0.75;
}

const MARKERS = /\[(\d+(?:\s*[,;]\s*\d+)*)\]/g;

/** Passage numbers in the answer's markers, in order of first mention. */
export function markerNumbers(answer: string): number[] {
  const out: number[] = [];
  for (const m of answer.matchAll(MARKERS)) {
    for (const n of m[1].split(/[,;]/).map((x) => Number(x.trim()))) if (!out.includes(n)) out.push(n);
  }
  return out;
}

/** Rewrites markers through `map` (a number it lacks is dropped; a marker left empty disappears). */
export function rewriteMarkers(answer: string, map: (n: number) => number | null): string {
  const out = answer.replace(MARKERS, (_whole, list: string) => {
    const kept = list
      .split(/[,;]/)
      .map((x) => map(Number(x.trim())))
      .filter((n): n is number => n !== null);
    return Array.from(new Set(kept))
      .map((n) => `[${n}]`)
      .join('');
  });
  return out.replace(/[ \t]+([.,;:!?])/g, '$1').replace(/[ \t]{2,}/g, ' ').trim();
}

function sentenceIdsFor(quotes: string[], page: CandidatePage): number[] {
  const ids: number[] = [];
  for (const quote of quotes) {
    const q = normalise(quote);
    const words = new Set(contentTerms(quote));
    let best: { id: number; score: number } | null = null;
    for (const s of page.sentences) {
      const n = normalise(s.content);
      let score = n.includes(q) || (n.length > 20 && q.includes(n)) ? 1 : 0;
      if (score === 0 && words.size > 0) {
        const terms = contentTerms(s.content);
        score = terms.filter((t) => words.has(t)).length / words.size;
      }
      if (score >= 0.5 && (!best || score > best.score)) best = { id: s.id, score };
    }
    if (best && !ids.includes(best.id)) ids.push(best.id);
  }
  return ids;
}

export interface AnswerDraft {
  /**
   * Told the reply's `answer` text as the model writes it, unchecked: its markers are passage
   * numbers. Nothing is told of a reply that first says it is not answerable.
   */
  onText: (text: string) => void;
  /** Ends the call (the client has gone). */
  signal?: AbortSignal;
}

/** The sink of a streamed grounded answer: the reply's answer field, passed on as it grows. */
function draftSink(draft: AnswerDraft): ChatStreamSink {
  let passedOn = false;
  const forward = (text: string) => {
    if (reader.literals.get('answerable') === 'false') return;
    passedOn = true;
    draft.onText(text);
  };
  let reader = new PartialJsonField('answer', forward);
  return {
    delta: (piece) => reader.push(piece),
    committed: () => passedOn,
    restart: () => {
      reader = new PartialJsonField('answer', forward);
    },
  };
}

/**
 * Asks the model and checks its citations; throws UncitedAnswerError for an answer that cites
 * nothing retrieved. With a draft, the reply is streamed and its answer text told as it comes.
 */
export async function groundedAnswer(
  llm: LlmProvider,
  question: string,
  passages: Passage[],
  format: AnswerFormat,
  draft?: AnswerDraft,
): Promise<GroundedAnswer> {
  const response = await llm.chat({
    messages: answerMessages(question, passages, format),
    jsonSchema: { name: 'grounded_answer', schema: ANSWER_SCHEMA },
    temperature: 0,
    signal: draft?.signal,
    stream: draft && draftSink(draft),
  });
  const reply = response.json as ModelAnswer;
  if (!reply.answerable) return { answerable: false, answer: '', cited: [], sentenceIds: new Map() };

  const byNumber = new Map(passages.map((p) => [p.number, p]));
  const quotes = new Map<number, string[]>();
  for (const c of reply.citations) {
    const passage = byNumber.get(c.passage);
    // Checked against the whole retrieved page, not only the prompt's excerpt of it.
    if (passage && quoteSupported(c.quote, passage.page.content)) quotes.set(c.passage, [...(quotes.get(c.passage) ?? []), c.quote]);
  }
  const supported = new Set(quotes.keys());
  let answer = rewriteMarkers(reply.answer, (n) => (supported.has(n) ? n : null));
  const inText = markerNumbers(answer);
  const cited = [...inText, ...Array.from(supported).filter((n) => !inText.includes(n)).sort((a, b) => a - b)];
  if (cited.length === 0) {
    throw new UncitedAnswerError('the model answered without a citation found in the retrieved passages');
  }
  // Cited by a verified quote but never marked in the text: the markers go at the end.
  const unmarked = cited.filter((n) => !inText.includes(n));
  if (unmarked.length > 0) answer = `${answer} ${unmarked.map((n) => `[${n}]`).join('')}`;
  if (format === 'PLAIN_TEXT') answer = stripMarkdown(answer).replace(/\n{3,}/g, '\n\n').trim();
  if (answer.replace(MARKERS, '').trim() === '') throw new UncitedAnswerError('the model gave an empty answer');
  const sentenceIds = new Map(cited.map((n) => [n, sentenceIdsFor(quotes.get(n) ?? [], byNumber.get(n)!.page)]));
  return { answerable: true, answer, cited, sentenceIds };
}
