// Documents that satisfy a compiled filter: as a set for search, as an ordered list for
// delete previews, or just whether any does (for a filter the optimiser proposes).
import { sql, type Kysely } from 'kysely';
import type { DocumentFilter } from './filter.js';
import type { Database } from './schema.js';

const TRUE = sql<boolean>`TRUE`;

/**
 * Ids of the workspace's documents that satisfy the filter. They come back as one string:
 * on the embedded engine each row returned costs more than finding it in the index.
 */
export async function eligibleDocumentIds(db: Kysely<Database>, workspaceId: number, filter: DocumentFilter): Promise<Set<number>> {
  const row = await db
    .selectFrom('documents as d')
    .select(sql<string | null>`string_agg(d.id::text, ',')`.as('ids'))
    .where('d.workspace_id', '=', workspaceId)
    .where(filter.condition)
    .executeTakeFirstOrThrow();
  return new Set(row.ids === null ? [] : row.ids.split(',').map(Number));
}

/** Ids of the workspace's documents that satisfy the filter (all without one), ascending. */
export async function matchingDocumentIds(db: Kysely<Database>, workspaceId: number, filter: DocumentFilter | null): Promise<number[]> {
  const rows = await db
    .selectFrom('documents as d')
    .select('d.id')
    .where('d.workspace_id', '=', workspaceId)
    .where(filter?.condition ?? TRUE)
    .orderBy('d.id')
    .execute();
  return rows.map((r) => r.id);
}

/** Whether some document of the workspace satisfies the filter. */
export async function anyDocumentMatches(db: Kysely<Database>, workspaceId: number, filter: DocumentFilter | null): Promise<boolean> {
  const row = await db
    .selectFrom('documents as d')
    .select(sql<number>`1`.as('one'))
    .where('d.workspace_id', '=', workspaceId)
    .where(filter?.condition ?? TRUE)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
