// Writes that touch several rows of the document aggregate and land together or not at all:
// documents ingested from embeddings with their completed tasks, a metadata patch of the
// latest version, the deletion of documents (by id or an external id's versions). Callers add
// the webhook events a change causes to its transaction (`also`).
import { CompiledQuery, type Kysely } from 'kysely';
import {
  deleteDocuments,
  findVersions,
  insertDocumentPages,
  insertDocuments,
  lockDocument,
  updateMetadata,
  type DeletedDocument,
  type DocumentRow,
} from './documents.js';
import { EMBEDDED_BATCH_SQL, embeddedBatchArguments, writtenIdsInOrder, type EmbeddedDocument, type WrittenRow } from './embedded-batch.js';
import type { AlsoWrite, Database } from './schema.js';
import { insertTasks } from './tasks.js';

export type { EmbeddedDocument } from './embedded-batch.js';

/**
 * Inserts the documents, their pages and their tasks in one transaction, with `also` (their
 * events) given the document ids; returns the document ids in order.
 */
export async function insertEmbeddedDocuments(db: Kysely<Database>, items: EmbeddedDocument[], also?: AlsoWrite<number[]>): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    const ids = await insertDocuments(trx, items.map((item) => item.document));
    await insertDocumentPages(
      trx,
      items.map((item, i) => ({ workspaceId: item.document.workspaceId, documentId: ids[i], pages: [item.page] })),
    );
    await insertTasks(trx, items.map((item, i) => ({ ...item.task, documentId: ids[i] })));
    await also?.(trx, ids);
    return ids;
  });
}

/**
 * As `insertEmbeddedDocuments`, in one statement (its own transaction, one round trip to the
 * database instead of seven), for workspaces whose changes no webhook endpoint watches: returns
 * the document ids in order, or null, writing nothing, when an active endpoint of one of the
 * workspaces would need the changes' events recorded with them.
 */
export async function insertEmbeddedDocumentsUnwatched(db: Kysely<Database>, items: EmbeddedDocument[]): Promise<number[] | null> {
  if (items.length === 0) return [];
  const { rows } = await db.executeQuery(CompiledQuery.raw(EMBEDDED_BATCH_SQL, embeddedBatchArguments(items)));
  return writtenIdsInOrder(items.map((item) => item.document.taskIdentifier), rows as WrittenRow[])?.documentIds ?? null;
}

/** Deletes the workspace's documents of `ids` with `also` (their events) in one transaction; returns what was deleted. */
export async function deleteDocumentsAnd(
  db: Kysely<Database>,
  workspaceId: number,
  ids: number[],
  also?: AlsoWrite<DeletedDocument[]>,
): Promise<DeletedDocument[]> {
  return db.transaction().execute(async (trx) => {
    const deleted = await deleteDocuments(trx, workspaceId, ids);
    if (deleted.length > 0) await also?.(trx, deleted);
    return deleted;
  });
}

/** Deletes the latest version of an external id, or all of them, with `also` (their events); null when it has none. */
export async function deleteVersions(
  db: Kysely<Database>,
  workspaceId: number,
  externalId: string,
  latestOnly: boolean,
  also?: AlsoWrite<DeletedDocument[]>,
): Promise<DeletedDocument[] | null> {
  return db.transaction().execute(async (trx) => {
    const versions = await findVersions(trx, workspaceId, externalId, latestOnly);
    if (versions.length === 0) return null;
    const deleted = await deleteDocuments(trx, workspaceId, versions.map((v) => v.id));
    if (deleted.length > 0) await also?.(trx, deleted);
    return deleted;
  });
}

/**
 * Replaces the metadata of an external id's latest version with `change(current)`, under a row
 * lock so that concurrent changes apply one after the other, none lost; undefined when the
 * external id has no version.
 */
export async function updateLatestMetadata(
  db: Kysely<Database>,
  workspaceId: number,
  externalId: string,
  change: (metadata: Record<string, unknown>) => Record<string, unknown>,
): Promise<DocumentRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const [latest] = await findVersions(trx, workspaceId, externalId, true);
    if (!latest) return undefined;
    const current = await lockDocument(trx, latest.id);
    if (!current) return undefined;
    return updateMetadata(trx, current.id, change(current.metadata));
  });
}
