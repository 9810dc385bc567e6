// What an answer is built from: the stored sentences of retrieved pages (with their ids),
// the metadata of their documents, and which question words the workspace knows at all.
import { sql, type Kysely } from 'kysely';
import { TEXT_SEARCH_CONFIG } from './pages.js';
import type { Database } from './schema.js';

export interface StoredSentence {
  id: number;
  pageId: number;
  paragraphIndex: number;
  sentenceIndex: number;
  content: string;
}

/** Sentences of the pages, in reading order within each page. */
export async function sentencesOfPages(db: Kysely<Database>, pageIds: number[]): Promise<Map<number, StoredSentence[]>> {
  const byPage = new Map<number, StoredSentence[]>(pageIds.map((id) => [id, []]));
  if (pageIds.length === 0) return byPage;
  const rows = await db
    .selectFrom('paragraphs')
    .select(['page_id', 'paragraph_index', 'sentences', 'sentence_ids'])
    .where('page_id', 'in', pageIds)
    .orderBy('page_id')
    .orderBy('paragraph_index')
    .execute();
  for (const r of rows) {
    const list = byPage.get(r.page_id);
    r.sentences.forEach((content, sentenceIndex) =>
      list?.push({ id: Number(r.sentence_ids[sentenceIndex]), pageId: r.page_id, paragraphIndex: r.paragraph_index, sentenceIndex, content }),
    );
  }
  return byPage;
}

export async function documentMetadata(db: Kysely<Database>, documentIds: number[]): Promise<Map<number, Record<string, unknown>>> {
  if (documentIds.length === 0) return new Map();
  const rows = await db.selectFrom('documents').select(['id', 'metadata']).where('id', 'in', documentIds).execute();
  return new Map(rows.map((r) => [Number(r.id), r.metadata]));
}

/**
 * Which of the words occur on some page of the workspace (full-text match with the pages'
 * configuration, so "payments" finds "payment"); words the configuration ignores count as known.
 */
export async function knownWords(db: Kysely<Database>, workspaceId: number, words: string[]): Promise<Set<string>> {
  if (words.length === 0) return new Set();
  const result = await sql<{ w: string; known: boolean }>`
    SELECT w, (numnode(plainto_tsquery(${TEXT_SEARCH_CONFIG}::regconfig, w)) = 0 OR EXISTS (
      SELECT 1 FROM pages p
      WHERE p.workspace_id = ${workspaceId} AND p.tsv @@ plainto_tsquery(${TEXT_SEARCH_CONFIG}::regconfig, w)
    )) AS known
    FROM unnest(${words}::text[]) AS w
  `.execute(db);
  return new Set(result.rows.filter((r) => r.known).map((r) => r.w));
}
