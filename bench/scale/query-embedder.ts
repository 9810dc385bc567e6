// The embedder the benchmark's server is configured with (OPENAI_BASE_URL), so that a hybrid
// search's query is embedded as real ones are: by the model that made the documents' vectors.
// The test suite's OpenAI-compatible server answers each text with a query vector of the set
// being measured, chosen by a hash of the text. The offline embedder's vectors, unrelated to the
// synthetic documents, give every page about the same cosine: the first level's worst case, which
// real queries against their own model's documents are not.
import { FakeOpenAI } from '../../test/helpers/fake-openai.js';
import type { VectorSet } from './vectors.js';

/** Query vectors of the embedder come from indices above those the timed and recall queries use. */
const FIRST = 1_000_000;

/** FNV-1a of the text's UTF-16 code units. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The set's query vector for `text`. */
function embedQueryText(vectors: VectorSet, text: string): Float32Array {
  return Float32Array.from(vectors.queryVector(FIRST + (hashOf(text) % FIRST)));
}

/** Listens on 127.0.0.1 (its `baseUrl` is the server's OPENAI_BASE_URL); `vectors()` is the set being measured when a request comes. */
export function startQueryEmbedder(vectors: () => VectorSet): Promise<FakeOpenAI> {
  return FakeOpenAI.start({ embed: (text) => embedQueryText(vectors(), text) });
}

/** The environment of a server on a store (its data directory; its database URL, '' for PGlite) whose query embedder is `embedder`. */
export function serverEnv(dataDir: string, databaseUrl: string, embedder: FakeOpenAI): Record<string, string> {
  return { FOLIO_DATA_DIR: dataDir, FOLIO_OCR: 'off', OPENAI_API_KEY: 'bench', OPENAI_BASE_URL: embedder.baseUrl, FOLIO_EMBEDDING_MODEL: 'bench', DATABASE_URL: databaseUrl };
}
