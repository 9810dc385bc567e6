import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createHashingV1EmbeddingProvider,
  hashEmbed,
  HASHING_V1_MODEL,
} from '../../src/providers/embeddings/hashing.js';

function cosine(a: string, b: string): number {
  const x = hashEmbed(a);
  const y = hashEmbed(b);
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i] * y[i];
  return sum;
}

function norm(vector: Float32Array): number {
  return Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
}

describe('hashEmbed', () => {
  it('gives a deterministic, normalised 1536-dimensional vector', () => {
    const text = 'Folio finds the right page in a thousand documents.';
    const vector = hashEmbed(text);
    expect(vector).toBeInstanceOf(Float32Array);
    expect(vector.length).toBe(1536);
    expect(norm(vector)).toBeCloseTo(1, 5);
    expect(hashEmbed(text)).toEqual(vector);
  });

  it('does not change between releases (stored vectors depend on it)', () => {
    // If this fails on purpose, the embedder needs a new model name, not a new number here.
    const vector = hashEmbed('Folio finds the right page in a thousand documents.');
    let checksum = 0;
    vector.forEach((x, i) => (checksum += x * ((i % 7) + 1)));
    expect(checksum).toBeCloseTo(0.531322, 5);
    expect(vector.filter((x) => x !== 0).length).toBe(105);
  });

  it('gives the same bits for short and long texts as it always has', () => {
    // A query's few keys are summed over the dimensions they touch, a long text's over all of
    // them: both must give what stored page vectors were made with.
    const long = Array.from({ length: 400 }, (_, i) => `word${i % 97} other${(i * 7) % 131} the of ${'abcdefghij'[i % 10]}x`).join(' ');
    const digests = Object.fromEntries(
      ['compress', 'How do I reset my password?', 'the of and', '数据库索引可以加快查询速度', long].map((text) => [
        text.slice(0, 20),
        createHash('sha256').update(hashEmbed(text)).digest('hex').slice(0, 16),
      ]),
    );
    expect(digests).toEqual({
      compress: '4c5e0fc2cb02edac',
      'How do I reset my pa': 'c1aec5c2a67f4626',
      'the of and': '1506277ab3cf2e48',
      数据库索引可以加快查询速度: '33b580373a7169eb',
      'word0 other0 the of ': '04e2429679b8eef1',
    });
  });

  it('ignores case and punctuation', () => {
    expect(hashEmbed('Hello, World!')).toEqual(hashEmbed('hello world'));
  });

  it('embeds empty and punctuation-only text to the zero vector', () => {
    for (const text of ['', '   ', '?!, -- ...']) {
      const vector = hashEmbed(text);
      expect(vector.length).toBe(1536);
      expect(vector.every((x) => x === 0)).toBe(true);
    }
  });

  it('scores texts sharing vocabulary clearly above unrelated texts', () => {
    const query = 'The server compresses files before uploading them to storage.';
    const related = cosine(query, 'Files are compressed by the server prior to upload into storage.');
    const unrelated = cosine(query, 'My grandmother bakes an apple pie every Sunday afternoon.');
    expect(related).toBeGreaterThan(0.3);
    expect(Math.abs(unrelated)).toBeLessThan(0.1);

    const question = 'How do I reset my password?';
    expect(cosine(question, 'Password reset instructions for your account')).toBeGreaterThan(
      cosine(question, 'The quarterly revenue grew by twelve percent.') + 0.3,
    );
  });

  it('does not let shared function words make unrelated texts alike', () => {
    expect(cosine('The cat sat on the mat.', 'A dog is in the garden of the house.')).toBeLessThan(0.1);
  });

  it('gives morphological variants some similarity through character n-grams', () => {
    expect(cosine('compress', 'compression')).toBeGreaterThan(0.15);
    expect(cosine('compress', 'compression')).toBeGreaterThan(cosine('compress', 'banana') + 0.15);
  });

  it('works on non-Latin scripts', () => {
    const cases = [
      [
        'Как сбросить пароль учётной записи?',
        'Инструкция по сбросу пароля для учётной записи',
        'Погода завтра будет солнечной и тёплой',
      ],
      ['数据库索引可以加快查询速度', '查询速度取决于数据库索引', '今天天气很好，我们去公园散步'],
      ['मेरा पासवर्ड कैसे बदलें', 'पासवर्ड बदलने के लिए सेटिंग खोलें', 'कल बारिश होने की संभावना है'],
    ];
    for (const [text, related, unrelated] of cases) {
      expect(norm(hashEmbed(text))).toBeCloseTo(1, 5);
      expect(cosine(text, related)).toBeGreaterThan(cosine(text, unrelated) + 0.2);
    }
  });
});

describe('hashing provider', () => {
  it('embeds a batch in order under its model name', async () => {
    const provider = createHashingV1EmbeddingProvider();
    expect(provider.model).toBe(HASHING_V1_MODEL);
    expect(provider.dimensions).toBe(1536);
    const vectors = await provider.embed(['first text', 'second text', '']);
    expect(vectors).toEqual([hashEmbed('first text'), hashEmbed('second text'), new Float32Array(1536)]);
  });

  it('lets other work run while it embeds a large batch, and gives the same vectors', async () => {
    const provider = createHashingV1EmbeddingProvider();
    const texts = Array.from({ length: 64 }, (_, i) => `page ${i}: ${'boundary layer transition on swept wings '.repeat(150)}`);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const vectors = await provider.embed(texts).finally(() => clearInterval(ticker));
    // 64 pages of 6 KB take well over one slice: the event loop (requests, /health) ran between them.
    expect(turns).toBeGreaterThan(0);
    expect(vectors).toEqual(texts.map(hashEmbed));
  });

  it('refuses an aborted signal', async () => {
    await expect(createHashingV1EmbeddingProvider().embed(['x'], AbortSignal.abort())).rejects.toThrow();
  });
});
