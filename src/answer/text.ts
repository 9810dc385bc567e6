// Word-level text helpers for answering and optimisation: tokens, stop words, a light
// English stemmer, whole-word search for catalogue values, and Markdown to plain text.

const WORD = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}]+)?/gu;

/** English function words and question words: they carry no topic. */
export const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both ' +
    'but by can could did do does doing down during each few for from further had has have having he her here hers ' +
    'him his how i if in into is it its itself just me more most my no nor not now of off on once only or other our ' +
    'ours out over own same she should so some such than that the their theirs them then there these they this those ' +
    'through to too under until up very was we were what when where which while who whom why will with would you your ' +
    'yours tell say said says give show explain describe according document documents page pages please much many ' +
    'whether does'
  ).split(' '),
);

export interface Token {
  /** Lower-cased surface form. */
  word: string;
  start: number;
  end: number;
}

export function tokens(text: string): Token[] {
  return Array.from(text.matchAll(WORD), (m) => ({
    word: m[0].toLowerCase().replace(/['’]s$/, ''),
    start: m.index,
    end: m.index + m[0].length,
  }));
}

/** A light stemmer (plural, -ing, -ed, -ly): "payments" and "payment", "signed" and "sign" meet. */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return undouble(word.slice(0, -3));
  if (word.endsWith('ed') && word.length > 4) return undouble(word.slice(0, -2));
  if (word.endsWith('ly') && word.length > 5) return word.slice(0, -2);
  if (word.endsWith('es') && /(?:x|ch|sh|ss|zz)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

function undouble(word: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(word) && !/(?:ll|ss|zz)$/.test(word) ? word.slice(0, -1) : word;
}

/** Stems of the content words of a text, in order (stop words dropped). */
export function contentTerms(text: string): string[] {
  return tokens(text)
    .map((t) => t.word)
    .filter((w) => !STOP_WORDS.has(w))
    .map(stem);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Case-insensitive whole-word occurrences of `phrase` in `text` (internal whitespace
 * matches any whitespace). A number is never matched inside a longer number ("20" in "20.5").
 */
export function findWholeWord(text: string, phrase: string): { start: number; end: number }[] {
  const trimmed = phrase.trim();
  if (trimmed === '') return [];
  const body = trimmed.split(/\s+/).map(escapeRegExp).join('\\s+');
  const pattern = new RegExp(`(?<![\\p{L}\\p{M}\\p{N}]|\\d[.,])${body}(?![\\p{L}\\p{M}\\p{N}]|[.,]\\d)`, 'giu');
  return Array.from(text.matchAll(pattern), (m) => ({ start: m.index, end: m.index + m[0].length }));
}

/** Collapses whitespace and drops spaces before punctuation left by removals. */
export function tidy(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\s+([?.!,;:)\]])/g, '$1')
    .replace(/([([])\s+/g, '$1')
    .replace(/^[\s,;:]+/, '')
    .trim();
}

/** Markdown source to plain text: headings, emphasis, code, links, images, quotes and list markers. */
export function stripMarkdown(text: string): string {
  return text
    .replace(/```[^\n]*\n?/g, '')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[^\p{L}\p{N}*_])[*_]([^*_\n]+)[*_](?=$|[^\p{L}\p{N}*_])/gu, '$1$2')
    .replace(/~~(.+?)~~/g, '$1')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s{0,3}>\s?/gm, '')
    .replace(/^\s*(?:[-*+]|\d{1,3}[.)])\s+/gm, '')
    .replace(/^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$/gm, '')
    .replace(/<\/?[a-zA-Z][^>]*>/g, '');
}
