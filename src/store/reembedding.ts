// Pages whose embedding came from a superseded offline model, and their re-embedding. A page
// embedded again changes in place (its id, paragraphs and sentences stay) and shows in the
// change feed as a deletion followed by an insertion, so every page index drops its old vector
// and reads the new one at its next catch-up.
import { sql, type Kysely } from 'kysely';
import { encodeEmbedding } from './embedding-bytes.js';
import { SUPERSEDED_EMBEDDING_MODEL } from './embedding-models.js';
import type { Database } from './schema.js';

export { SUPERSEDED_EMBEDDING_MODEL };

/** The model as a literal, not a parameter: the planner then matches the pages' partial index (migration 0015). */
const SUPERSEDED = sql.lit(SUPERSEDED_EMBEDDING_MODEL);

/** The workspaces holding pages of the superseded model, in id order. */
export async function workspacesWithSupersededPages(db: Kysely<Database>): Promise<number[]> {
  const result = await sql<{ workspace_id: number }>`
    SELECT DISTINCT workspace_id FROM pages WHERE embedding_model = ${SUPERSEDED} ORDER BY workspace_id
  `.execute(db);
  return result.rows.map((r) => Number(r.workspace_id));
}

/** How many documents of the workspace hold pages of the superseded model. */
export async function countSupersededDocuments(db: Kysely<Database>, workspaceId: number): Promise<number> {
  const result = await sql<{ count: string }>`
    SELECT count(DISTINCT document_id)::text AS count FROM pages WHERE workspace_id = ${workspaceId} AND embedding_model = ${SUPERSEDED}
  `.execute(db);
  return Number(result.rows[0].count);
}

export interface SupersededPage {
  id: number;
  documentId: number;
  content: string;
}

/** The superseded pages of the workspace's first `documents` documents (by id) that hold any. */
export async function supersededPages(db: Kysely<Database>, workspaceId: number, documents: number): Promise<SupersededPage[]> {
  const result = await sql<{ id: number; document_id: number; content: string }>`
    SELECT p.id, p.document_id, p.content FROM pages p
    WHERE p.workspace_id = ${workspaceId} AND p.embedding_model = ${SUPERSEDED}
      AND p.document_id IN (
        SELECT DISTINCT document_id FROM pages
        WHERE workspace_id = ${workspaceId} AND embedding_model = ${SUPERSEDED}
        ORDER BY document_id LIMIT ${documents}
      )
    ORDER BY p.id
  `.execute(db);
  return result.rows.map((r) => ({ id: Number(r.id), documentId: Number(r.document_id), content: r.content }));
}

/**
 * Stores the pages' new embeddings (null: nothing to embed) under `model`, in one transaction,
 * for the pages still of the superseded model. Each such page leaves a tombstone first, then
 * takes a new change number: a catch-up reads the deletion before the insertion.
 */
export async function replaceEmbeddings(
  db: Kysely<Database>,
  pages: readonly { id: number; embedding: Float32Array | null }[],
  model: string,
): Promise<void> {
  if (pages.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await sql`
      INSERT INTO page_tombstones (page_id, workspace_id)
      SELECT id, workspace_id FROM pages
      WHERE id = ANY(${pages.map((p) => p.id)}::bigint[]) AND embedding_model = ${SUPERSEDED_EMBEDDING_MODEL}
      ORDER BY id
    `.execute(trx);
    for (const page of pages) {
      await sql`
        UPDATE pages SET embedding = ${page.embedding ? encodeEmbedding(page.embedding) : null}, embedding_model = ${page.embedding ? model : null},
          change_seq = nextval('page_change_seq'), txid = pg_current_xact_id()
        WHERE id = ${page.id} AND embedding_model = ${SUPERSEDED_EMBEDDING_MODEL}
      `.execute(trx);
    }
  });
}
