// Character error rate: the edit distance (insertions, deletions, substitutions) between a
// recognised text and a reference, divided by the reference's length. Both are compared in
// NFKC with every run of whitespace made one space, so layout (line breaks, blank lines
// between blocks) does not count; reading order does.

export function normaliseForCer(text: string): string {
  return text.normalize('NFKC').replace(/\s+/g, ' ').trim();
}

/** Levenshtein distance over UTF-16 code units, in O(n) memory. */
export function editDistance(a: string, b: string): number {
  if (a.length < b.length) [a, b] = [b, a];
  let prev = new Uint32Array(b.length + 1);
  let cur = new Uint32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const substitution = prev[j - 1] + (ca === b.charCodeAt(j - 1) ? 0 : 1);
      const deletion = prev[j] + 1;
      const insertion = cur[j - 1] + 1;
      cur[j] = substitution < deletion ? (substitution < insertion ? substitution : insertion) : deletion < insertion ? deletion : insertion;
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

export function characterErrorRate(recognised: string, reference: string): number {
  const ref = normaliseForCer(reference);
  if (ref.length === 0) return recognised.trim() === '' ? 0 : 1;
  return editDistance(normaliseForCer(recognised), ref) / ref.length;
}
