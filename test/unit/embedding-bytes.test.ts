// Stored embeddings read as base64 text (as PostgreSQL's encode(embedding, 'base64') writes it,
// lines of 76 characters) decode to the vectors encoded, all into one buffer.
import { describe, expect, it } from 'vitest';
import { decodeEmbeddings, encodeEmbedding } from '../../src/store/embedding-bytes.js';

/** PostgreSQL's base64: standard alphabet, a newline after every 76 characters. */
function postgresBase64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/.{76}(?=.)/g, '$&\n');
}

describe('embedding text', () => {
  const vectors = [1, 2, 3].map((k) => Float32Array.from({ length: 1536 }, (_, i) => Math.sin(i * k) * 1e3 + 1 / (i + 1)));

  it('decodes rows with and without embeddings to the encoded vectors, views of one buffer', () => {
    const texts = [vectors[0], null, vectors[1], vectors[2]].map((v) => (v ? postgresBase64(encodeEmbedding(v)) : null));
    expect(texts[0]).toContain('\n');
    const decoded = decodeEmbeddings(texts);
    expect(decoded).toEqual([vectors[0], null, vectors[1], vectors[2]]);
    const buffers = new Set(decoded.filter((v) => v !== null).map((v) => v!.buffer));
    expect(buffers.size).toBe(1);
  });

  it('refuses bytes that are not float32', () => {
    expect(() => decodeEmbeddings([postgresBase64(Buffer.alloc(10))])).toThrow(/10 bytes is not float32/);
    expect(decodeEmbeddings([])).toEqual([]);
  });
});
