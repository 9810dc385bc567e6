// Queries on extraction definitions, the documents runs read and their results.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface ExtractionRow {
  id: number;
  name: string;
  description: string | null;
  schema: Record<string, unknown>;
  multiple: boolean;
  created_at: Date;
}

const EXTRACTION_COLUMNS = ['id', 'name', 'description', 'schema', 'multiple', 'created_at'] as const;

export interface NewExtraction {
  workspaceId: number;
  name: string;
  description: string | null;
  schema: Record<string, unknown>;
  multiple: boolean;
}

export async function insertExtraction(db: Db, extraction: NewExtraction): Promise<ExtractionRow> {
  return db
    .insertInto('extractions')
    .values({
      workspace_id: extraction.workspaceId,
      name: extraction.name,
      description: extraction.description,
      schema: JSON.stringify(extraction.schema),
      multiple: extraction.multiple,
    })
    .returning(EXTRACTION_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function findExtraction(db: Db, workspaceId: number, id: number): Promise<ExtractionRow | undefined> {
  return db.selectFrom('extractions').select(EXTRACTION_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/** The definition, share-locked until the transaction ends (a delete waits; a deleted one is undefined). */
export async function lockExtraction(trx: Transaction<Database>, workspaceId: number, id: number): Promise<ExtractionRow | undefined> {
  return trx.selectFrom('extractions').select(EXTRACTION_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).forKeyShare().executeTakeFirst();
}

/** Newest first. */
export async function listExtractions(db: Db, workspaceId: number, limit: number, offset: number): Promise<ExtractionRow[]> {
  return db
    .selectFrom('extractions')
    .select(EXTRACTION_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countExtractions(db: Db, workspaceId: number): Promise<number> {
  const row = await db.selectFrom('extractions').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface DeletedExtraction {
  id: number;
  /** Stored files that only runs of this extraction used (uploads and fetched URLs). */
  ownedFiles: string[];
  results: number;
}

/** Deletes a definition with its run documents and results (cascade); undefined when there is none. */
export async function deleteExtraction(db: Kysely<Database>, workspaceId: number, id: number): Promise<DeletedExtraction | undefined> {
  return db.transaction().execute(async (trx) => {
    const files = await trx
      .selectFrom('extraction_documents')
      .select('file_path')
      .where('extraction_id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('source', 'in', ['url', 'file'])
      .execute();
    const results = await trx
      .selectFrom('extraction_results')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('extraction_id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow();
    const deleted = await trx.deleteFrom('extractions').where('workspace_id', '=', workspaceId).where('id', '=', id).returning('id').executeTakeFirst();
    if (!deleted) return undefined;
    return { id: deleted.id, ownedFiles: files.map((f) => f.file_path), results: Number(results.n) };
  });
}

export interface NewExtractionDocument {
  workspaceId: number;
  extractionId: number;
  taskIdentifier: string;
  source: 'url' | 'file' | 'document';
  documentId: number | null;
  filePath: string;
  fileUrl: string | null;
  fileName: string | null;
  contentType: string | null;
  title: string | null;
  pages: string[];
}

export async function insertExtractionDocument(db: Db, doc: NewExtractionDocument): Promise<number> {
  const row = await db
    .insertInto('extraction_documents')
    .values({
      workspace_id: doc.workspaceId,
      extraction_id: doc.extractionId,
      task_identifier: doc.taskIdentifier,
      source: doc.source,
      document_id: doc.documentId,
      file_path: doc.filePath,
      file_url: doc.fileUrl,
      file_name: doc.fileName,
      content_type: doc.contentType,
      title: doc.title,
      pages: JSON.stringify(doc.pages),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export interface ExtractionDocumentRow {
  id: number;
  extraction_id: number;
  task_identifier: string;
  source: string;
  document_id: number | null;
  file_path: string;
  file_url: string | null;
  file_name: string | null;
  content_type: string | null;
  title: string | null;
  pages: string[];
  created_at: Date;
}

export async function findExtractionDocument(db: Db, workspaceId: number, id: number): Promise<ExtractionDocumentRow | undefined> {
  return db
    .selectFrom('extraction_documents')
    .select(['id', 'extraction_id', 'task_identifier', 'source', 'document_id', 'file_path', 'file_url', 'file_name', 'content_type', 'title', 'pages', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export interface NewExtractionResult {
  workspaceId: number;
  extractionId: number;
  extractionDocumentId: number;
  taskIdentifier: string;
  results: Record<string, unknown>[];
  engine: string;
}

export interface ExtractionResultRow {
  id: number;
  extraction_id: number;
  extraction_document_id: number;
  task_identifier: string;
  results: Record<string, unknown>[];
  engine: string;
  created_at: Date;
}

const RESULT_COLUMNS = ['id', 'extraction_id', 'extraction_document_id', 'task_identifier', 'results', 'engine', 'created_at'] as const;

export async function insertExtractionResult(db: Db, result: NewExtractionResult): Promise<ExtractionResultRow> {
  return db
    .insertInto('extraction_results')
    .values({
      workspace_id: result.workspaceId,
      extraction_id: result.extractionId,
      extraction_document_id: result.extractionDocumentId,
      task_identifier: result.taskIdentifier,
      results: JSON.stringify(result.results),
      engine: result.engine,
    })
    .returning(RESULT_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function findResult(db: Db, workspaceId: number, id: number): Promise<ExtractionResultRow | undefined> {
  return db.selectFrom('extraction_results').select(RESULT_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function findResultByTask(db: Db, workspaceId: number, taskIdentifier: string): Promise<ExtractionResultRow | undefined> {
  return db
    .selectFrom('extraction_results')
    .select(RESULT_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('task_identifier', '=', taskIdentifier)
    .executeTakeFirst();
}

/** Results of one extraction, newest first. */
export async function listResults(db: Db, workspaceId: number, extractionId: number, limit: number, offset: number): Promise<ExtractionResultRow[]> {
  return db
    .selectFrom('extraction_results')
    .select(RESULT_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('extraction_id', '=', extractionId)
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}
