// Queries that feed search: the page changes a vector index catches up with, embeddings
// by page, keyword ranking over the stored tsvector, and pages eligible under filters.
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { Database } from './schema.js';
import { decodeEmbedding } from './documents.js';

export interface PageChange {
  kind: 'insert' | 'delete';
  pageId: number;
}

export interface PageChanges {
  /** Every transaction older than this is complete: later reads start from here. */
  xmin: string;
  changes: PageChange[];
}

export interface PageVector {
  id: number;
  documentId: number;
  embedding: Float32Array;
}

/**
 * Inserts and deletions of the workspace's embedded pages by transactions at or after
 * `xmin`, in change order, and the new xmin, all from one snapshot. Re-reading from the
 * oldest transaction that was still running makes sure a write that commits late is seen.
 */
export async function pageChangesSince(db: Kysely<Database>, workspaceId: number, xmin: string): Promise<PageChanges> {
  const result = await sql<{ xmin: string; kind: 'i' | 'd' | null; page_id: number | null }>`
    WITH snap AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin),
    changes AS (
      SELECT 'i' AS kind, p.id AS page_id, p.change_seq FROM pages p
        WHERE p.workspace_id = ${workspaceId} AND p.txid >= ${xmin}::xid8 AND p.embedding IS NOT NULL
      UNION ALL
      SELECT 'd', t.page_id, t.change_seq FROM page_tombstones t
        WHERE t.workspace_id = ${workspaceId} AND t.txid >= ${xmin}::xid8
    )
    SELECT snap.xmin, c.kind, c.page_id FROM snap LEFT JOIN changes c ON true ORDER BY c.change_seq
  `.execute(db);
  const changes: PageChange[] = [];
  for (const row of result.rows) {
    if (row.kind !== null && row.page_id !== null) changes.push({ kind: row.kind === 'i' ? 'insert' : 'delete', pageId: Number(row.page_id) });
  }
  return { xmin: result.rows[0].xmin, changes };
}

export async function pageVectors(db: Kysely<Database>, pageIds: number[]): Promise<PageVector[]> {
  const out: PageVector[] = [];
  for (let i = 0; i < pageIds.length; i += 1000) {
    const rows = await db
      .selectFrom('pages')
      .select(['id', 'document_id', 'embedding'])
      .where('id', 'in', pageIds.slice(i, i + 1000))
      .where('embedding', 'is not', null)
      .execute();
    for (const r of rows) out.push({ id: r.id, documentId: r.document_id, embedding: decodeEmbedding(r.embedding!) });
  }
  return out;
}

/**
 * Every embedded page of a workspace, in batches, read in one snapshot together with the
 * xmin that later catch-ups start from.
 */
export async function loadPageVectors(
  db: Kysely<Database>,
  workspaceId: number,
  onBatch: (count: number, batch: PageVector[]) => void,
): Promise<string> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const snap = await sql<{ xmin: string; count: string }>`
        SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin,
          (SELECT count(*) FROM pages WHERE workspace_id = ${workspaceId} AND embedding IS NOT NULL)::text AS count
      `.execute(trx);
      const { xmin, count } = snap.rows[0];
      let after = 0;
      for (;;) {
        const rows = await trx
          .selectFrom('pages')
          .select(['id', 'document_id', 'embedding'])
          .where('workspace_id', '=', workspaceId)
          .where('embedding', 'is not', null)
          .where('id', '>', after)
          .orderBy('id')
          .limit(2000)
          .execute();
        if (rows.length === 0) break;
        onBatch(
          Number(count),
          rows.map((r) => ({ id: r.id, documentId: r.document_id, embedding: decodeEmbedding(r.embedding!) })),
        );
        after = rows[rows.length - 1].id;
      }
      return xmin;
    });
}

export interface KeywordHit {
  pageId: number;
  rank: number;
}

/** The text search configuration of the stored page vectors (see the migrations). */
export const TEXT_SEARCH_CONFIG = 'english';

