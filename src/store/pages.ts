// Queries that feed search: the page changes the page index catches up with, the pages it
// indexes (embedding and tsvector), a query's lexemes, and the contents of results.
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { RowCode } from './vector-codes.js';

export interface PageChange {
  kind: 'insert' | 'delete';
  pageId: number;
}

/** Where a reader of the workspace's pages stands. */
export interface ReadPosition {
  /** The snapshot it read at, in PostgreSQL's text form. */
  snapshot: string;
  /** Every transaction older than this is complete: later reads start from here. */
  xmin: string;
}

/** The changes read at a position, and that position (where the next read starts). */
export interface PageChanges extends ReadPosition {
  changes: PageChange[];
  /** Whether a document of the workspace was inserted or its metadata updated in that window. */
  documentsChanged: boolean;
}

/**
 * A page as the page index takes it, read in PostgreSQL's binary format (page-batch.ts): its
 * content as UTF-8 bytes (the index writes them to its content file as they are), its tsvector
 * as `tsvectorsend` writes it. Views of a batch's buffers.
 */
export interface IndexedPage {
  id: number;
  documentId: number;
  pageNumber: number;
  content: Uint8Array;
  /** Null for a page without text to embed. */
  embedding: Float32Array | null;
  tsv: Uint8Array;
  /** The embedding's code (vector-codes.ts), where the reader made it. */
  code?: RowCode | null;
  /** Whether the embedding is of the superseded offline model (store/embedding-models.ts). */
  superseded?: boolean;
}

/**
 * Inserts and deletions of the workspace's pages by transactions at or after `since.xmin`, in
 * change order, whether documents changed in that window, and the new position, all from one
 * snapshot. Re-reading from the oldest transaction that was still running makes sure a write
 * that commits late is seen; at `since.snapshot` itself nothing has changed, and nothing is read.
 */
export async function pageChangesSince(db: Kysely<Database>, workspaceId: number, since: ReadPosition): Promise<PageChanges> {
  const result = await sql<{ snapshot: string; xmin: string; documents_changed: boolean; kind: 'i' | 'd' | null; page_id: number | null }>`
    SELECT snapshot, xmin, documents_changed, kind, page_id FROM page_changes_since(${workspaceId}, ${since.xmin}::xid8, ${since.snapshot})
  `.execute(db);
  const changes: PageChange[] = [];
  for (const row of result.rows) {
    if (row.kind !== null && row.page_id !== null) changes.push({ kind: row.kind === 'i' ? 'insert' : 'delete', pageId: Number(row.page_id) });
  }
  const [first] = result.rows;
  return { snapshot: first.snapshot, xmin: first.xmin, changes, documentsChanged: first.documents_changed };
}

/** Pages a statement of the index's load reads. */
const LOAD_BATCH = 500;

/** Which pages a reader reads: a workspace's `limit` pages after page `after`, the pages of `ids`, or the pages of the documents of `documentIds`. */
export type PageSelection =
  | { workspaceId: number; after: number; limit: number }
  | { ids: readonly number[] }
  | { documentIds: readonly number[] };

/** Reads the selected pages, in id order (the store's `readPages`). */
export type PageReader = (selection: PageSelection) => Promise<IndexedPage[]>;

/** The pages of `pageIds` that exist, in id order. */
export async function indexedPages(readPages: PageReader, pageIds: number[]): Promise<IndexedPage[]> {
  const out: IndexedPage[] = [];
  for (let i = 0; i < pageIds.length; i += 1000) out.push(...(await readPages({ ids: pageIds.slice(i, i + 1000) })));
  return out;
}

/** The workspaces that hold pages, in id order (those whose page index a start-up loads). */
export async function workspacesWithPages(db: Kysely<Database>): Promise<number[]> {
  const result = await sql<{ id: number }>`
    SELECT w.id FROM workspaces w WHERE EXISTS (SELECT 1 FROM pages p WHERE p.workspace_id = w.id) ORDER BY w.id
  `.execute(db);
  return result.rows.map((r) => Number(r.id));
}

/**
 * Every page of a workspace, in batches in id order, and the position later catch-ups start
 * from, taken before the first batch. Each batch is a statement of its own, not part of one
 * transaction: on the embedded engine, whose one session a transaction holds, every other
 * statement (ingests, tasks) waited for the whole load, seconds at 50k pages. A batch may so
 * hold pages changed after the position; the catch-up that follows a load reads every change
 * since it, finds such an insert already held (not added twice) and applies such a deletion.
 */
