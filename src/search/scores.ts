// The two parts of a page's relevance, each in [0, 1].

/** keyword_score from a keyword rank r: absolute, in [0, 1), 0 when nothing matched. */
export function keywordScore(rank: number): number {
  return rank > 0 ? rank / (rank + 1) : 0;
}

/** The range semanticScore clamps a cosine to. */
export const SEMANTIC_MIN = 0;
export const SEMANTIC_MAX = 1;

/** semantic_score from a cosine: negative similarity counts as none. */
export function semanticScore(cosine: number): number {
  return Math.min(SEMANTIC_MAX, Math.max(SEMANTIC_MIN, cosine));
}
