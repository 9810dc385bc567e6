// The embedded engine's own thread: PGlite runs here, so its statements (PostgreSQL compiled
// to WebAssembly, synchronous while they run) leave the main thread free for requests. It
// takes the protocol's bytes as a client would send them and answers with the server's.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { ThreadReply, ThreadRequest, ThreadStart } from './pglite-messages.js';

const start = workerData as ThreadStart;
const port = parentPort!;

function reply(message: ThreadReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

function failure(error: unknown): { name: string; message: string } {
  return error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) };
}

let pglite: PGlite;
try {
  pglite = await PGlite.create(start.dataDir ?? undefined, {
    startParams: [...PGlite.defaultStartParams, ...start.settings.flatMap((s) => ['-c', s])],
    ...(start.snapshot ? { loadDataDir: start.snapshot } : {}),
  });
  reply({ type: 'ready' });
} catch (error) {
  reply({ type: 'failed', error: failure(error) });
  process.exit(1);
}

// Requests run one at a time in the order they came: they are one session's protocol stream.
let queue: Promise<void> = Promise.resolve();

port.on('message', (request: ThreadRequest) => {
  queue = queue.then(async () => {
    if (request.type === 'close') {
      await pglite.close();
      reply({ type: 'closed' });
      port.close();
      return;
    }
    try {
      const bytes = await pglite.execProtocolRaw(request.bytes);
      // The answer may be a view of PGlite's memory: a copy of its own can be handed over.
      const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
      reply({ type: 'bytes', id: request.id, bytes: own }, [own.buffer as ArrayBuffer]);
    } catch (error) {
      reply({ type: 'error', id: request.id, error: failure(error) });
    }
  });
});
