// Writes that touch several rows of the document aggregate and land together or not at all:
// documents ingested from embeddings with their completed tasks, a metadata patch of the
// latest version, the deletion of documents (by id or an external id's versions). Callers add
// the webhook events a change causes to its transaction (`also`).
import { sql, type Kysely } from 'kysely';
import {
  encodeEmbedding,
  deleteDocuments,
  findVersions,
  insertDocumentPages,
  insertDocuments,
  lockDocument,
  updateMetadata,
  type DeletedDocument,
  type DocumentRow,
  type NewDocument,
  type NewPage,
} from './documents.js';
import type { AlsoWrite, Database } from './schema.js';
import { insertTasks, type NewTask } from './tasks.js';

/** A one-page document and its task, recorded as done: the document id is filled in. */
export interface EmbeddedDocument {
  document: NewDocument & { taskIdentifier: string };
  page: NewPage;
  task: Omit<NewTask, 'documentId'>;
}

/**
 * Inserts the documents, their pages and their tasks in one transaction, with `also` (their
 * events) given the document ids; returns the document ids in order.
 */
export async function insertEmbeddedDocuments(db: Kysely<Database>, items: EmbeddedDocument[], also?: AlsoWrite<number[]>): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    const ids = await insertDocuments(trx, items.map((item) => item.document));
    await insertDocumentPages(
      trx,
      items.map((item, i) => ({ workspaceId: item.document.workspaceId, documentId: ids[i], pages: [item.page] })),
    );
    await insertTasks(trx, items.map((item, i) => ({ ...item.task, documentId: ids[i] })));
    await also?.(trx, ids);
    return ids;
  });
}

/**
 * As `insertEmbeddedDocuments`, in one statement (its own transaction, one round trip to the
 * database instead of seven), for workspaces whose changes no webhook endpoint watches: returns
 * the document ids in order, or null, writing nothing, when an active endpoint of one of the
 * workspaces would need the changes' events recorded with them.
 */
export async function insertEmbeddedDocumentsUnwatched(db: Kysely<Database>, items: EmbeddedDocument[]): Promise<number[] | null> {
  if (items.length === 0) return [];
  const column = <T>(value: (item: EmbeddedDocument) => T) => items.map(value);
  // A paragraph's sentences are a slice of one flat array: from `first`, `count` of them.
  const paragraphs = items.flatMap((item, i) => item.page.paragraphs.map((paragraph, index) => ({ doc: i + 1, index, paragraph })));
  const sentences: string[] = [];
  const firsts = paragraphs.map(({ paragraph }) => {
    const first = sentences.length + 1;
    for (const sentence of paragraph.sentences) sentences.push(sentence);
    return first;
  });
  // The embeddings travel as one binary parameter, each at its offset (1-based): in an array
  // they would be hex text, twice the bytes, for both sides to encode and decode.
  const vectors = items.map((item) => (item.page.embedding ? encodeEmbedding(item.page.embedding) : null));
  let offset = 1;
  const embeddingAt = vectors.map((v) => (v ? (offset += v.byteLength) - v.byteLength : null));
  const embeddings = Buffer.concat(vectors.filter((v) => v !== null));
  // The statement is a function (migration 0012), planned once per session.
  const rows = await sql<{ id: number; task_identifier: string }>`
    SELECT id, task_identifier FROM insert_embedded_documents(
      ${column((d) => d.document.workspaceId)}::int[], ${column((d) => d.document.externalId)}::text[],
      ${column((d) => d.document.filePath)}::text[], ${column((d) => d.document.fileUrl)}::text[],
      ${column((d) => JSON.stringify(d.document.metadata))}::text[], ${column((d) => d.document.source)}::text[],
      ${column((d) => d.document.taskIdentifier)}::text[], ${column((d) => d.document.fileName ?? null)}::text[],
      ${column((d) => d.document.contentType ?? null)}::text[],
      ${column((d) => d.page.pageNumber)}::int[], ${column((d) => d.page.content)}::text[],
      ${embeddingAt}::int[], ${vectors.map((v) => v?.byteLength ?? null)}::int[], ${column((d) => d.page.embeddingModel)}::text[],
      ${embeddings}::bytea,
      ${column((d) => d.task.identifier)}::text[], ${column((d) => d.task.workspaceId)}::int[],
      ${column((d) => d.task.kind)}::text[], ${column((d) => d.task.status)}::text[], ${column((d) => d.task.progress)}::int[],
      ${column((d) => d.task.title)}::text[], ${column((d) => d.task.message)}::text[],
      ${column((d) => JSON.stringify(d.task.payload ?? {}))}::text[],
      ${sentences}::text[], ${paragraphs.map((p) => p.doc)}::int[], ${paragraphs.map((p) => p.index)}::int[],
      ${paragraphs.map((p) => p.paragraph.content)}::text[], ${firsts}::int[],
      ${paragraphs.map((p) => p.paragraph.sentences.length)}::int[]
    )
  `.execute(db);
  if (rows.rows.length === 0) return null;
  const idByTask = new Map(rows.rows.map((r) => [r.task_identifier, r.id]));
  return items.map((item) => idByTask.get(item.document.taskIdentifier)!);
}

/** Deletes the workspace's documents of `ids` with `also` (their events) in one transaction; returns what was deleted. */
export async function deleteDocumentsAnd(
  db: Kysely<Database>,
  workspaceId: number,
  ids: number[],
  also?: AlsoWrite<DeletedDocument[]>,
): Promise<DeletedDocument[]> {
  return db.transaction().execute(async (trx) => {
    const deleted = await deleteDocuments(trx, workspaceId, ids);
    if (deleted.length > 0) await also?.(trx, deleted);
    return deleted;
  });
}

/** Deletes the latest version of an external id, or all of them, with `also` (their events); null when it has none. */
export async function deleteVersions(
  db: Kysely<Database>,
  workspaceId: number,
  externalId: string,
  latestOnly: boolean,
  also?: AlsoWrite<DeletedDocument[]>,
): Promise<DeletedDocument[] | null> {
  return db.transaction().execute(async (trx) => {
    const versions = await findVersions(trx, workspaceId, externalId, latestOnly);
    if (versions.length === 0) return null;
    const deleted = await deleteDocuments(trx, workspaceId, versions.map((v) => v.id));
    if (deleted.length > 0) await also?.(trx, deleted);
    return deleted;
  });
}

/**
 * Replaces the metadata of an external id's latest version with `change(current)`, under a row
 * lock so that concurrent changes apply one after the other, none lost; undefined when the
 * external id has no version.
 */
export async function updateLatestMetadata(
  db: Kysely<Database>,
  workspaceId: number,
  externalId: string,
  change: (metadata: Record<string, unknown>) => Record<string, unknown>,
): Promise<DocumentRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const [latest] = await findVersions(trx, workspaceId, externalId, true);
    if (!latest) return undefined;
    const current = await lockDocument(trx, latest.id);
    if (!current) return undefined;
    return updateMetadata(trx, current.id, change(current.metadata));
  });
}
