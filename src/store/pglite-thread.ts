// The embedded engine's own thread: PGlite runs here, so its statements (PostgreSQL compiled
// to WebAssembly, synchronous while they run) leave the main thread free for requests. It
// takes the protocol's bytes as a client would send them and answers with the server's.
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import {
  batchCallMessages,
  joinBatches,
  readBatchAnswer,
  statusAfter,
  writtenIdsInOrder,
  type BatchAnswer,
  type PackedBatch,
  type WrittenIds,
} from './embedded-batch.js';
import { firstBlockAfter, packedBuffers, pageBatchMessages, readPageBatch, statementOf } from './page-batch.js';
import type { ThreadReply, ThreadRequest, ThreadStart } from './pglite-messages.js';

const start = workerData as ThreadStart;

// Writes wait here, searches mostly do not (the page index answers them in memory): when the
// cores are busy, at this niceness the thread gives searches and /health the larger share
// rather than an equal one. Measured with bench/load (PGlite, searching while ingesting):
// search throughput 0.45 -> 0.54 x searching alone, ingestion 0.50 -> 0.47 x ingesting alone.
const WRITER_NICENESS = 5;
try {
  os.setPriority(WRITER_NICENESS);
} catch {
  // Refused (some sandboxes): the thread runs at the process's priority.
}
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
 * blocks that grow to 256 KiB (the first of `firstBlock` bytes: a caller that knows about how
 * long the answer will be gets it in one). Collected whole (PGlite's own way, a buffer doubled as it
 * fills, then copied), a read of a few megabytes left as much garbage several times over,
 * which this thread's small heap rarely collects: the process grew by hundreds of megabytes.
 */
