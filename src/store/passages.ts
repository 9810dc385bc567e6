// What an answer is built from: the stored sentences of retrieved pages (with their ids),
// and the metadata of their documents.
import type { Kysely } from 'kysely';
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
