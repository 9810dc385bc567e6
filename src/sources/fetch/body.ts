// Reading a response body: undoing its content codings and stopping as soon as the decoded
// bytes pass the cap, so a small compressed body cannot expand without bound in memory.
import type http from 'node:http';
import { decoded, undoes } from '../../content-codings.js';
import type { Fetch } from './context.js';
import { FetchError, tooLarge } from './errors.js';

/** The response's content codings in the order to undo them; throws on one we cannot decode. */
export function contentCodings(url: URL, res: http.IncomingMessage): string[] {
  const header = res.headers['content-encoding'];
  if (!header) return [];
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  for (const coding of codings) {
    if (!undoes(coding)) {
      throw new FetchError(`The server sent ${url.href} with an unsupported Content-Encoding "${coding}"`, false);
    }
  }
  // Codings are listed in the order applied, so they are undone in reverse.
  return codings.reverse();
}

/** Reads the decoded body, stopping as soon as it passes the cap (compressed or not). */
export async function readBody(ctx: Fetch, url: URL, res: http.IncomingMessage, codings: string[]): Promise<Uint8Array> {
  const body = decoded(res, codings);
  const onAbort = () => body.destroy(new Error('aborted'));
  if (ctx.controller.signal.aborted) onAbort();
  ctx.controller.signal.addEventListener('abort', onAbort, { once: true });
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > ctx.maxBytes) throw tooLarge(url, ctx.maxBytes);
      chunks.push(chunk);
      ctx.received = total;
    }
  } finally {
    ctx.controller.signal.removeEventListener('abort', onAbort);
    body.destroy();
    res.destroy();
  }
  // A fresh buffer, not a view into Node's shared pool.
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}
