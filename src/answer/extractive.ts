// The offline answerer: scores every sentence of the retrieved pages against the question
// (weighted term coverage, adjacent-pair bonus, length and page-relevance factors), keeps the
// best few from distinct enough sentences, and writes them out with citation markers.
import type { StoredSentence } from '../store/passages.js';
import { STOP_WORDS, contentTerms, stem, stripMarkdown, tokens } from './text.js';

export type AnswerFormat = 'MARKDOWN' | 'PLAIN_TEXT';

export interface CandidatePage {
  id: number;
  documentId: number;
  pageNumber: number;
  relevance: number;
  content: string;
  sentences: StoredSentence[];
}

export interface ScoredSentence {
  sentence: StoredSentence;
  page: CandidatePage;
  /** Share of the question's (idf-weighted) terms the sentence holds, in [0, 1]. */
  coverage: number;
  /** Distinct question terms the sentence holds. */
  matched: number;
  score: number;
}

/**
 * A sentence answers only when it holds at least this share of the question's weighted
 * terms, or at least MIN_MATCHED distinct terms of it: below both, "nothing relevant".
 */
export const MIN_COVERAGE = 0.5;
export const MIN_MATCHED = 3;
const MAX_SENTENCES = 3;
/** Sentences scoring below this share of the best one are left out. */
const KEEP_RATIO = 0.6;
const MAX_SENTENCE_CHARS = 500;

export const NOT_FOUND_ANSWER = 'No relevant information was found in the documents to answer this question.';

/** The question's terms (stems of content words; all words when it has none), unique, in order, with the words they stand for. */
export function questionTerms(question: string): Map<string, string[]> {
  const words = tokens(question).map((t) => t.word);
  const content = words.filter((w) => !STOP_WORDS.has(w));
  const terms = new Map<string, string[]>();
  for (const word of content.length > 0 ? content : words) {
    const term = stem(word);
    terms.set(term, [...(terms.get(term) ?? []), word]);
  }
  return terms;
}

/**
 * Every sentence of the pages with its score against the question, best first. Weights are
 * idf over the retrieved sentences. A question term found in none of them weighs the most
 * when the workspace does not know it at all (the question is about something else), and as
 * little as the lightest term found when it is known (`known`: the filter or the retrieval
 * left it out, e.g. "report" once a filter picked the report). Without `known`, every term
 * missing from the sentences counts as unknown.
 */
export function scoreSentences(question: string, pages: CandidatePage[], known?: (term: string) => boolean): ScoredSentence[] {
  const terms = Array.from(questionTerms(question).keys());
  if (terms.length === 0) return [];
  const all = pages.flatMap((page) => page.sentences.map((sentence) => ({ page, sentence, words: contentTerms(sentence.content) })));
  const n = all.length;
  const df = new Map<string, number>(terms.map((t) => [t, 0]));
  for (const s of all) for (const t of new Set(s.words)) if (df.has(t)) df.set(t, df.get(t)! + 1);
  const idf = new Map(terms.map((t) => [t, Math.max(0.1, Math.log((n + 1) / (df.get(t)! + 0.5)))]));
  const found = terms.filter((t) => df.get(t)! > 0).map((t) => idf.get(t)!);
  const lightest = found.length > 0 ? Math.min(...found) : Math.log(2);
  for (const t of terms) if (df.get(t) === 0 && known?.(t)) idf.set(t, lightest);
  const total = terms.reduce((sum, t) => sum + idf.get(t)!, 0);
  const pairs = terms.slice(1).map((t, i) => `${terms[i]} ${t}`);
  const bestRelevance = Math.max(1e-9, ...pages.map((p) => p.relevance));

  const scored: ScoredSentence[] = [];
  for (const { page, sentence, words } of all) {
    const present = new Set(words);
    let weight = 0;
    let matched = 0;
    for (const t of terms) {
      if (!present.has(t)) continue;
      weight += idf.get(t)!;
      matched++;
    }
    if (weight === 0) continue;
    const coverage = weight / total;
    const adjacent = new Set(words.slice(1).map((w, i) => `${words[i]} ${w}`));
    const bonus = Math.min(0.3, 0.1 * pairs.filter((p) => adjacent.has(p)).length);
    const length = tokens(sentence.content).length;
    const lengthFactor = length < 4 ? 0.5 : length > 80 ? 0.8 : 1;
    const score = (coverage + bonus) * lengthFactor * (0.75 + 0.25 * (page.relevance / bestRelevance));
    scored.push({ sentence, page, coverage, matched, score });
  }
  return scored.sort((a, b) => b.score - a.score || a.page.relevance - b.page.relevance || a.sentence.id - b.sentence.id);
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let both = 0;
  for (const x of a) if (b.has(x)) both++;
  return both / Math.max(1, a.size + b.size - both);
}

/** The sentences an extractive answer uses: relevant enough, near the best, not repeating each other, from at most `maxPages` pages. */
export function pickSentences(scored: ScoredSentence[], maxPages: number): ScoredSentence[] {
  const relevant = scored.filter((s) => s.coverage >= MIN_COVERAGE || s.matched >= MIN_MATCHED);
  if (relevant.length === 0) return [];
  const best = relevant[0].score;
  const picked: ScoredSentence[] = [];
  const seen: Set<string>[] = [];
  const pages = new Set<number>();
  for (const s of relevant) {
    if (picked.length >= MAX_SENTENCES || s.score < KEEP_RATIO * best) break;
    if (!pages.has(s.page.id) && pages.size >= maxPages) continue;
    const words = new Set(contentTerms(s.sentence.content));
    if (seen.some((w) => jaccard(w, words) > 0.8)) continue;
    picked.push(s);
    seen.push(words);
    pages.add(s.page.id);
  }
  return picked;
}

/**
 * The document's own numeric references ("[6]", "[2-5]", "[7][2]") in parentheses, so that
 * a bracketed number in an answer is always one of its citation markers.
 */
export function neutraliseReferences(text: string): string {
  return text.replace(/\[(\d+(?:\s*[-–,]\s*\d+)*)\]/g, '($1)');
}

/** A sentence as it appears in an answer: one line, bounded, plain when asked. */
export function answerText(sentence: string, format: AnswerFormat): string {
  let text = neutraliseReferences((format === 'PLAIN_TEXT' ? stripMarkdown(sentence) : sentence).replace(/\s+/g, ' ').trim());
  if (text.length > MAX_SENTENCE_CHARS) {
    const cut = text.lastIndexOf(' ', MAX_SENTENCE_CHARS);
    text = `${text.slice(0, cut > MAX_SENTENCE_CHARS / 2 ? cut : MAX_SENTENCE_CHARS)}…`;
  }
  return text;
}

/**
 * The answer from picked sentences, each followed by its source's marker ([n] is sources[n-1]).
 * MARKDOWN: one sentence as a paragraph, several as a bullet list. PLAIN_TEXT: one paragraph
 * without Markdown syntax.
 */
export function composeExtractive(parts: { text: string; marker: number }[], format: AnswerFormat): string {
  if (parts.length === 0) return NOT_FOUND_ANSWER;
  const lines = parts.map((p) => `${answerText(p.text, format)} [${p.marker}]`);
  if (format === 'MARKDOWN' && lines.length > 1) return lines.map((l) => `- ${l}`).join('\n');
  return lines.join(' ');
}
