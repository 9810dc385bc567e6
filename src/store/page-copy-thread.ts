// The server engine's thread for the page index's reads (page-copy.ts): it holds a connection of
// its own, runs each read's COPY and packs the rows, and hands the packed arrays over without
// copying. The main thread meanwhile indexes the batch before, instead of reading the
// answer's bytes itself and waiting on a round trip between batches.
import { parentPort, workerData } from 'node:worker_threads';
import { packedBuffers } from './page-batch.js';
import { copyPageReader, type CopyThreadReply, type CopyThreadRequest, type CopyThreadStart } from './page-copy.js';
import { serverPool } from './server-pool.js';

const start = workerData as CopyThreadStart;
const port = parentPort!;

function reply(message: CopyThreadReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

const pool = serverPool(start.connectionString, 1, start.settings);
const read = copyPageReader(pool);
/** Reads asked for and not yet answered: a close waits for them. */
const reading = new Set<Promise<void>>();

port.on('message', (request: CopyThreadRequest) => {
  if (request.type === 'close') {
    void Promise.all(reading)
      .then(() => pool.end())
      .finally(() => reply({ type: 'closed' }));
    return;
  }
  const answered = read(request.selection).then(
    (pages) => reply({ type: 'pages', id: request.id, pages }, packedBuffers(pages)),
    (error: unknown) => {
      const { message, code } = error as { message?: unknown; code?: unknown };
      reply({ type: 'error', id: request.id, error: { message: String(message ?? error), ...(typeof code === 'string' && { code }) } });
    },
  );
  reading.add(answered);
  void answered.finally(() => reading.delete(answered));
});
