// The document listing: a workspace's documents a page at a time, newest first or in the
// order asked, under the search's filters, each with its version and page count.
import { sql, type Kysely } from 'kysely';
import { DOCUMENT_COLUMNS, type DocumentRow } from './documents.js';
import type { DocumentFilter } from './filter.js';
import { after, pageOf, positionText, type Ordering, type Position, type SortOrder } from './keyset.js';
import type { Database } from './schema.js';

export type DocumentSort = 'created_at' | 'updated_at';

export interface DocumentListQuery {
  sort: DocumentSort;
  order: SortOrder;
  limit: number;
  after: Position | null;
  filter: DocumentFilter | null;
  externalId: string | null;
  ids: number[] | null;
  /** Only the most recent version of each external id (documents without one always count). */
  latestOnly: boolean;
}

export interface ListedDocumentRow extends DocumentRow {
  file_name: string | null;
  content_type: string | null;
  /** 1 for the oldest version of its external id that still exists; 1 without an external id. */
  version: number;
  page_count: number;
  position: string;
}

export async function listDocuments(db: Kysely<Database>, workspaceId: number, query: DocumentListQuery): Promise<{ rows: ListedDocumentRow[]; next: string | null }> {
  const ordering: Ordering = { sort: query.sort, order: query.order };
  const column = sql.ref<Date>(`d.${query.sort}`);
  let select = db
    .selectFrom('documents as d')
    .select([
      ...DOCUMENT_COLUMNS,
      'd.file_name',
      'd.content_type',
      positionText(column).as('position'),
      // Versions are ordered as findVersions orders them: by creation, then id.
      sql<number>`CASE WHEN d.external_id IS NULL THEN 1 ELSE (
        SELECT count(*) FROM documents v
        WHERE v.workspace_id = d.workspace_id AND v.external_id = d.external_id AND (v.created_at, v.id) <= (d.created_at, d.id)
      ) END`.as('version'),
      sql<number>`(SELECT count(*) FROM pages p WHERE p.document_id = d.id)`.as('page_count'),
    ])
    .where('d.workspace_id', '=', workspaceId);
  if (query.filter) select = select.where(query.filter.condition);
  if (query.externalId !== null) select = select.where('d.external_id', '=', query.externalId);
  if (query.ids !== null) select = select.where('d.id', '=', sql<number>`ANY(${query.ids}::bigint[])`);
  if (query.latestOnly) {
    select = select.where(
      sql<boolean>`NOT EXISTS (SELECT 1 FROM documents n WHERE n.workspace_id = d.workspace_id AND n.external_id = d.external_id AND (n.created_at, n.id) > (d.created_at, d.id))`,
    );
  }
  if (query.after) select = select.where(after(column, sql.ref('d.id'), query.order, query.after));
  const rows = await select
    .orderBy(column, query.order)
    .orderBy('d.id', query.order)
    .limit(query.limit + 1)
    .execute();
  return pageOf(
    rows.map((r) => ({ ...r, version: Number(r.version), page_count: Number(r.page_count) })),
    query.limit,
    ordering,
    (r) => ({ at: r.position, key: r.id }),
  );
}
