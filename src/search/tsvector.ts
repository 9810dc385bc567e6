// Reading PostgreSQL's text form of a tsvector (`'lexeme':1,4B 'other''s':2`) into the
// per-lexeme counts the keyword index ranks with.

export interface TermCount {
  lexeme: string;
  /** Positions of the lexeme in the page (PostgreSQL keeps at most 256); 1 when none are stored. */
  tf: number;
}

/**
 * The lexemes of a tsvector's output text with their position counts. The output quotes
 * every lexeme and doubles quotes and backslashes inside it; positions follow a colon,
 * separated by commas, each possibly followed by a weight letter.
 */
export function parseTsvector(text: string): TermCount[] {
  const terms: TermCount[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    while (i < n && text.charCodeAt(i) === 32) i++;
    if (i >= n) break;
    if (text[i] !== "'") throw new Error(`Unexpected character in tsvector at ${i}`);
    const { lexeme, next } = readLexeme(text, i + 1);
    i = next;
    let tf = 1;
    if (text[i] === ':') {
      tf = 1;
      for (i++; i < n && text.charCodeAt(i) !== 32; i++) if (text[i] === ',') tf++;
    }
    terms.push({ lexeme, tf });
  }
  return terms;
}

/**
 * The lexeme whose text starts at `start`, just after its opening quote, with doubled quotes
 * and backslash escapes undone, and the index just after its closing quote.
 */
function readLexeme(text: string, start: number): { lexeme: string; next: number } {
  let lexeme = '';
  let i = start;
  for (;;) {
    if (i >= text.length) throw new Error('Unterminated lexeme in tsvector');
    const c = text[i];
    if (c === "'" && text[i + 1] === "'") {
      lexeme += text.slice(start, i + 1);
      i += 2;
      start = i;
    } else if (c === '\\') {
      lexeme += text.slice(start, i) + text[i + 1];
      i += 2;
      start = i;
    } else if (c === "'") {
      return { lexeme: lexeme + text.slice(start, i), next: i + 1 };
    } else {
      i++;
    }
  }
}
