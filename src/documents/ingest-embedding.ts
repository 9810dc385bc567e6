// Synchronous ingest of a document from a precomputed embedding: one page, segmented into
// paragraphs and sentences, searchable when this returns, with a completed task recorded.
// Concurrent ingests are written together (group commit): each transaction carries every
// request that arrived while the previous one was being written, so the statements and the
// commit, the costly part on the embedded engine, are shared.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ValidationError } from '../errors.js';
import { segmentPage } from '../text/segmentation.js';
import { normalizeVector } from '../search/vectors.js';
import { insertEmbeddedDocuments } from '../store/document-writes.js';
import type { NewPage } from '../store/documents.js';
import type { Database } from '../store/schema.js';
import { assertStorableText } from '../text/json-text.js';

/** Recorded as the embedding model of pages whose vectors the caller supplied. */
export const PRECOMPUTED_MODEL = 'precomputed';

/** Documents per transaction: bounds a statement's time on the embedded engine's thread. */
const MAX_BATCH = 128;

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

function writeBatch(db: Kysely<Database>, batch: Pending[]): Promise<number[]> {
  return insertEmbeddedDocuments(
    db,
    batch.map((p) => ({
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
        title: p.externalId ? `Ingest embedding ${p.externalId}` : 'Ingest embedding',
        message: 'Completed: 1 page stored and searchable',
      },
    })),
  );
}

export class EmbeddingIngester {
  private readonly queue: Pending[] = [];
  private writers = 0;

  constructor(
    private readonly db: Kysely<Database>,
    /** Transactions in flight at once: 1 on the embedded engine (one session), more on a server. */
    private readonly maxWriters: number,
  ) {}

  /** Stores the document; resolves once its transaction committed. */
  ingest(workspaceId: number, input: EmbeddingIngestInput): Promise<IngestReceipt> {
    const prepared = prepare(workspaceId, input);
    return new Promise((resolve, reject) => {
      this.queue.push({ ...prepared, resolve, reject });
      this.drain();
    });
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
      const ids = await writeBatch(this.db, batch);
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