async function answer(message: Uint8Array, firstBlock = FIRST_BLOCK): Promise<Uint8Array[]> {
  const blocks: Uint8Array[] = [];
  let block = new Uint8Array(firstBlock);
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

// Documents from precomputed embeddings (embedded-batch.ts) wait here and are written together
// when the session is between statements: the next write starts as the last one ends, without
// a round trip through the main thread. The session's transaction status comes from each
// answer's ReadyForQuery; a write never runs inside a transaction node-postgres has open.
// The page index's reads (a load's batches, a catch-up's pages) wait likewise: run inside a
// transaction node-postgres has open, a read would see its writes before they commit, or fail
// with it.
type EmbeddedRequest = Extract<ThreadRequest, { type: 'embedded' }>;
type PagesRequest = Extract<ThreadRequest, { type: 'pages' }>;
const waiting: EmbeddedRequest[] = [];
const reads: PagesRequest[] = [];
/** Documents in one statement at most: bounds its time on this thread. */
const MAX_DOCUMENTS = 128;
let status: string | null = 'I';
let parsed = false;
/** The page statements parsed in the session. */
const readParsed = new Set<string>();
/** The size of the last page read's answer (firstBlockAfter). */
let lastRead = FIRST_BLOCK;
let scheduled = false;

// PostgreSQL's checkpointer process bounds the write-ahead log on a server; PGlite runs none, so
// without this its log grew by every byte written until the next clean stop (15 GB during a
// million-page ingestion, as much as the tables), and a start after a crash replayed all of it.
// The thread checkpoints as the checkpointer would: when the log since the last checkpoint
// reaches max_wal_size / (1 + checkpoint_completion_target), or checkpoint_timeout has passed
// since a checkpoint that more than a segment has followed. Later segments reuse the old files.
/** How often, at most, the log's length is read after writes. */
const CHECKPOINT_CHECK_MS = 1000;
let lastCheckpointCheck = 0;
let checkpointCheckQueued = false;

/** After a request that may have written: queues a look at the log, at most once a CHECKPOINT_CHECK_MS. */
function checkpointSoon(): void {
  const now = Date.now();
  if (checkpointCheckQueued || now - lastCheckpointCheck < CHECKPOINT_CHECK_MS) return;
  lastCheckpointCheck = now;
  checkpointCheckQueued = true;
  queue = queue.then(async () => {
    checkpointCheckQueued = false;
    // Only between transactions: a checkpoint inside one node-postgres has open would be its statement.
    if (status !== 'I') return;
    try {
      const [result] = await pglite.exec(CHECKPOINT_DUE);
      if ((result.rows[0] as { due: boolean }).due) await pglite.exec('CHECKPOINT');
    } catch {
      // Tried again after the next write; the log meanwhile grows as it did before.
    }
    scheduleWaiting();
  });
}

const CHECKPOINT_DUE = `
  SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn) >=
      pg_size_bytes(current_setting('max_wal_size')) / (1 + current_setting('checkpoint_completion_target')::float8)
    OR (now() - checkpoint_time >= current_setting('checkpoint_timeout')::interval
      AND pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn) > pg_size_bytes(current_setting('wal_segment_size')))
    AS due
  FROM pg_control_checkpoint()`;

function scheduleWaiting(): void {
  if (scheduled || (waiting.length === 0 && reads.length === 0) || status !== 'I') return;
  scheduled = true;
  // PGlite runs a statement synchronously, and each message's promise jobs run before the next
  // message is delivered: waiting a turn lets the messages that came meanwhile join this write.
  // It then queues behind the protocol requests already there: a stream of writes must not hold
  // them up.
  setImmediate(() => (queue = queue.then(runWaiting)));
}

/** A waiting page read first, else the waiting writes: a load asks for at most two batches at once, so writes go between them. */
function runWaiting(): Promise<void> {
  scheduled = false;
  return reads.length > 0 ? readWaiting() : writeWaiting();
}

/** Reads the pages the first waiting request selects. */
async function readWaiting(): Promise<void> {
  const request = reads[0];
  if (status !== 'I' || !request) return;
  reads.shift();
  try {
    const blocks = await answer(pageBatchMessages(request.selection, readParsed), firstBlockAfter(lastRead));
    lastRead = blocks.reduce((sum, block) => sum + block.length, 0);
    status = statusAfter(blocks);
    const result = readPageBatch(blocks);
    if (result.parsed) readParsed.add(statementOf(request.selection));
    if (result.error) reply({ type: 'error', id: request.id, error: { name: 'DatabaseError', ...result.error } });
    else reply({ type: 'pages', id: request.id, pages: result.pages }, packedBuffers(result.pages));
  } catch (error) {
    reply({ type: 'error', id: request.id, error: failure(error) });
  }
  scheduleWaiting();
}

const documentsOf = (request: EmbeddedRequest) => request.batches.reduce((sum, batch) => sum + batch.taskIdentifiers.length, 0);
const taskIdentifiersOf = (requests: EmbeddedRequest[]) => requests.flatMap((r) => r.batches.flatMap((batch) => batch.taskIdentifiers));

async function call(batches: PackedBatch[]): Promise<BatchAnswer> {
  const blocks = await answer(batchCallMessages(joinBatches(batches), parsed));
  status = statusAfter(blocks);
  const result = readBatchAnswer(blocks);
  parsed ||= result.parsed;
  return result;
}

/**
 * Tells the main thread that the write of `requests` committed, before their answers and before
 * any other statement: the workspaces written, and the ids written (the main thread hands the
 * pages to the page index from the requests that carried them).
 */
function tellWritten(requests: EmbeddedRequest[], written: WrittenIds): void {
  const workspaces = [...new Set(requests.flatMap((r) => r.batches.flatMap((batch) => batch.workspaceIds)))];
  reply({ type: 'written', workspaces, requests: requests.map((r) => r.id), written });
}

function settle(request: EmbeddedRequest, result: BatchAnswer): void {
  if (result.error) return reply({ type: 'error', id: request.id, error: { name: 'DatabaseError', ...result.error } });
  const written = writtenIdsInOrder(taskIdentifiersOf([request]), result.rows);
  if (written) tellWritten([request], written);
  reply({ type: 'embedded', id: request.id, ids: written?.documentIds ?? null });
}

/** Writes the waiting requests as one statement; when it fails or a webhook watches, each alone. */
async function writeWaiting(): Promise<void> {
  if (status !== 'I' || waiting.length === 0) return;
  let documents = 0;
  let count = 0;
  while (count < waiting.length && (count === 0 || documents + documentsOf(waiting[count]) <= MAX_DOCUMENTS)) documents += documentsOf(waiting[count++]);
  const requests = waiting.splice(0, count);
  try {
    const joined = await call(requests.flatMap((r) => r.batches));
    if (requests.length === 1) {
      settle(requests[0], joined);
    } else if (!joined.error && joined.rows.length > 0) {
      const written = writtenIdsInOrder(taskIdentifiersOf(requests), joined.rows)!;
      tellWritten(requests, written);
      let offset = 0;
      for (const request of requests) {
        reply({ type: 'embedded', id: request.id, ids: written.documentIds.slice(offset, (offset += documentsOf(request))) });
      }
    } else {
      for (const request of requests) settle(request, await call(request.batches));
    }
  } catch (error) {
    for (const request of requests) reply({ type: 'error', id: request.id, error: failure(error) });
  }
  checkpointSoon();
  scheduleWaiting();
}

port.on('message', (request: ThreadRequest) => {
  if (request.type === 'embedded' || request.type === 'pages') {
    if (request.type === 'embedded') waiting.push(request);
    else reads.push(request);
    scheduleWaiting();
    return;
  }
  queue = queue.then(async () => {
    if (request.type === 'close') {
      await pglite.close();
      for (const left of [...waiting.splice(0), ...reads.splice(0)]) {
        reply({ type: 'error', id: left.id, error: { name: 'Error', message: 'the embedded database has closed' } });
      }
      reply({ type: 'closed' });
      port.close();
      return;
    }
    try {
      const blocks = await answer(request.bytes);
      status = statusAfter(blocks);
      reply({ type: 'bytes', id: request.id, blocks }, blocks.map((b) => b.buffer as ArrayBuffer));
    } catch (error) {
      reply({ type: 'error', id: request.id, error: failure(error) });
    }
    checkpointSoon();
    scheduleWaiting();
  });
});
