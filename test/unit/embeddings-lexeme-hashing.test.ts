import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createHashingV2EmbeddingProvider,
  HASHING_V2_MODEL,
  LEXEME_HASHING,
  lexemeEmbed,
  lexemeEmbedder,
} from '../../src/providers/embeddings/lexeme-hashing.js';

const dot = (x: Float32Array, y: Float32Array): number => x.reduce((sum, v, i) => sum + v * y[i], 0);
const cosine = (a: string, b: string): number => dot(lexemeEmbed(a), lexemeEmbed(b));
const norm = (vector: Float32Array): number => Math.sqrt(dot(vector, vector));

describe('lexemeEmbed (offline v2)', () => {
  it('gives a deterministic, normalised 1536-dimensional vector', () => {
    const text = 'Boundary layer transition on a flat plate at supersonic speeds.';
    const vector = lexemeEmbed(text);
    expect(vector).toBeInstanceOf(Float32Array);
    expect(vector.length).toBe(1536);
    expect(norm(vector)).toBeCloseTo(1, 5);
    expect(lexemeEmbed(text)).toEqual(vector);
  });

  it('does not change between releases (stored vectors depend on it)', () => {
    // If this fails on purpose, the embedder needs a new model name, not new digests here.
    const long = Array.from({ length: 400 }, (_, i) => `word${i % 97} other${(i * 7) % 131} the of ${'abcdefghij'[i % 10]}x`).join(' ');
    const digests = Object.fromEntries(
      ['compress', 'How do I reset my password?', 'zorbulation of 1960 plates', '数据库索引可以加快查询速度', long].map((text) => [
        text.slice(0, 20),
        createHash('sha256').update(lexemeEmbed(text)).digest('hex').slice(0, 16),
      ]),
    );
    expect(digests).toEqual({
      compress: 'af531fcad2e4693e',
      'How do I reset my pa': '562c129eee5511a5',
      'zorbulation of 1960 ': '07e78662ea2d069a',
      数据库索引可以加快查询速度: '3ef50b4b3b5845f6',
      'word0 other0 the of ': '1a29b84636279995',
    });
  });

  it('depends on its own text alone: not on the order or company of the texts embedded before', async () => {
    const texts = ['Heat transfer in the laminar boundary layer.', 'Buckling of cylindrical shells.', 'Zorbulation of qwertian plates.'];
    const alone = texts.map((t) => lexemeEmbedder(LEXEME_HASHING)(t));
    const provider = createHashingV2EmbeddingProvider();
    expect(await provider.embed(texts)).toEqual(alone);
    expect(await provider.embed([...texts].reverse())).toEqual([...alone].reverse());
    // Thousands of other texts in between (caches filled and cleared) change nothing.
    await provider.embed(Array.from({ length: 3000 }, (_, i) => `filler${i} text number ${i} zz${i * 7}`));
    expect(await provider.embed(texts)).toEqual(alone);
  });

  it('ignores case, punctuation, stop words and inflection (the keyword index\'s lexemes)', () => {
    expect(lexemeEmbed('Boundary LAYERS, heated!')).toEqual(lexemeEmbed('boundary layer heating'));
    expect(lexemeEmbed('the layers of the boundary')).toEqual(lexemeEmbed('layer boundary'));
  });

  it('embeds empty text and text of stop words only to the zero vector', () => {
    for (const text of ['', '   ', '?!, -- ...', 'the of and']) {
      const vector = lexemeEmbed(text);
      expect(vector.length).toBe(1536);
      expect(vector.every((x) => x === 0)).toBe(true);
    }
  });

  it('weighs a rare word above a common one, by the fixed prior', () => {
    const query = 'photosynthesis house';
    expect(cosine(query, 'A note on photosynthesis.')).toBeGreaterThan(cosine(query, 'A note on the house.') + 0.2);
  });

  it('scores a page higher as it holds more of the query\'s words (monotone)', () => {
    const query = 'supersonic boundary layer transition';
    const pages = [
      'Vibration of cantilever plates.',
      'Vibration of cantilever plates near a boundary.',
      'Vibration of cantilever plates near a boundary layer.',
      'Vibration of cantilever plates near a supersonic boundary layer.',
      'Vibration of cantilever plates near a supersonic boundary layer in transition.',
    ];
    const scores = pages.map((p) => cosine(query, p));
    for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeGreaterThan(scores[i - 1]);
  });

  it('scores texts sharing vocabulary clearly above unrelated texts', () => {
    const query = 'The server compresses files before uploading them to storage.';
    expect(cosine(query, 'Files are compressed by the server prior to upload into storage.')).toBeGreaterThan(0.4);
    expect(Math.abs(cosine(query, 'My grandmother bakes an apple pie every Sunday afternoon.'))).toBeLessThan(0.1);
  });

  it('gives variants of a word the prior lacks some similarity through character n-grams', () => {
    expect(cosine('magnetohydrodynamic', 'magnetohydrodynamical')).toBeGreaterThan(cosine('magnetohydrodynamic', 'banana') + 0.3);
  });

  it('works on non-Latin scripts', () => {
    const cases = [
      ['Как сбросить пароль учётной записи?', 'Инструкция по сбросу пароля для учётной записи', 'Погода завтра будет солнечной и тёплой'],
      ['数据库索引可以加快查询速度', '查询速度取决于数据库索引', '今天天气很好，我们去公园散步'],
    ];
    for (const [text, related, unrelated] of cases) {
      expect(norm(lexemeEmbed(text))).toBeCloseTo(1, 5);
      expect(cosine(text, related)).toBeGreaterThan(cosine(text, unrelated) + 0.2);
    }
  });
});

describe('offline v2 provider', () => {
  it('embeds a batch in order under its model name', async () => {
    const provider = createHashingV2EmbeddingProvider();
    expect(provider.model).toBe(HASHING_V2_MODEL);
    expect(provider.dimensions).toBe(1536);
    expect(await provider.embed(['first text', 'second text', ''])).toEqual([lexemeEmbed('first text'), lexemeEmbed('second text'), new Float32Array(1536)]);
  });

  it('refuses an aborted signal', async () => {
    await expect(createHashingV2EmbeddingProvider().embed(['x'], AbortSignal.abort())).rejects.toThrow();
  });
});
