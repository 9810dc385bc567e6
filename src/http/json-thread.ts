// Large JSON request bodies are parsed on a thread of their own: a precomputed embedding's body
// (1,536 numbers, about 30 KB) took its route 0.6 ms of JSON.parse on the thread that answers
// every request, and a batch of a thousand of them 150 ms or more in one stretch. The thread
// runs parseRequestJson as the main thread would (the same checks, the same errors), at a lower
// priority, and hands the value back by structured clone, which reads a JSON value's numbers
// several times faster than JSON.parse reads their digits. Started at the first large body,
// held by the process only while a parse waits; a thread that fails gives way to a parse here.
import type { Worker } from 'node:worker_threads';
import { ValidationError } from '../errors.js';
import { ThreadRequests } from '../store/thread-requests.js';
import { parseRequestJson, type JsonParseOptions } from '../text/json-text.js';
import { startWorker } from '../worker-entry.js';

/** Bodies of at least this many characters are parsed on the thread; smaller ones cost less than the hop. */
export const THREAD_PARSE_CHARS = 16_384;

export interface JsonThreadRequest {
  id: number;
  text: string;
  options: JsonParseOptions;
}

export type JsonThreadReply =
  | { id: number; value: unknown }
  | { id: number; issues: ValidationError['issues'] }
  | { id: number; error: string };

let running: { worker: Worker; requests: ThreadRequests<unknown> } | null = null;

function spawn(): NonNullable<typeof running> {
  const worker = startWorker(import.meta.url, 'json-thread-worker', {});
  const requests = new ThreadRequests<unknown>(worker);
  const started = { worker, requests };
  worker.on('message', (reply: JsonThreadReply) => {
    if ('value' in reply) requests.settle(reply.id, { answer: reply.value });
    else if ('issues' in reply) requests.settle(reply.id, { error: new ValidationError(reply.issues) });
    else requests.settle(reply.id, { error: new ThreadFailure(reply.error) });
  });
  const fail = (message: string) => {
    if (running === started) running = null;
    requests.failAll(new ThreadFailure(message));
  };
  worker.on('error', (error) => fail(error.message));
  worker.on('exit', () => fail('the JSON thread stopped'));
  worker.unref();
  return started;
}

/** The thread could not answer: the caller parses the text itself. */
class ThreadFailure extends Error {}

/** parseRequestJson's value or error for `text`, computed on the JSON thread when the text is large. */
export async function parseRequestJsonAsync(text: string, options: JsonParseOptions): Promise<unknown> {
  if (text.length < THREAD_PARSE_CHARS) return parseRequestJson(text, [], options);
  running ??= spawn();
  try {
    return await running.requests.send((id): JsonThreadRequest => ({ id, text, options }));
  } catch (error) {
    if (error instanceof ThreadFailure) return parseRequestJson(text, [], options);
    throw error;
  }
}
