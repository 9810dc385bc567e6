// Embeddings as bytes: the stored form (little-endian float32), and vectors decoded from the
// base64 text the page index reads them as. Free of the database client, so that the embedded
// engine's thread can use it without loading Kysely.

/** Little-endian float32 bytes, the stored form of an embedding. */
export function encodeEmbedding(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/**
 * The float32 vectors of stored embeddings read as base64 text (`embeddingText` in
 * documents.ts; PostgreSQL breaks its lines, which the decoder skips), decoded into one buffer
 * for all of them. Read as bytea, each row came as hex text (half as long again) and a buffer
 * of its own: a 100k-page index load left the main thread's heap ~40 MB larger, fragmented by
 * the freed 6 KiB blocks.
 */
export function decodeEmbeddings(texts: readonly (string | null)[]): (Float32Array | null)[] {
  let bound = 0;
  for (const text of texts) if (text !== null) bound += Math.ceil((text.length * 3) / 4);
  const bytes = Buffer.allocUnsafeSlow(bound);
  let at = 0;
  return texts.map((text) => {
    if (text === null) return null;
    const length = bytes.write(text, at, 'base64');
    if (length % 4 !== 0) throw new Error(`a stored embedding of ${length} bytes is not float32`);
    const vector = new Float32Array(bytes.buffer, bytes.byteOffset + at, length / 4);
    at += length;
    return vector;
  });
}
