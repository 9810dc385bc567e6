// Synchronous ingest of a document from a precomputed embedding: one page, segmented into
// paragraphs and sentences, searchable when this returns, with a completed task recorded.
// Concurrent ingests are written together (group commit): each transaction carries every
// request that arrived while the previous one was being written, so the statements and the
// commit, the costly part on the embedded engine, are shared. Each completed task's webhook
// event is recorded in the same transaction. A batch of documents from one request goes
// through the same queue, so it is written in a few statements, each item with its own outcome.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ValidationError } from '../errors.js';
import { segmentPage } from '../text/segmentation.js';
import { pageLexemesFor } from '../search/page-tsvector.js';
import { pageTsvectorBytes } from '../text/english-tsvector.js';
import { normalizeVector } from '../search/vectors.js';
import { mapInSlices } from '../slices.js';
import { insertEmbeddedDocuments, insertEmbeddedDocumentsUnwatched, type EmbeddedDocument } from '../store/document-writes.js';
import type { NewPage } from '../store/documents.js';
import type { Engine, Store } from '../store/engine.js';
import type { Database } from '../store/schema.js';
import { assertStorableText } from '../text/json-text.js';
import { recordEvents, taskEvent } from '../webhooks/events.js';

/** Recorded as the embedding model of pages whose vectors the caller supplied. */
export const PRECOMPUTED_MODEL = 'precomputed';

/** Documents per transaction: bounds a statement's time on the embedded engine's thread. */
const MAX_BATCH = 128;

/**
 * Batches in flight at once. A few transactions on a server; on the embedded engine every batch
 * goes to its thread as it closes, and the thread joins those waiting there into one statement.
 */
const WRITERS = { server: 4, embedded: 8 } as const;

export interface EmbeddingIngestInput {
  embedding: number[];
  content: string;
  metadata?: Record<string, unknown> | null;
  external_id?: string | null;
}

export interface IngestReceipt {
  task_identifier: string;
  file_path: string;
  external_id: string | null;
  document_id: number;
}

/** The outcome of one document of a batch: its receipt, or why it was not stored. */
export type IngestOutcome = { ok: true; receipt: IngestReceipt } | { ok: false; error: unknown };

/** A validated request waiting for its transaction. */
interface Pending {
  workspaceId: number;
  taskIdentifier: string;
  filePath: string;
  externalId: string | null;
  metadata: Record<string, unknown>;
  page: NewPage;
  resolve: (receipt: IngestReceipt) => void;
  reject: (error: unknown) => void;
}

function prepare(workspaceId: number, input: EmbeddingIngestInput): Omit<Pending, 'resolve' | 'reject'> {
  const vector = normalizeVector(input.embedding);
  if (!vector) {
    throw new ValidationError([
      { path: ['embedding'], msg: 'Embedding must hold finite numbers and not be all zeros', type: 'value_error' },
    ]);
  }
  assertStorableText(input.content, ['content']);
  assertStorableText(input.metadata ?? null, ['metadata']);
  assertStorableText(input.external_id ?? null, ['external_id']);
  const uuid = randomUUID();
  return {
    workspaceId,
    taskIdentifier: `IngestEmbedding:${uuid}`,
    filePath: `embedding/${uuid}`,
    externalId: input.external_id ?? null,
    metadata: input.metadata ?? {},
    page: { pageNumber: 1, content: input.content, embedding: vector, embeddingModel: PRECOMPUTED_MODEL, paragraphs: segmentPage(input.content) },
  };
}

function repeatsExternalId(items: readonly { externalId: string | null }[]): boolean {
  const seen = new Set<string>();
  for (const { externalId } of items) {
    if (externalId === null) continue;
    if (seen.has(externalId)) return true;
    seen.add(externalId);
  }
  return false;
}

const COMPLETED_MESSAGE = 'Completed: 1 page stored and searchable';

const titleOf = (p: Pending) => (p.externalId ? `Ingest embedding ${p.externalId}` : 'Ingest embedding');

/** Writes documents no webhook watches in one statement: their ids, or null when one is watched (nothing written). */
export type UnwatchedWriter = (items: EmbeddedDocument[]) => Promise<number[] | null>;

/** Writes the batch; returns the document ids in order and the webhook deliveries recorded. */
async function writeBatch(db: Kysely<Database>, writeUnwatched: UnwatchedWriter, batch: Pending[]): Promise<{ ids: number[]; deliveries: number }> {
  let deliveries = 0;
  const events = (ids: number[]) =>
    batch.map((p, i) =>
      taskEvent(p.workspaceId, {
        identifier: p.taskIdentifier,
        kind: 'IngestEmbedding',
        title: titleOf(p),
        message: COMPLETED_MESSAGE,
        progress: 100,
        status: 'COMPLETED',
        documentId: ids[i],
      }),
    );
  const items: EmbeddedDocument[] = batch.map((p) => ({
    document: {
      workspaceId: p.workspaceId,
      externalId: p.externalId,
      filePath: p.filePath,
      fileUrl: null,
      metadata: p.metadata,
      source: 'embedding',
      taskIdentifier: p.taskIdentifier,
    },
    page: p.page,
    task: {
      identifier: p.taskIdentifier,
      workspaceId: p.workspaceId,
      kind: 'IngestEmbedding',
      status: 'COMPLETED',
      progress: 100,
      title: titleOf(p),
      message: COMPLETED_MESSAGE,
    },
  }));
  const unwatched = await writeUnwatched(items);
  if (unwatched) return { ids: unwatched, deliveries: 0 };
  const ids = await insertEmbeddedDocuments(db, items, async (trx, written) => {
    deliveries = await recordEvents(trx, events(written));
  });
  return { ids, deliveries };
}

