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

const FIRST_BLOCK = 16 * 1024;
const LARGEST_BLOCK = 256 * 1024;

/**
 * The server's answer to the messages, copied out of PGlite's memory as it is written into
 * blocks that grow to 256 KiB. Collected whole (PGlite's own way, a buffer doubled as it
 * fills, then copied), a read of a few megabytes left as much garbage several times over,
 * which this thread's small heap rarely collects: the process grew by hundreds of megabytes.
 */
async function answer(message: Uint8Array): Promise<Uint8Array[]> {
  const blocks: Uint8Array[] = [];
  let block = new Uint8Array(FIRST_BLOCK);
  let used = 0;
  await pglite.execProtocolRawStream(message, {
    onRawData: (chunk) => {
      for (let offset = 0; offset < chunk.length; ) {
        if (used === block.length) {
          blocks.push(block);
          block = new Uint8Array(Math.min(LARGEST_BLOCK, block.length * 4));
          used = 0;
        }
        const n = Math.min(chunk.length - offset, block.length - used);
        block.set(chunk.subarray(offset, offset + n), used);
        used += n;
        offset += n;
      }
    },
  });
  blocks.push(block.subarray(0, used));
  return blocks;
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
      const blocks = await answer(request.bytes);
      reply({ type: 'bytes', id: request.id, blocks }, blocks.map((b) => b.buffer as ArrayBuffer));
    } catch (error) {
      reply({ type: 'error', id: request.id, error: failure(error) });
    }
  });
});
