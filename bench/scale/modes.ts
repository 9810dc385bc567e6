// The searches the scale benchmark times, as the bodies of POST /documents/search/pages (left
// open for top_k and exact): shared by run.ts and searches.ts.
import type { Corpus } from '../search/corpus.js';
import type { VectorSet } from './vectors.js';

export interface Mode {
  name: string;
  body: (vectors: VectorSet, i: number) => string;
}

/** Documents of category 3 are a tenth of them: the filtered searches' share. */
export const CATEGORIES = 10;

export function searchModes(corpus: Corpus): Mode[] {
  const queryText = (i: number) => JSON.stringify(corpus.query(3, i));
  return [
    { name: 'alpha 1', body: (v, i) => `{"embedding":${v.queryJson(i)},"alpha":1` },
    { name: 'alpha 0', body: (_, i) => `{"query":${queryText(i)},"alpha":0` },
    // A query's own embedding is taken at alpha 1 only: the hybrid's text is embedded by the
    // server's embedder, here query-embedder.ts, as a query vector of the set.
    { name: 'alpha 0.5', body: (_, i) => `{"query":${queryText(i)},"alpha":0.5` },
    { name: 'filtered 10%', body: (v, i) => `{"embedding":${v.queryJson(i)},"alpha":1,"metadata_filter":{"category":3}` },
  ];
}
