// The stored form of an embedding: its float32 values' little-endian bytes, without a copy.
import { describe, expect, it } from 'vitest';
import { encodeEmbedding } from '../../src/store/embedding-bytes.js';

describe('embedding bytes', () => {
  it("are the vector's float32 values, little-endian, a view of its memory", () => {
    const vector = Float32Array.from({ length: 1536 }, (_, i) => Math.sin(i) * 1e3 + 1 / (i + 1));
    const bytes = encodeEmbedding(vector.subarray(2, 6));
    expect(bytes.length).toBe(16);
    expect(bytes.readFloatLE(4)).toBe(vector[3]);
    expect(bytes.buffer).toBe(vector.buffer);
  });
});
