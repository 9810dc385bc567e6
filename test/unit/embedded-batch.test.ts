// The statement that writes documents from embeddings gets its arguments packed per batch (on the
// embedded engine, by the main thread) and joined by the writer: joined batches must give exactly
// the arguments of their items packed together, and the protocol messages written in place exactly
// what node-postgres's serializer writes.
import { serialize } from 'pg-protocol';
import { describe, expect, it } from 'vitest';
import {
  batchCallMessages,
  EMBEDDED_BATCH_SQL,
  embeddedBatchArguments,
  joinBatches,
  packBatch,
  type EmbeddedDocument,
} from '../../src/store/embedded-batch.js';
import { pageTsvectorBytes } from '../../src/text/english-tsvector.js';

function item(n: number, content: string, embedding: boolean, paragraphs: string[][]): EmbeddedDocument {
  const identifier = `IngestEmbedding:${n}`;
  return {
    document: {
      workspaceId: 1 + (n % 2),
      externalId: n % 3 === 0 ? null : `doc "${n}" \\ back`,
      filePath: `embedding/${n}`,
      fileUrl: null,
      metadata: { n, quote: 'a "b" \\ c' },
      source: 'embedding',
      taskIdentifier: identifier,
    },
    page: {
      pageNumber: 1,
      content,
      embedding: embedding ? Float32Array.from({ length: 4 }, (_, i) => n + i / 8) : null,
      embeddingModel: 'precomputed',
      paragraphs: paragraphs.map((sentences) => ({ content: sentences.join(' '), sentences })),
      // 'word' at position n: the words before it are stop words.
      tsv: n % 2 === 0 ? pageTsvectorBytes(`${'x '.repeat(n - 1)}word`, (word) => (word === 'word' ? word : null)) : undefined,
    },
    task: { identifier, workspaceId: 1 + (n % 2), kind: 'IngestEmbedding', status: 'COMPLETED', progress: 100, title: `Ingest ${n}`, message: 'Done' },
  };
}

const ITEMS = [
  item(1, 'Plain words. Two sentences.', true, [['Plain words.', 'Two sentences.']]),
  item(2, 'No paragraphs at all', true, []),
  item(3, 'Quotes " and \\ backslashes, {braces}, commas', false, [['Quotes " and \\ backslashes,'], ['{braces}, commas']]),
  item(4, 'Naïve café, 東京 🚀', true, [['Naïve café,', '東京 🚀']]),
  item(5, 'An empty paragraph', true, [[]]),
];
// Not its sentences joined by single spaces: the one paragraph text stored (migration 0016).
ITEMS[3].page.paragraphs[0].content = 'Naïve café,\n東京 🚀';

describe('embedded batch arguments', () => {
  it('joins packed batches into the arguments of all their items', () => {
    const whole = embeddedBatchArguments(ITEMS);
    for (const cut of [1, 2, 3, 4]) {
      expect(joinBatches([packBatch(ITEMS.slice(0, cut)), packBatch(ITEMS.slice(cut))])).toEqual(whole);
    }
    expect(joinBatches(ITEMS.map((one) => packBatch([one])))).toEqual(whole);
  });

  it('gives each vector its 1-based offset in the bytes and each paragraph its document and each sentence its paragraph', () => {
    const args = embeddedBatchArguments(ITEMS);
    expect(args[11]).toBe('{1,17,NULL,33,49}');
    expect(args[12]).toBe('{16,16,NULL,16,16}');
    expect((args[14] as Buffer).byteLength).toBe(64);
    expect(args[24]).toBe('{1,3,3,4,5}');
    expect(args[27]).toBe('{1,1,2,3,4,4}');
    // A binary array of tsvectors: its header (one dimension, NULLs, tsvector, 5 elements from 1), then each element.
    const tsvs = args[28] as Buffer;
    expect([0, 4, 8, 12, 16].map((at) => tsvs.readInt32BE(at))).toEqual([1, 1, 3614, 5, 1]);
    // One lexeme, 'word', NUL-terminated, with one position.
    const word = (n: number) => [0, 0, 0, 1, ...Buffer.from('word\0'), 0, 1, 0, n];
    const element = (bytes: number[]) => [0, 0, 0, bytes.length, ...bytes];
    const NULL = [255, 255, 255, 255];
    expect([...tsvs.subarray(20)]).toEqual([...NULL, ...element(word(2)), ...NULL, ...element(word(4)), ...NULL]);
    expect(args[26]).toBe('{NULL,NULL,NULL,"Naïve café,\n東京 🚀",""}');
    expect(args[1]).toBe('{"doc \\"1\\" \\\\ back","doc \\"2\\" \\\\ back",NULL,"doc \\"4\\" \\\\ back","doc \\"5\\" \\\\ back"}');
  });

  it('writes the messages node-postgres would', () => {
    const args = embeddedBatchArguments(ITEMS);
    // Copied: the serializer's writer reuses its buffer for the next message.
    const bind = Buffer.from(serialize.bind({ statement: 'folio_embedded_batch', values: args }));
    const expected = (parsed: boolean) =>
      new Uint8Array(
        Buffer.concat([
          ...(parsed ? [] : [serialize.parse({ name: 'folio_embedded_batch', text: EMBEDDED_BATCH_SQL, types: [] })]),
          bind,
          serialize.execute(),
          serialize.sync(),
        ]),
      );
    expect(batchCallMessages(args, false)).toEqual(expected(false));
    expect(batchCallMessages(args, true)).toEqual(expected(true));
  });
});
