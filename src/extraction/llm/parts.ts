// The document cut into parts that fit the model's prompt budget: at paragraph boundaries (a
// longer paragraph at line ends), each marked with its pages, each starting with the end of
// the previous one so that a record cut by a boundary is whole in one of them.
import { estimateTokens } from '../../providers/llm/types.js';

export interface Part {
  text: string;
  firstPage: number;
  lastPage: number;
}

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
