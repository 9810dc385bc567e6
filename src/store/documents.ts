// Queries on documents and their content (pages, paragraphs, sentences).
import { sql, type Kysely, type Transaction } from 'kysely';
import { encodeEmbedding } from './embedding-bytes.js';
import { paragraphContent, storedParagraphContent } from './paragraph-content.js';
import type { Database } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface NewParagraph {
  content: string;
  sentences: string[];
}

export interface NewPage {
  pageNumber: number;
  content: string;
  embedding: Float32Array | null;
  embeddingModel: string | null;
  paragraphs: NewParagraph[];
  /** The page's tsvector in PostgreSQL's binary form when computed beforehand (text/english-tsvector.ts); else the database computes it (migration 0013). */
  tsv?: Buffer | null;
}

export interface NewDocument {
  workspaceId: number;
  externalId: string | null;
  filePath: string;
  fileUrl: string | null;
  metadata: Record<string, unknown>;
  source: string;
  taskIdentifier: string | null;
  fileName?: string | null;
  contentType?: string | null;
}

export interface DocumentRow {
  id: number;
  external_id: string | null;
  file_path: string;
  file_url: string | null;
  source: string;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export const DOCUMENT_COLUMNS = [
  'd.id',
  'd.external_id',
  'd.file_path',
  'd.file_url',
  'd.source',
  'd.metadata',
  'd.created_at',
  'd.updated_at',
] as const;

// Rows per INSERT: well below PostgreSQL's 65535 bind parameters, and small enough that
// one statement on the embedded engine (one session, computing each page's tsvector) keeps
// every other statement waiting for tens of milliseconds, not hundreds.
const ROWS_PER_INSERT = 1000;
const PAGES_PER_INSERT = 50;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function documentValues(doc: NewDocument) {
  return {
    workspace_id: doc.workspaceId,
    external_id: doc.externalId,
    file_path: doc.filePath,
    file_url: doc.fileUrl,
    metadata: JSON.stringify(doc.metadata),
    source: doc.source,
    task_identifier: doc.taskIdentifier,
    file_name: doc.fileName ?? null,
    content_type: doc.contentType ?? null,
  };
}

export async function insertDocument(db: Db, doc: NewDocument): Promise<DocumentRow> {
  return db
    .insertInto('documents')
    .values(documentValues(doc))
    .returning(['id', 'external_id', 'file_path', 'file_url', 'source', 'metadata', 'created_at', 'updated_at'])
    .executeTakeFirstOrThrow();
}

/** Inserts documents that each carry their own task identifier; returns their ids in order. */
export async function insertDocuments(db: Db, docs: (NewDocument & { taskIdentifier: string })[]): Promise<number[]> {
  const ids: number[] = [];
  for (const batch of chunks(docs, ROWS_PER_INSERT)) {
    const rows = await db.insertInto('documents').values(batch.map(documentValues)).returning(['id', 'task_identifier']).execute();
    const idByTask = new Map(rows.map((r) => [r.task_identifier, r.id]));
    for (const doc of batch) ids.push(idByTask.get(doc.taskIdentifier)!);
  }
  return ids;
}

/** A document's new pages. */
export interface DocumentPages {
  workspaceId: number;
  documentId: number;
  pages: NewPage[];
}

/** Inserts pages with their paragraphs (each holding its sentences); returns the page ids in order. */
export async function insertPages(db: Db, workspaceId: number, documentId: number, pages: NewPage[]): Promise<number[]> {
  return insertDocumentPages(db, [{ workspaceId, documentId, pages }]);
}

/** Inserts the pages of several documents, a few statements in all; returns the page ids in order. */
export async function insertDocumentPages(db: Db, documents: DocumentPages[]): Promise<number[]> {
  const pages = documents.flatMap((d) => d.pages.map((page) => ({ ...d, page })));
  if (pages.length === 0) return [];
  const pageIds: number[] = [];
  for (const batch of chunks(pages, PAGES_PER_INSERT)) {
    const rows = await db
      .insertInto('pages')
      .values(
        batch.map(({ workspaceId, documentId, page: p }) => ({
          document_id: documentId,
          workspace_id: workspaceId,
          page_number: p.pageNumber,
          content: p.content,
          // Left out when absent: the trigger computes it (and a schema before 0013 generates it).
          ...(p.tsv != null && { tsv: p.tsv }),
          embedding: p.embedding ? encodeEmbedding(p.embedding) : null,
          embedding_model: p.embeddingModel,
        })),
      )
      .returning(['id', 'document_id', 'page_number'])
      .execute();
    const idByKey = new Map(rows.map((r) => [`${r.document_id}:${r.page_number}`, r.id]));
    for (const p of batch) pageIds.push(idByKey.get(`${p.documentId}:${p.page.pageNumber}`)!);
  }

  const paragraphs = pages.flatMap(({ page }, i) =>
    page.paragraphs.map((para, index) => ({
      page_id: pageIds[i],
      paragraph_index: index,
      content: storedParagraphContent(para),
      sentences: para.sentences,
      sentence_ids: sql<unknown>`ARRAY(SELECT nextval('sentence_id_seq') FROM generate_series(1, ${para.sentences.length}::int))`,
    })),
  );
  for (const batch of chunks(paragraphs, ROWS_PER_INSERT)) {
    await db.insertInto('paragraphs').values(batch).execute();
  }
  return pageIds;
}

export async function findDocument(db: Db, workspaceId: number, id: number): Promise<DocumentRow | undefined> {
  return db
    .selectFrom('documents as d')
    .select(DOCUMENT_COLUMNS)
    .where('d.workspace_id', '=', workspaceId)
    .where('d.id', '=', id)
    .executeTakeFirst();
}

export async function findDocumentByTask(db: Db, workspaceId: number, taskIdentifier: string): Promise<DocumentRow | undefined> {
  return db
    .selectFrom('documents as d')
    .select(DOCUMENT_COLUMNS)
    .where('d.workspace_id', '=', workspaceId)
    .where('d.task_identifier', '=', taskIdentifier)
    .orderBy('d.id', 'desc')
    .executeTakeFirst();
}

/** All versions of an external id, newest first ("latest" = most recently created). */
export async function findVersions(db: Db, workspaceId: number, externalId: string, latestOnly: boolean): Promise<DocumentRow[]> {
  let query = db
    .selectFrom('documents as d')
    .select(DOCUMENT_COLUMNS)
    .where('d.workspace_id', '=', workspaceId)
    .where('d.external_id', '=', externalId)
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc');
  if (latestOnly) query = query.limit(1);
  return query.execute();
}

export async function lockDocument(db: Transaction<Database>, id: number): Promise<DocumentRow | undefined> {
  return db.selectFrom('documents as d').select(DOCUMENT_COLUMNS).where('d.id', '=', id).forUpdate().executeTakeFirst();
}

export async function updateMetadata(db: Db, id: number, metadata: Record<string, unknown>): Promise<DocumentRow> {
  return db
    .updateTable('documents as d')
    .set({ metadata: JSON.stringify(metadata), updated_at: sql<Date>`greatest(clock_timestamp(), d.updated_at + interval '1 microsecond')` })
    .where('d.id', '=', id)
    .returning(DOCUMENT_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function pagesOfDocument(db: Db, documentId: number): Promise<{ id: number; content: string; page_number: number }[]> {
  return db
    .selectFrom('pages')
    .select(['id', 'content', 'page_number'])
    .where('document_id', '=', documentId)
    .orderBy('page_number')
    .orderBy('id')
    .execute();
}

export interface DeletedDocument {
  id: number;
  file_path: string;
  source: string;
}

/** Deletes documents (their pages, paragraphs and sentences cascade); returns what was deleted, by id. */
export async function deleteDocuments(db: Db, workspaceId: number, ids: number[]): Promise<DeletedDocument[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .deleteFrom('documents')
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', ids)
    .returning(['id', 'file_path', 'source'])
    .execute();
  return rows.sort((a, b) => a.id - b.id);
}

export interface StoredFile {
  file_path: string;
  file_name: string | null;
  content_type: string | null;
  source: string;
}

export async function findStoredFile(db: Db, workspaceId: number, id: number): Promise<StoredFile | undefined> {
  return db
    .selectFrom('documents')
    .select(['file_path', 'file_name', 'content_type', 'source'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export interface PageRow {
  id: number;
  document_id: number;
  page_number: number;
  content: string;
  created_at: string;
}

export async function findPage(db: Db, workspaceId: number, pageId: number): Promise<PageRow | undefined> {
  return db
    .selectFrom('pages')
    .select(['id', 'document_id', 'page_number', 'content', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', pageId)
    .executeTakeFirst();
}

export interface SentenceRow {
  id: number;
  paragraph_id: number;
  sentence_index: number;
  content: string;
  created_at: Date;
}

/** A paragraph with its sentences in order. */
export interface ParagraphRow {
  id: number;
  page_id: number;
  paragraph_index: number;
  content: string;
  created_at: Date;
  sentences: SentenceRow[];
}

const PARAGRAPH_COLUMNS = ['g.id', 'g.page_id', 'g.paragraph_index', 'g.content', 'g.created_at', 'g.sentences', 'g.sentence_ids'] as const;

interface StoredParagraph extends Omit<ParagraphRow, 'content' | 'sentences'> {
  content: string | null;
  sentences: string[];
  sentence_ids: string[];
}

function paragraphRow({ content, sentences, sentence_ids, ...paragraph }: StoredParagraph): ParagraphRow {
  return {
    ...paragraph,
    content: paragraphContent(content, sentences),
    sentences: sentences.map((content, i) => ({
      id: Number(sentence_ids[i]),
      paragraph_id: paragraph.id,
      sentence_index: i,
      content,
      created_at: paragraph.created_at,
    })),
  };
}

export async function paragraphsOfPage(db: Db, pageId: number): Promise<ParagraphRow[]> {
  const rows = await db.selectFrom('paragraphs as g').select(PARAGRAPH_COLUMNS).where('g.page_id', '=', pageId).orderBy('g.paragraph_index').execute();
  return rows.map(paragraphRow);
}

export async function findParagraph(db: Db, workspaceId: number, paragraphId: number): Promise<ParagraphRow | undefined> {
  const row = await db
    .selectFrom('paragraphs as g')
    .innerJoin('pages as p', 'p.id', 'g.page_id')
    .select(PARAGRAPH_COLUMNS)
    .where('p.workspace_id', '=', workspaceId)
    .where('g.id', '=', paragraphId)
    .executeTakeFirst();
  return row && paragraphRow(row);
}