export class EmbeddingIngester {
  private readonly queue: Pending[] = [];
  private writers = 0;

  /** The ingester for `store`: on the embedded engine it writes through the engine's thread. */
  static forStore(store: Pick<Store, 'db' | 'engine' | 'writeEmbedded'>, onEvents?: () => void): EmbeddingIngester {
    return store.writeEmbedded
      ? new EmbeddingIngester(store.db, store.engine, WRITERS.embedded, onEvents, store.writeEmbedded)
      : new EmbeddingIngester(store.db, store.engine, WRITERS.server, onEvents);
  }

  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: Engine,
    /** Batches in flight at once. */
    private readonly maxWriters: number,
    /** Told after a batch recorded webhook deliveries (the delivery loop wakes up). */
    private readonly onEvents: () => void = () => {},
    /** The embedded engine's thread joins the batches waiting there (`Store.writeEmbedded`). */
    private readonly writeUnwatched: UnwatchedWriter = (items) => insertEmbeddedDocumentsUnwatched(db, items),
  ) {}

  /** Stores the document; resolves once its transaction committed. */
  ingest(workspaceId: number, input: EmbeddingIngestInput): Promise<IngestReceipt> {
    const prepared = prepare(workspaceId, input);
    return new Promise((resolve, reject) => {
      this.queue.push({ ...prepared, resolve, reject });
      this.drain();
    });
  }

  /**
   * Stores each document as `ingest` would, the valid ones even when others are not; resolves
   * once every one is committed or has failed, with their outcomes in order. They join the
   * queue together, so they are written MAX_BATCH to a statement. When two of them share an
   * external id, they are written MAX_BATCH at a time, one batch after the other, so that the
   * later item is the later version, as if they had been sent one by one.
   */
  async ingestAll(workspaceId: number, inputs: readonly EmbeddingIngestInput[]): Promise<IngestOutcome[]> {
    const outcomes: IngestOutcome[] = new Array(inputs.length);
    const pending: Pending[] = [];
    const settled: Promise<void>[] = [];
    // A thousand items take a while to prepare (segmentation above all): in slices.
    const prepared = await mapInSlices(inputs, (input) => {
      try {
        return prepare(workspaceId, input);
      } catch (error) {
        return { error };
      }
    });
    prepared.forEach((item, at) => {
      if ('error' in item) {
        outcomes[at] = { ok: false, error: item.error };
        return;
      }
      settled.push(
        new Promise<void>((done) => {
          pending.push({
            ...item,
            resolve: (receipt) => {
              outcomes[at] = { ok: true, receipt };
              done();
            },
            reject: (error) => {
              outcomes[at] = { ok: false, error };
              done();
            },
          });
        }),
      );
    });
    if (repeatsExternalId(pending)) {
      // Written here rather than queued: a batch from the queue may hold part of this one beside
      // other requests, and two batches in flight commit in either order.
      for (let from = 0; from < pending.length; from += MAX_BATCH) {
        this.writers++;
        await this.write(pending.slice(from, from + MAX_BATCH)).finally(() => {
          this.writers--;
          this.drain();
        });
      }
    } else {
      this.queue.push(...pending);
      this.drain();
    }
    await Promise.all(settled);
    return outcomes;
  }

  private drain(): void {
    while (this.writers < this.maxWriters && this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.writers++;
      void this.write(batch).finally(() => {
        this.writers--;
        this.drain();
      });
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      // On the embedded engine pages come with their tsvector where text/english-tsvector.ts
      // covers the text: PostgreSQL's parser was half of the engine's work per page.
      // In slices: a batch of 128 pages in one stretch held every other request.
      const lexemeOf = await pageLexemesFor(this.db, this.engine);
      if (lexemeOf) await mapInSlices(batch, (p) => {
          if (p.page.tsv === undefined) p.page.tsv = pageTsvectorBytes(p.page.content, lexemeOf);
        });
      const { ids, deliveries } = await writeBatch(this.db, this.writeUnwatched, batch);
      if (deliveries > 0) this.onEvents();
      batch.forEach((p, i) =>
        p.resolve({ task_identifier: p.taskIdentifier, file_path: p.filePath, external_id: p.externalId, document_id: ids[i] }),
      );
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      // The failure may belong to one request: each then gets its own answer.
      for (const p of batch) await this.write([p]);
    }
  }
}
