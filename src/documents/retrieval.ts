// Reading documents and their content: by task, internal id, external id and versions;
// pages with their paragraphs and sentences.
import type { Kysely } from 'kysely';
import { errors } from '../errors.js';
import {
  findDocument,
  findDocumentByTask,
  findPage,
  findParagraph,
  findVersions,
  pagesOfDocument,
  paragraphsOfPage,
  type DocumentRow,
} from '../store/documents.js';
import type { Database } from '../store/schema.js';
import { findTask } from '../store/tasks.js';
import { documentView, pageView, paragraphView, type DocumentView, type DocumentWithPagesView, type PageView, type ParagraphView } from './views.js';

async function withPages(db: Kysely<Database>, row: DocumentRow): Promise<DocumentWithPagesView> {
  return documentView(row, await pagesOfDocument(db, row.id));
}

export async function getDocumentByTask(db: Kysely<Database>, workspaceId: number, taskIdentifier: string): Promise<DocumentWithPagesView> {
  const task = await findTask(db, workspaceId, taskIdentifier);
  if (!task) throw errors.notFound(`Task ${taskIdentifier}`);
  const row = await findDocumentByTask(db, workspaceId, taskIdentifier);
  if (!row) {
    throw errors.notFound(`Document of task ${taskIdentifier} (task status ${task.status})`);
  }
  return withPages(db, row);
}

export async function getDocument(db: Kysely<Database>, workspaceId: number, id: number): Promise<DocumentWithPagesView> {
  const row = await findDocument(db, workspaceId, id);
  if (!row) throw errors.notFound(`Document ${id}`);
  return withPages(db, row);
}

export async function getLatestByExternalId(db: Kysely<Database>, workspaceId: number, externalId: string): Promise<DocumentWithPagesView> {
  const [row] = await findVersions(db, workspaceId, externalId, true);
  if (!row) throw errors.notFound(`Document with external_id ${externalId}`);
  return withPages(db, row);
}

/** Every version of an external id, newest first, without pages. */
export async function listVersions(db: Kysely<Database>, workspaceId: number, externalId: string): Promise<DocumentView[]> {
  const rows = await findVersions(db, workspaceId, externalId, false);
  if (rows.length === 0) throw errors.notFound(`Document with external_id ${externalId}`);
  return rows.map((row) => documentView(row));
}

export async function getPage(
  db: Kysely<Database>,
  workspaceId: number,
  pageId: number,
  includeParagraphs: boolean,
): Promise<PageView> {
  const row = await findPage(db, workspaceId, pageId);
  if (!row) throw errors.notFound(`Page ${pageId}`);
  if (!includeParagraphs) return pageView(row);
  return pageView(row, (await paragraphsOfPage(db, row.id)).map(paragraphView));
}

export async function getParagraph(db: Kysely<Database>, workspaceId: number, paragraphId: number): Promise<ParagraphView> {
  const row = await findParagraph(db, workspaceId, paragraphId);
  if (!row) throw errors.notFound(`Paragraph ${paragraphId}`);
  return paragraphView(row);
}
