// The weight of a lexeme the word-frequency prior lacks. Such lexemes are rarer than anything
// in 51 million words of subtitles, but not all equally specific: a long technical word
// ("magnetohydrodynamic") names one subject, a short token (an abbreviation, a symbol, a
// number) recurs across many. So a lexeme the prior lacks is given a count estimated from its
// form, falling with its length and higher for tokens holding digits, from which each user
// (the keyword rank, the offline embedder) makes its idf as for any other count. Constants
// chosen leave-one-out on three test collections (bench/ir-eval).
export const MISSING = { LOG_COUNT: 3, PER_CHAR: 0.1, DIGITS: 1 } as const;

const HAS_DIGIT = /[0-9]/;

/** The count in the prior to assume for a lexeme it lacks. */
export function missingWordCount(lexeme: string): number {
  if (HAS_DIGIT.test(lexeme)) return MISSING.DIGITS;
  return Math.exp(MISSING.LOG_COUNT - MISSING.PER_CHAR * lexeme.length);
}
