// The JSON thread (json-thread.ts): parses each body it is sent as the main thread would.
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { ValidationError } from '../errors.js';
import { parseRequestJson } from '../text/json-text.js';
import type { JsonThreadReply, JsonThreadRequest } from './json-thread.js';

/** Parsing a body is the start of its request's work: it gives way to the requests already under way (searches, /health). */
const NICENESS = 5;

try {
  os.setPriority(NICENESS);
} catch {
  // Refused (some sandboxes): the thread runs at the process's priority.
}

const port = parentPort!;

port.on('message', ({ id, text, options }: JsonThreadRequest) => {
  let reply: JsonThreadReply;
  try {
    reply = { id, value: parseRequestJson(text, [], options) };
  } catch (error) {
    reply = error instanceof ValidationError ? { id, issues: error.issues } : { id, error: String((error as Error)?.message ?? error) };
  }
  port.postMessage(reply);
});
