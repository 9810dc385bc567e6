// Stored embedding bytes decode to the vector encoded, whether the bytes start on a 4-byte
// boundary (a view of them) or not (a copy).
import { describe, expect, it } from 'vitest';
import { decodeEmbedding, encodeEmbedding } from '../../src/store/documents.js';

describe('embedding bytes', () => {
  const vector = Float32Array.from({ length: 1536 }, (_, i) => Math.sin(i) * 1e3 + 1 / (i + 1));

  it('decode to the encoded vector from an aligned buffer of their own', () => {
    const bytes = Buffer.from(encodeEmbedding(vector).toString('hex'), 'hex');
    expect(bytes.byteOffset % 4).toBe(0);
    expect(decodeEmbedding(bytes)).toEqual(vector);
  });

  it('decode to the encoded vector from bytes at an odd offset', () => {
    const padded = Buffer.concat([Buffer.from([7]), encodeEmbedding(vector)]);
    const bytes = padded.subarray(1);
    expect(bytes.byteOffset % 4).not.toBe(0);
    expect(decodeEmbedding(bytes)).toEqual(vector);
  });
});
