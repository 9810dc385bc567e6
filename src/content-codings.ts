// The HTTP content codings Folio's clients ask for and undo (the URL fetcher's and the
// OpenAI-compatible clients'): one table, so both ask for what they can read.
import { pipeline, type Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';

/** The Accept-Encoding a client sends: the codings decoded() undoes. */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

const DECODERS = new Map<string, () => Transform>([
  ['gzip', () => zlib.createGunzip()],
  ['x-gzip', () => zlib.createGunzip()],
  ['deflate', () => zlib.createInflate()],
  ['br', () => zlib.createBrotliDecompress()],
]);

/** Whether decoded() undoes `coding` (trimmed, lower case). */
export function undoes(coding: string): boolean {
  return DECODERS.has(coding);
}

/** `body` with `codings` undone in the order given; an error of any stage ends the last. */
export function decoded(body: Readable, codings: readonly string[]): Readable {
  if (codings.length === 0) return body;
  const chain = codings.map((coding) => DECODERS.get(coding)!());
  pipeline([body, ...chain], () => {});
  return chain[chain.length - 1];
}
