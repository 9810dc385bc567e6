// Embedding model names the store itself must know. Free of the database client, so that the
// embedded engine's thread can use it without loading Kysely.

/**
 * The offline embedder's first model (providers/embeddings/hashing.ts): a page index keeps
 * which pages hold its vectors, and a search scores those with a query embedded by it, until
 * they are embedded again (reembedding.ts).
 */
export const SUPERSEDED_EMBEDDING_MODEL = 'folio-hashing-v1';
