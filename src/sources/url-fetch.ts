// Fetches a document by URL (ingest, extraction), guarded against SSRF: http(s) only; every hop's host
// is resolved once, all of its addresses are vetted (loopback, private, link-local, metadata
// and other non-public ranges are refused unless the host is allowlisted) and the connection
// is pinned to a vetted address, so DNS rebinding cannot slip past the check. Redirects are
// followed by hand and re-vetted; a connect timeout and a total deadline bound the time, and
// a byte cap applied after decompression bounds memory. Error messages are shown to users.
// This module follows the hops; the guard, body reading and error messages live in fetch/.
import type dns from 'node:dns';
import type http from 'node:http';
import { ACCEPT_ENCODING } from '../content-codings.js';
import { contentCodings, readBody } from './fetch/body.js';
import { halt, type Fetch } from './fetch/context.js';
import { cancelled, FetchError, statusError, toFetchError, tooLarge } from './fetch/errors.js';
import { allowlistOf, guardedRequest, resolveAndVet } from './fetch/guard.js';
import { filenameFrom, mediaType } from './fetch/response.js';

export { FetchError };

export interface FetchOptions {
  /** Hostnames (or literal addresses) allowed past the private-address guard (FOLIO_URL_ALLOWLIST). */
  allowlist: string[];
  /** Cap on the decoded body, in bytes. */
  maxBytes: number;
  /** DNS, TCP connect and TLS handshake of each hop; default 10 s. */
  connectTimeoutMs?: number;
  /** The whole fetch, redirects and body included; default 60 s. */
  totalTimeoutMs?: number;
  /** Default 5. */
  maxRedirects?: number;
  /** Default 'Folio/1.0'. */
  userAgent?: string;
  signal?: AbortSignal;
}

export interface FetchedResource {
  bytes: Uint8Array;
  /** The response's media type, lowercased, without parameters. */
  contentType: string | null;
  finalUrl: string;
  /** From Content-Disposition, else the last path segment of the final URL. */
  filename: string | null;
}

export const MAX_URL_LENGTH = 2048;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_TOTAL_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_REDIRECTS = 5;
const DEFAULT_USER_AGENT = 'Folio/1.0';

/** Syntax check for the API (answered with 422): an absolute http(s) URL with a host, no credentials. */
export function checkUrlSyntax(url: string): string | null {
  if (url.length > MAX_URL_LENGTH) return `The URL is longer than ${MAX_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'The URL is not a valid absolute URL (it should look like https://example.com/report.pdf)';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `Only http:// and https:// URLs can be fetched, not ${parsed.protocol}`;
  }
  if (parsed.hostname === '') return 'The URL has no host';
  if (parsed.username !== '' || parsed.password !== '') {
    return 'The URL must not contain a user name or password';
  }
  return null;
}

/** Fetches `url` under the SSRF guard and the size and time limits; throws FetchError. */
export async function fetchUrl(url: string, options: FetchOptions): Promise<FetchedResource> {
  const problem = checkUrlSyntax(url);
  if (problem) throw new FetchError(problem, false);
  if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes < 0) {
    throw new TypeError('fetchUrl: maxBytes must be a non-negative integer');
  }
  const start = new URL(url);
  const ctx: Fetch = {
    originalUrl: start.href,
    allowlist: allowlistOf(options.allowlist),
    maxBytes: options.maxBytes,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    totalTimeoutMs: options.totalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS,
    maxRedirects: options.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    controller: new AbortController(),
    stop: null,
    phase: 'connecting',
    host: start.host,
    received: 0,
  };
  const signal = options.signal;
  if (signal?.aborted) throw cancelled(ctx, signal.reason);
  const onCancel = () => halt(ctx, 'cancelled');
  signal?.addEventListener('abort', onCancel, { once: true });
  const deadline = setTimeout(() => halt(ctx, 'deadline'), ctx.totalTimeoutMs);
  let current = start;
  try {
    let via: URL | null = null;
    for (let redirects = 0; ; redirects++) {
      const hop = await fetchOnce(ctx, current, via);
      if ('resource' in hop) return hop.resource;
      if (redirects >= ctx.maxRedirects) {
        const count = `${ctx.maxRedirects} redirect${ctx.maxRedirects === 1 ? '' : 's'}`;
        const next = `the next one pointed to ${hop.location.href}`;
        throw new FetchError(`Gave up on ${ctx.originalUrl} after ${count} (${next})`, false);
      }
      via = current;
      current = hop.location;
    }
  } catch (error) {
    throw toFetchError(ctx, current, error, signal?.reason);
  } finally {
    clearTimeout(deadline);
    signal?.removeEventListener('abort', onCancel);
  }
}

type Hop = { resource: FetchedResource } | { location: URL };

async function fetchOnce(ctx: Fetch, url: URL, via: URL | null): Promise<Hop> {
  ctx.phase = 'connecting';
  ctx.host = url.host;
  const connectTimer = setTimeout(() => halt(ctx, 'connect'), ctx.connectTimeoutMs);
  let req: http.ClientRequest | null = null;
  try {
    const addresses = await resolveAndVet(ctx, url, via);
    const sent = await send(ctx, url, addresses, () => {
      clearTimeout(connectTimer);
      ctx.phase = 'waiting';
    });
    req = sent.req;
    const res = sent.res;
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if ([301, 302, 303, 307, 308].includes(status) && location !== undefined) {
      return { location: redirectTarget(url, location) };
    }
    if (status < 200 || status > 299) throw statusError(url, status);
    const length = res.headers['content-length'];
    const codings = contentCodings(url, res);
    if (codings.length === 0 && length && /^\d+$/.test(length) && Number(length) > ctx.maxBytes) {
      throw tooLarge(url, ctx.maxBytes);
    }
    ctx.phase = 'downloading';
    const bytes = await readBody(ctx, url, res, codings);
    return {
      resource: {
        bytes,
        contentType: mediaType(res.headers['content-type']),
        finalUrl: url.href,
        filename: filenameFrom(res.headers['content-disposition'], url),
      },
    };
  } finally {
    clearTimeout(connectTimer);
    req?.destroy();
  }
}

function redirectTarget(from: URL, location: string): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new FetchError(`${from.href} redirected to an invalid address (${location.slice(0, 200)})`, false);
  }
  const problem = checkUrlSyntax(next.href);
  if (problem) {
    const target = next.href.slice(0, 200);
    throw new FetchError(`${from.href} redirected to ${target}, which cannot be fetched: ${problem}`, false);
  }
  return next;
}

function send(
  ctx: Fetch,
  url: URL,
  addresses: dns.LookupAddress[],
  onConnected: () => void,
): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const headers = { 'user-agent': ctx.userAgent, accept: '*/*', 'accept-encoding': ACCEPT_ENCODING };
    const req = guardedRequest(ctx, { url, method: 'GET', headers, addresses, action: 'fetch', onConnected });
    req.on('response', (res) => {
      res.on('error', () => {}); // read through the body stream, which sees the error
      resolve({ req, res });
    });
    req.on('error', reject);
    req.end();
  });
}
