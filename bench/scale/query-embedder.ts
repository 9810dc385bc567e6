// An OpenAI-compatible embeddings endpoint (`POST /embeddings`) that the benchmark's server is
// configured with, so that a hybrid search's query is embedded as real ones are: by the model
// that made the documents' vectors. Each text becomes a query vector of the set being measured,
// chosen by a hash of the text. The offline embedder's vectors, unrelated to the synthetic
// documents, give every page about the same cosine: the first level's worst case, which real
// queries against their own model's documents are not.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { VectorSet } from './vectors.js';

/** Query vectors of the embedder come from indices above those the timed and recall queries use. */
const FIRST = 1_000_000;

/** FNV-1a of the text's UTF-16 code units. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The set's query vector for `text`, of unit length. */
export function embedQueryText(vectors: VectorSet, text: string): number[] {
  const v = vectors.queryVector(FIRST + (hashOf(text) % FIRST));
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  return Array.from(v, (x) => x / norm);
}

export interface QueryEmbedder {
  /** The base URL to give the server as OPENAI_BASE_URL. */
  url: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1; `vectors()` is the set being measured when a request comes. */
export async function startQueryEmbedder(vectors: () => VectorSet): Promise<QueryEmbedder> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let input: unknown;
      try {
        input = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input?: unknown }).input;
      } catch {
        input = undefined;
      }
      const texts = typeof input === 'string' ? [input] : input;
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings') || !Array.isArray(texts) || !texts.every((t) => typeof t === 'string')) {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"POST /embeddings with input: string or string[]"}}');
        return;
      }
      const data = texts.map((text, index) => ({ object: 'embedding', index, embedding: embedQueryText(vectors(), text) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: 'bench', usage: { prompt_tokens: 0, total_tokens: 0 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