export async function loadIndexedPages(
  db: Kysely<Database>,
  workspaceId: number,
  onBatch: (count: number, batch: IndexedPage[]) => void | Promise<void>,
  readPages: PageReader,
): Promise<ReadPosition> {
  const snap = await sql<{ snapshot: string; xmin: string; count: string }>`
    SELECT pg_current_snapshot()::text AS snapshot, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin,
      (SELECT count(*) FROM pages WHERE workspace_id = ${workspaceId} AND embedding IS NOT NULL)::text AS count
  `.execute(db);
  const { snapshot, xmin, count } = snap.rows[0];
  const batchAfter = (after: number): Promise<IndexedPage[]> => readPages({ workspaceId, after, limit: LOAD_BATCH });
  // The next batch is asked for before this one is indexed: the database reads it (on the
  // embedded engine's thread, or the server) while this thread indexes, not after.
  let next = batchAfter(0);
  for (;;) {
    const rows = await next;
    if (rows.length === 0) break;
    next = rows.length < LOAD_BATCH ? Promise.resolve([]) : batchAfter(rows[rows.length - 1].id);
    // Settled by the next turn of the loop; a failure of this batch's indexing leaves it unawaited.
    next.catch(() => undefined);
    // node-postgres sends the statement a few promise jobs from now: let it go out first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await onBatch(Number(count), rows);
  }
  return { snapshot, xmin };
}

/** The text search configuration of the stored page vectors (see the migrations). */
export const TEXT_SEARCH_CONFIG = 'english';

export interface QueryLexeme {
  lexeme: string;
  /** Occurrences in the query. */
  count: number;
  /** The lexeme's count in the word-frequency prior (migration 0005), null when it lacks it. */
  priorFrequency: number | null;
}

/** Whether `tsv` (a tsvector's text form) is what the pages' configuration makes of `text`, lexemes and positions. */
export async function isTsvectorOf(db: Kysely<Database>, text: string, tsv: string): Promise<boolean> {
  const result = await sql<{ same: boolean }>`SELECT to_tsvector(${TEXT_SEARCH_CONFIG}::regconfig, ${text}) = ${tsv}::tsvector AS same`.execute(db);
  return result.rows[0].same;
}

/** The lexemes of a query as the pages' configuration makes them, with their prior frequencies. */
export async function queryLexemes(db: Kysely<Database>, text: string): Promise<QueryLexeme[]> {
  const result = await sql<{ lexeme: string; count: number | null; frequency: string | null }>`
    SELECT u.lexeme, array_length(u.positions, 1) AS count, w.frequency::text AS frequency
    FROM unnest(to_tsvector(${TEXT_SEARCH_CONFIG}::regconfig, ${text})) AS u
      LEFT JOIN word_prior w ON w.lexeme = u.lexeme
  `.execute(db);
  return result.rows.map((r) => ({
    lexeme: r.lexeme,
    count: r.count ?? 1,
    priorFrequency: r.frequency === null ? null : Number(r.frequency),
  }));
}

/** What a single word becomes under the pages' configuration: each lexeme (none for a stop word) with its prior frequency. */
export interface WordLexeme {
  word: string;
  lexeme: string | null;
  priorFrequency: number | null;
}

/** The lexemes of each word taken alone, one row per word and lexeme (a word without any has one row, lexeme null). */
export async function wordLexemes(db: Kysely<Database>, words: string[]): Promise<WordLexeme[]> {
  const result = await sql<{ word: string; lexeme: string | null; frequency: string | null }>`
    SELECT w.word, u.lexeme, p.frequency::text AS frequency
    FROM unnest(${words}::text[]) AS w(word)
      LEFT JOIN LATERAL unnest(to_tsvector(${TEXT_SEARCH_CONFIG}::regconfig, w.word)) AS u ON true
      LEFT JOIN word_prior p ON p.lexeme = u.lexeme
  `.execute(db);
  return result.rows.map((r) => ({ word: r.word, lexeme: r.lexeme, priorFrequency: r.frequency === null ? null : Number(r.frequency) }));
}

/** The whole word-frequency prior (migration 0005): every lexeme with its frequency. */
export async function wordPrior(db: Kysely<Database>): Promise<Map<string, number>> {
  const result = await sql<{ lexeme: string; frequency: string }>`SELECT lexeme, frequency::text AS frequency FROM word_prior`.execute(db);
  return new Map(result.rows.map((r) => [r.lexeme, Number(r.frequency)]));
}

export interface PageContent {
  id: number;
  document_id: number;
  page_number: number;
  content: string;
}

/** The pages' contents; one array parameter, so the statement's text is the same whatever the count. */
export async function pageContents(db: Kysely<Database>, pageIds: number[]): Promise<PageContent[]> {
  if (pageIds.length === 0) return [];
  return db
    .selectFrom('pages')
    .select(['id', 'document_id', 'page_number', 'content'])
    .where('id', '=', sql<number>`ANY(${pageIds}::bigint[])`)
    .execute();
}
