import { describe, expect, it } from 'vitest';
import { createCachedEmbedder } from '../../src/providers/embeddings/cache.js';
import { hashEmbed } from '../../src/providers/embeddings/hashing.js';
import type { EmbeddingProvider } from '../../src/providers/embeddings/types.js';

function countingProvider(): EmbeddingProvider & { calls: string[] } {
  const calls: string[] = [];
  return {
    model: 'counting',
    dimensions: 1536,
    calls,
    async embed(texts) {
      calls.push(...texts);
      return texts.map(hashEmbed);
    },
  };
}

describe('createCachedEmbedder', () => {
  it('answers a repeated query from the cache', async () => {
    const provider = countingProvider();
    const cached = createCachedEmbedder(provider);
    const first = await cached.embedQuery('reset password');
    const second = await cached.embedQuery('reset password');
    expect(second).toEqual(first);
    expect(first).toEqual(hashEmbed('reset password'));
    expect(provider.calls).toEqual(['reset password']);
    expect(cached.model).toBe('counting');
  });

  it('hands out copies, so a caller cannot corrupt the cache', async () => {
    const cached = createCachedEmbedder(countingProvider());
    (await cached.embedQuery('q')).fill(0);
    expect(await cached.embedQuery('q')).toEqual(hashEmbed('q'));
  });

  it('evicts the least recently used entry', async () => {
    const provider = countingProvider();
    const cached = createCachedEmbedder(provider, { maxEntries: 2 });
    await cached.embedQuery('a');
    await cached.embedQuery('b');
    await cached.embedQuery('a'); // now b is the least recently used
    await cached.embedQuery('c'); // evicts b
    await cached.embedQuery('a');
    await cached.embedQuery('c');
    expect(provider.calls).toEqual(['a', 'b', 'c']);
    await cached.embedQuery('b');
    expect(provider.calls).toEqual(['a', 'b', 'c', 'b']);
  });

  it('does not cache failures', async () => {
    let fail = true;
    const provider: EmbeddingProvider = {
      model: 'flaky',
      dimensions: 1536,
      async embed(texts) {
        if (fail) throw new Error('down');
        return texts.map(hashEmbed);
      },
    };
    const cached = createCachedEmbedder(provider);
    await expect(cached.embedQuery('q')).rejects.toThrow('down');
    fail = false;
    expect(await cached.embedQuery('q')).toEqual(hashEmbed('q'));
  });

  it('passes batches straight to the provider', async () => {
    const provider = countingProvider();
    const cached = createCachedEmbedder(provider);
    expect(await cached.embed(['x', 'y'])).toEqual([hashEmbed('x'), hashEmbed('y')]);
    await cached.embedQuery('x');
    expect(provider.calls).toEqual(['x', 'y', 'x']);
  });
});
