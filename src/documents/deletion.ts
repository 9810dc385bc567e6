// Deletion by internal id and by external id (latest version or all), each recording its
// document.deleted webhook event in the same transaction, and the previews that report what a
// delete would remove without removing anything.
import type { Kysely } from 'kysely';
import { errors } from '../errors.js';
import type { BlobStore } from '../store/blobs.js';
import { deleteDocumentsAnd, deleteVersions } from '../store/document-writes.js';
import { findVersions, type DeletedDocument } from '../store/documents.js';
import { compileDocumentFilter, type DocumentFilters } from '../store/filter.js';
import { matchingDocumentIds } from '../store/matching.js';
import type { AlsoWrite, Database } from '../store/schema.js';
import { documentsDeletedEvent, recordEvents } from '../webhooks/events.js';

export interface DeleteResult {
  deleted_count: number;
  deleted_ids: number[];
}

export interface DeletePreview {
  document_count: number;
  document_ids: number[];
}

export interface DeletionDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  /** Told after a deletion recorded webhook deliveries (a delivery loop in this process wakes up). */
  onEvents: () => void;
}

/** Records the deletion's event in its transaction; tells `onEvents` once it is committed. */
async function deletingWithEvent<T>(deps: DeletionDeps, workspaceId: number, remove: (also: AlsoWrite<DeletedDocument[]>) => Promise<T>): Promise<T> {
  let deliveries = 0;
  const result = await remove(async (trx, deleted) => {
    deliveries = await recordEvents(trx, [documentsDeletedEvent(workspaceId, deleted.map((d) => d.id))]);
  });
  if (deliveries > 0) deps.onEvents();
  return result;
}

/** Removes the stored originals once their documents are gone (best effort: a leftover file is harmless). */
async function removeFiles(blobs: BlobStore, deleted: DeletedDocument[]): Promise<DeleteResult> {
  await Promise.all(deleted.filter((d) => d.source !== 'embedding').map((d) => blobs.delete(d.file_path).catch(() => undefined)));
  return { deleted_count: deleted.length, deleted_ids: deleted.map((d) => d.id) };
}

const noVersion = (externalId: string) => errors.notFound(`Document with external_id ${externalId}`);

export async function deleteById(deps: DeletionDeps, workspaceId: number, id: number): Promise<DeleteResult> {
  const deleted = await deletingWithEvent(deps, workspaceId, (also) => deleteDocumentsAnd(deps.db, workspaceId, [id], also));
  if (deleted.length === 0) throw errors.notFound(`Document ${id}`);
  return removeFiles(deps.blobs, deleted);
}

export async function deleteByExternalId(
  deps: DeletionDeps,
  workspaceId: number,
  externalId: string,
  latestOnly: boolean,
): Promise<DeleteResult> {
  const deleted = await deletingWithEvent(deps, workspaceId, (also) => deleteVersions(deps.db, workspaceId, externalId, latestOnly, also));
  if (!deleted) throw noVersion(externalId);
  return removeFiles(deps.blobs, deleted);
}

export async function previewDeleteByExternalId(
  db: Kysely<Database>,
  workspaceId: number,
  externalId: string,
  latestOnly: boolean,
): Promise<DeletePreview> {
  const versions = await findVersions(db, workspaceId, externalId, latestOnly);
  if (versions.length === 0) throw noVersion(externalId);
  const ids = versions.map((r) => r.id).sort((a, b) => a - b);
  return { document_count: ids.length, document_ids: ids };
}

export async function previewDeleteByFilter(db: Kysely<Database>, workspaceId: number, filters: DocumentFilters): Promise<DeletePreview> {
  const ids = await matchingDocumentIds(db, workspaceId, compileDocumentFilter(filters));
  return { document_count: ids.length, document_ids: ids };
}
