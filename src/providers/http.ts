// What the OpenAI-compatible clients (embeddings, chat) share about talking to a server:
// reading Retry-After, the server's error message, and a backoff wait that a signal ends.

/** Retry-After as seconds (fractions accepted) or an HTTP date; OpenAI also sends -ms. */
export function retryAfterMs(headers: Headers): number | null {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return null;
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
