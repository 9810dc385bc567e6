// What the OpenAI-compatible clients (embeddings, chat) share about talking to a server:
// a JSON POST, reading Retry-After, the server's error message, and a backoff wait that a
// signal ends.
import http from 'node:http';
import https from 'node:https';
import { text as readText } from 'node:stream/consumers';
import { ACCEPT_ENCODING, decoded, undoes } from '../content-codings.js';

/** A response header by its lower-case name. */
export type HeaderOf = (name: string) => string | null | undefined;

/** A server's whole answer to a POST. */
export interface PostAnswer {
  status: number;
  header: HeaderOf;
  text: string;
}

/**
 * POSTs a JSON body on node:http(s) with Node's keep-alive agents and reads the whole answer,
 * decompressed; the signal ends the exchange at any point, the body's reading included.
 * Not the built-in fetch: it sends a request a few event-loop turns later and reads its answer
 * in many more, each waiting behind whatever the thread is doing (a search ranking while its
 * query is embedded), which cost a search 1-2 ms against a local embedding server. Redirects
 * are not followed: a 3xx is an answer like any other.
 */
export function postJson(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<PostAnswer> {
  return post(url, headers, body, signal, true);
}

function post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal, resendIfStale: boolean): Promise<PostAnswer> {
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = send(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body), 'accept-encoding': ACCEPT_ENCODING },
        signal,
      },
      (response) => {
        answered = true;
        const encoding = String(response.headers['content-encoding'] ?? '').trim().toLowerCase();
        readText(decoded(response, undoes(encoding) ? [encoding] : [])).then(
          (text) => {
            const header = (name: string) => {
              const value = response.headers[name];
              return Array.isArray(value) ? value.join(', ') : value;
            };
            resolve({ status: response.statusCode ?? 0, header, text });
          },
          reject,
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive connection the server closed as the request left on it: sent again at once
      // on another (Node's advice for request.reusedSocket), as a server's idle timeout is no
      // failure worth a backoff. A second failure is the caller's to retry.
      const stale = request.reusedSocket && !answered && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      if (stale && resendIfStale && !signal.aborted) resolve(post(url, headers, body, signal, false));
      else reject(error);
    });
    request.end(body);
  });
}

/** Retry-After as seconds (fractions accepted) or an HTTP date; OpenAI also sends -ms. */
export function retryAfterMs(header: HeaderOf): number | null {
  const ms = Number(header('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = header('retry-after');
  if (value === null || value === undefined || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** The message of an error body ({error: {message}}, {error}, {message}), else its text. */
export function serverMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof message === 'string' && message !== '') return message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return body.trim().slice(0, 500) || '(empty body)';
}

/** Waits ms; rejects with the signal's reason if it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
