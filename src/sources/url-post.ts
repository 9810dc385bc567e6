// Sends a JSON body to a URL (webhook deliveries) under the same SSRF guard as fetching a
// document: the host is resolved once, every address vetted (non-public ones refused unless the
// host is allowlisted) and the connection pinned to them. Redirects are not followed (the answer
// is the result), one deadline covers DNS, connect and the response's status line. Errors are
// FetchErrors with messages shown to users.
import { FetchError } from './fetch/errors.js';
import { allowlistOf, guardedRequest, resolveAndVet } from './fetch/guard.js';
import { checkUrlSyntax } from './url-fetch.js';

const ACTION = 'deliver to';

export interface PostOptions {
  /** Hostnames (or literal addresses) allowed past the private-address guard (FOLIO_URL_ALLOWLIST). */
  allowlist: string[];
  /** DNS, connect, sending and the response's status line. */
  timeoutMs: number;
  headers: Record<string, string>;
  signal?: AbortSignal;
}

function guardOf(allowlist: string[]) {
  return { allowlist: allowlistOf(allowlist), controller: new AbortController() };
}

/**
 * Why Folio would refuse to send to `url` (syntax, scheme, a private address not allowlisted,
 * a host that does not resolve), or null: the guard of a delivery, checked ahead of time.
 */
export async function refusalOf(url: string, allowlist: string[], timeoutMs: number): Promise<string | null> {
  const problem = checkUrlSyntax(url);
  if (problem) return problem;
  const guard = guardOf(allowlist);
  const timer = setTimeout(() => guard.controller.abort(), timeoutMs);
  try {
    await resolveAndVet(guard, new URL(url), null, ACTION);
    return null;
  } catch (error) {
    if (error instanceof FetchError) return error.message;
    if (guard.controller.signal.aborted) return `The host of ${url} could not be resolved within ${timeoutMs} ms (DNS)`;
    return `The host of ${url} could not be resolved (DNS): ${(error as NodeJS.ErrnoException).code ?? 'unknown error'}`;
  } finally {
    clearTimeout(timer);
  }
}

/** POSTs `body` to `url` under the guard; resolves with the answer's status code (any), throws FetchError when there is none. */
export async function postGuarded(url: string, body: string, options: PostOptions): Promise<number> {
  const problem = checkUrlSyntax(url);
  if (problem) throw new FetchError(problem, false);
  const target = new URL(url);
  const guard = guardOf(options.allowlist);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    guard.controller.abort();
  }, options.timeoutMs);
  const onCancel = () => guard.controller.abort();
  options.signal?.addEventListener('abort', onCancel, { once: true });
  try {
    const addresses = await resolveAndVet(guard, target, null, ACTION);
    return await send(target, body, options.headers, addresses, guard);
  } catch (error) {
    if (timedOut) throw new FetchError(`No answer from ${target.host} within ${options.timeoutMs / 1000} s`, true, { cause: error });
    if (options.signal?.aborted) throw new FetchError(`Sending to ${target.host} was cancelled`, true, { cause: error });
    throw postError(target, error);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCancel);
  }
}

function send(
  url: URL,
  body: string,
  headers: Record<string, string>,
  addresses: Awaited<ReturnType<typeof resolveAndVet>>,
  guard: ReturnType<typeof guardOf>,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = guardedRequest(guard, {
      url,
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      addresses,
      action: ACTION,
    });
    req.on('response', (res) => {
      // Only the status counts: the body is not read, the connection is not reused.
      res.on('error', () => {});
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', reject);
    req.end(body);
  });
}

function postError(url: URL, error: unknown): FetchError {
  if (error instanceof FetchError) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  const options = { cause: error };
  if (code === 'ENOTFOUND' || code === 'ENODATA') return new FetchError(`The host ${url.hostname} was not found (DNS)`, true, options);
  if (code === 'ECONNREFUSED') return new FetchError(`${url.host} refused the connection`, true, options);
  if (code === 'ECONNRESET' || code === 'EPIPE') return new FetchError(`The connection to ${url.host} was closed before it answered`, true, options);
  if (/CERT|SELF_SIGNED|ERR_TLS/.test(code)) return new FetchError(`The TLS certificate of ${url.host} could not be verified (${code})`, true, options);
  if (code.startsWith('HPE_')) return new FetchError(`${url.host} sent a malformed HTTP response`, true, options);
  return new FetchError(`Could not reach ${url.host}${code ? ` (${code})` : ''}`, true, options);
}
