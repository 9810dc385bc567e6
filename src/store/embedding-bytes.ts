// Embeddings as bytes: the stored form (little-endian float32). Free of the database client, so
// that the embedded engine's thread can use it without loading Kysely.

/** Little-endian float32 bytes, the stored form of an embedding. */
export function encodeEmbedding(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}
