// FetchError and the messages users see when a fetch fails: HTTP status answers, size and time
// limits, cancellation, and the Node error codes of connections that went wrong.
import http from 'node:http';
import type { Fetch } from './context.js';

/** A failed fetch with a message fit for users; `transient` says whether a retry may succeed. */
export class FetchError extends Error {
  readonly transient: boolean;

  constructor(message: string, transient: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FetchError';
    this.transient = transient;
  }
}

function formatSize(bytes: number): string {
  const round = (value: number) => String(Math.round(value * 10) / 10);
  if (bytes >= 1024 * 1024) return `${round(bytes / (1024 * 1024))} MB`;
  if (bytes >= 1024) return `${round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

function formatDuration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

export function tooLarge(url: URL, maxBytes: number): FetchError {
  return new FetchError(`The file at ${url.href} is larger than ${formatSize(maxBytes)}`, false);
}

export function statusError(url: URL, status: number): FetchError {
  const reason = http.STATUS_CODES[status];
  const answer = reason ? `${status} ${reason}` : String(status);
  if (status >= 300 && status < 400) {
    return new FetchError(`The server answered ${answer} for ${url.href} without a usable redirect`, false);
  }
  // 408 and 429 ask the client to come back later, like the 5xx answers.
  const transient = status >= 500 || status === 408 || status === 429;
  return new FetchError(`The server answered ${answer} for ${url.href}`, transient);
}

export function cancelled(ctx: Fetch, reason: unknown): FetchError {
  return new FetchError(`Fetching ${ctx.originalUrl} was cancelled`, true, { cause: reason });
}

const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** Turns whatever went wrong into a FetchError with a message fit for users. */
export function toFetchError(ctx: Fetch, url: URL, error: unknown, cancelReason: unknown): FetchError {
  if (ctx.stop === 'cancelled') return cancelled(ctx, cancelReason);
  if (ctx.stop === 'connect') {
    return new FetchError(`Could not connect to ${ctx.host} within ${formatDuration(ctx.connectTimeoutMs)}`, true, {
      cause: error,
    });
  }
  if (ctx.stop === 'deadline') {
    const detail =
      ctx.phase === 'connecting'
        ? `while connecting to ${ctx.host}`
        : ctx.phase === 'waiting'
          ? `waiting for ${ctx.host} to answer`
          : `while downloading (${formatSize(ctx.received)} had arrived)`;
    const limit = formatDuration(ctx.totalTimeoutMs);
    return new FetchError(`Fetching ${ctx.originalUrl} timed out after ${limit} ${detail}`, true, { cause: error });
  }
  if (error instanceof FetchError) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  const host = url.host;
  const options = { cause: error };
  if (code === 'ENOTFOUND' || code === 'ENODATA') {
    return new FetchError(`The host ${url.hostname} was not found (DNS)`, false, options);
  }
  if (code === 'ECONNREFUSED') return new FetchError(`${host} refused the connection for ${url.href}`, true, options);
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    const when = ctx.phase === 'downloading' ? 'before the whole file arrived' : 'before it answered';
    return new FetchError(`The connection to ${host} was closed ${when} (${url.href})`, true, options);
  }
  if (TRANSIENT_CODES.has(code)) {
    return new FetchError(`Could not reach ${host} for ${url.href} (${code})`, true, options);
  }
  if (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR__ERROR_FORMAT')) {
    return new FetchError(`The server sent a corrupt compressed body for ${url.href}`, false, options);
  }
  if (code.startsWith('HPE_')) {
    return new FetchError(`${host} sent a malformed HTTP response for ${url.href}`, false, options);
  }
  if (/CERT|SELF_SIGNED|ERR_TLS/.test(code)) {
    return new FetchError(`The TLS certificate of ${host} could not be verified (${code})`, false, options);
  }
  if (code === 'EPROTO' || code.startsWith('ERR_SSL')) {
    return new FetchError(`Could not open a secure (https) connection to ${host}`, false, options);
  }
  return new FetchError(`Fetching ${url.href} failed${code ? ` (${code})` : ''}`, true, options);
}