/**
 * The constants of the keyword rank r (README, Search): BM25's term saturation K1 and length
 * normalisation B against a fixed reference of L distinct lexemes, inverse document
 * frequencies ln(1 + PRIOR_MASS / frequency) from the fixed word-frequency prior (migration
 * 0005), MISSING_IDF for a lexeme the prior lacks (about a word seen once), and SCALE, which
 * sets r/(r+1) on the scale of the offline embedder's cosines. Tuned on half of Cranfield's
 * queries and checked on the other half (bench/ir-eval).
 */
export const RANK = { K1: 1.2, B: 0.75, L: 40, PRIOR_MASS: 2_000_000, MISSING_IDF: 14, SCALE: 0.02 } as const;

/**
 * Pages of the workspace that match any term of `text`, with their rank, under the
 * document filter and, when given, among `pageIds` only. The query's own lexemes (made by
 * the pages' configuration) are joined with OR, so a page matching any term is a candidate;
 * each matched lexeme adds qtf x idf x tf (K1 + 1) / (tf + K1 (1 - B + B len / L)), where
 * tf counts its positions in the page and len is the page's number of distinct lexemes.
 * Only the query's lexemes of a page are unpacked (setweight + ts_filter), not all of them.
 */
export async function keywordRanks(
  db: Kysely<Database>,
  workspaceId: number,
  text: string,
  eligible: Expression<SqlBool> | null,
  pageIds: number[] | null = null,
): Promise<KeywordHit[]> {
  const { K1, B, L, PRIOR_MASS, MISSING_IDF, SCALE } = RANK;
  const result = await sql<{ id: number; rank: number }>`
    WITH terms AS (
      SELECT u.lexeme, array_length(u.positions, 1) AS qtf,
        coalesce(ln(1 + ${PRIOR_MASS}::float8 / w.frequency), ${MISSING_IDF}::float8) AS idf
      FROM unnest(to_tsvector(${TEXT_SEARCH_CONFIG}::regconfig, ${text})) AS u
        LEFT JOIN word_prior w ON w.lexeme = u.lexeme
      WHERE strpos(u.lexeme, chr(92)) = 0
    ),
    q AS (
      SELECT coalesce(string_agg(quote_literal(lexeme), ' | ')::tsquery, ''::tsquery) AS q, array_agg(lexeme) AS lexemes FROM terms
    )
    SELECT p.id, ${SCALE}::float8 * sum(
      terms.qtf * terms.idf * m.tf * ${K1 + 1}::float8 / (m.tf + ${K1}::float8 * (1 - ${B}::float8 + ${B}::float8 * length(p.tsv) / ${L}::float8))
    ) AS rank
    FROM q, pages p JOIN documents d ON d.id = p.document_id,
      LATERAL (SELECT lexeme, array_length(positions, 1) AS tf FROM unnest(ts_filter(setweight(p.tsv, 'A', q.lexemes), '{a}'))) AS m
      JOIN terms ON terms.lexeme = m.lexeme
    WHERE p.workspace_id = ${workspaceId} AND p.tsv @@ q.q
      AND ${eligible ?? sql<SqlBool>`TRUE`}
      ${pageIds ? sql`AND p.id = ANY(${pageIds}::bigint[])` : sql``}
    GROUP BY p.id
  `.execute(db);
  return result.rows.map((r) => ({ pageId: Number(r.id), rank: Number(r.rank) }));
}

/** Ids of the workspace's documents that satisfy the filter. */
export async function eligibleDocumentIds(db: Kysely<Database>, workspaceId: number, eligible: Expression<SqlBool>): Promise<Set<number>> {
  const rows = await db.selectFrom('documents as d').select('d.id').where('d.workspace_id', '=', workspaceId).where(eligible).execute();
  return new Set(rows.map((r) => r.id));
}

export interface PageContent {
  id: number;
  document_id: number;
  page_number: number;
  content: string;
}

export async function pageContents(db: Kysely<Database>, pageIds: number[]): Promise<PageContent[]> {
  if (pageIds.length === 0) return [];
  return db.selectFrom('pages').select(['id', 'document_id', 'page_number', 'content']).where('id', 'in', pageIds).execute();
}
