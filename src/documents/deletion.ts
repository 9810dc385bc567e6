// Deletion by internal id and by external id (latest version or all), and the previews
// that report what a delete would remove without removing anything.
import { sql, type Kysely } from 'kysely';
import { errors } from '../errors.js';
import { compileDateFilter, compileMetadataFilter } from '../search/filter.js';
import type { BlobStore } from '../store/blobs.js';
import { deleteDocuments, findVersions, type DeletedDocument } from '../store/documents.js';
import type { Database } from '../store/schema.js';

export interface DeleteResult {
  deleted_count: number;
  deleted_ids: number[];
}

export interface DeletePreview {
  document_count: number;
  document_ids: number[];
}

export interface DocumentFilters {
  metadata_filter?: Record<string, unknown> | null;
  created_at_filter?: Record<string, unknown> | null;
  updated_at_filter?: Record<string, unknown> | null;
}

export interface DeletionDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
}

/** Removes the stored originals once their documents are gone (best effort: a leftover file is harmless). */
async function removeFiles(blobs: BlobStore, deleted: DeletedDocument[]): Promise<DeleteResult> {
  await Promise.all(deleted.filter((d) => d.source !== 'embedding').map((d) => blobs.delete(d.file_path).catch(() => undefined)));
  return { deleted_count: deleted.length, deleted_ids: deleted.map((d) => d.id) };
}

export async function deleteById(deps: DeletionDeps, workspaceId: number, id: number): Promise<DeleteResult> {
  const deleted = await deleteDocuments(deps.db, workspaceId, [id]);
  if (deleted.length === 0) throw errors.notFound(`Document ${id}`);
  return removeFiles(deps.blobs, deleted);
}

async function versionIds(db: Kysely<Database>, workspaceId: number, externalId: string, latestOnly: boolean): Promise<number[]> {
  const rows = await findVersions(db, workspaceId, externalId, latestOnly);
  if (rows.length === 0) throw errors.notFound(`Document with external_id ${externalId}`);
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

export async function deleteByExternalId(
  deps: DeletionDeps,
  workspaceId: number,
  externalId: string,
  latestOnly: boolean,
): Promise<DeleteResult> {
  const deleted = await deps.db.transaction().execute(async (trx) => {
    const targets = await versionIds(trx, workspaceId, externalId, latestOnly);
    return deleteDocuments(trx, workspaceId, targets);
  });
  return removeFiles(deps.blobs, deleted);
}

export async function previewDeleteByExternalId(
  db: Kysely<Database>,
  workspaceId: number,
  externalId: string,
  latestOnly: boolean,
): Promise<DeletePreview> {
  const ids = await versionIds(db, workspaceId, externalId, latestOnly);
  return { document_count: ids.length, document_ids: ids };
}

/** Ids of the workspace's documents that match all of the given filters, ascending. */
export async function matchingDocumentIds(db: Kysely<Database>, workspaceId: number, filters: DocumentFilters): Promise<number[]> {
  const rows = await db
    .selectFrom('documents as d')
    .select('d.id')
    .where('d.workspace_id', '=', workspaceId)
    .where(compileMetadataFilter(filters.metadata_filter, sql.ref('d.metadata')))
    .where(compileDateFilter(filters.created_at_filter, sql.ref('d.created_at'), 'created_at_filter'))
    .where(compileDateFilter(filters.updated_at_filter, sql.ref('d.updated_at'), 'updated_at_filter'))
    .orderBy('d.id')
    .execute();
  return rows.map((r) => r.id);
}

export async function previewDeleteByFilter(db: Kysely<Database>, workspaceId: number, filters: DocumentFilters): Promise<DeletePreview> {
  const ids = await matchingDocumentIds(db, workspaceId, filters);
  return { document_count: ids.length, document_ids: ids };
}

