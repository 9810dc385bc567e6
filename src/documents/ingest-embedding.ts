// Synchronous ingest of a document from a precomputed embedding: one page, segmented into
// paragraphs and sentences, searchable when this returns, with a completed task recorded.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ValidationError } from '../errors.js';
import { segmentPage } from '../ingest/segmentation.js';
import { normalizeVector } from '../search/vectors.js';
import { insertDocument, insertPages } from '../store/documents.js';
import type { Database } from '../store/schema.js';
import { insertTask } from '../store/tasks.js';
import { assertStorableText } from './json-text.js';

/** Recorded as the embedding model of pages whose vectors the caller supplied. */
export const PRECOMPUTED_MODEL = 'precomputed';

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

export async function ingestEmbedding(
  db: Kysely<Database>,
  workspaceId: number,
  input: EmbeddingIngestInput,
): Promise<IngestReceipt> {
  const vector = normalizeVector(input.embedding);
  if (!vector) {
    throw new ValidationError([
      { loc: ['body', 'embedding'], msg: 'Embedding must hold finite numbers and not be all zeros', type: 'value_error' },
    ]);
  }
  assertStorableText(input.content, ['body', 'content']);
  assertStorableText(input.metadata ?? null, ['body', 'metadata']);
  assertStorableText(input.external_id ?? null, ['body', 'external_id']);

  const uuid = randomUUID();
  const taskIdentifier = `IngestEmbedding:${uuid}`;
  const filePath = `embedding/${uuid}`;
  const externalId = input.external_id ?? null;
  const paragraphs = segmentPage(input.content);

  const documentId = await db.transaction().execute(async (trx) => {
    const doc = await insertDocument(trx, {
      workspaceId,
      externalId,
      filePath,
      fileUrl: null,
      metadata: input.metadata ?? {},
      source: 'embedding',
      taskIdentifier,
    });
    await insertPages(trx, workspaceId, doc.id, [
      { pageNumber: 1, content: input.content, embedding: vector, embeddingModel: PRECOMPUTED_MODEL, paragraphs },
    ]);
    await insertTask(trx, {
      identifier: taskIdentifier,
      workspaceId,
      kind: 'IngestEmbedding',
      status: 'COMPLETED',
      progress: 100,
      title: externalId ? `Ingest embedding ${externalId}` : 'Ingest embedding',
      message: 'Completed: 1 page stored and searchable',
      documentId: doc.id,
    });
    return doc.id;
  });
  return { task_identifier: taskIdentifier, file_path: filePath, external_id: externalId, document_id: documentId };
}
