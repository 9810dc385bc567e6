// insert_embedded_documents took each paragraph's sentences as a slice of one flat array
// (`sentence_texts[first : first + count - 1]`). A slice of an array of texts walks the array
// from its start, so a statement of n sentences took time in n squared: a tenth of the database's
// work ingesting one-page documents on the server. Each sentence now comes with its paragraph's
// number instead, and the sentences are gathered per paragraph in one pass. The pages' tsvectors
// come as tsvectors (sent in binary form, page-tsvector.ts) instead of their text form, which the
// engine parsed character by character.
import { sql, type Kysely } from 'kysely';
import * as m0013 from './0013_page_tsvector_supplied.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION insert_embedded_documents`.execute(db);
  await createFunction(db, 'documents');
}

/**
 * This migration's insert_embedded_documents, returning each document's id and task; 0019's, the
 * same function returning each document's page id too, replaces it (and restores this when undone).
 */
export async function createFunction(db: Kysely<unknown>, returns: 'documents' | 'documents and pages'): Promise<void> {
  const pages = returns === 'documents and pages';
  await sql`
    CREATE FUNCTION insert_embedded_documents(
      workspace_ids int[], external_ids text[], file_paths text[], file_urls text[], metadata_texts text[],
      sources text[], task_identifiers text[], file_names text[], content_types text[],
      page_numbers int[], contents text[], embedding_offsets int[], embedding_lengths int[], embedding_models text[],
      embeddings bytea,
      task_ids text[], task_workspace_ids int[], kinds text[], statuses text[], progresses int[], titles text[],
      messages text[], payload_texts text[],
      sentence_texts text[], paragraph_docs int[], paragraph_indexes int[], paragraph_contents text[],
      sentence_paragraphs int[], tsvs tsvector[]
    )
    RETURNS TABLE (id bigint, task_identifier text${sql.raw(pages ? ', page_id bigint' : '')})
    LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH input AS (
        SELECT * FROM unnest(
          workspace_ids, external_ids, file_paths, file_urls, metadata_texts, sources, task_identifiers, file_names,
          content_types, page_numbers, contents, embedding_offsets, embedding_lengths, embedding_models,
          task_ids, task_workspace_ids, kinds, statuses, progresses, titles, messages, payload_texts, tsvs
        ) WITH ORDINALITY AS i(workspace_id, external_id, file_path, file_url, metadata, source, task_identifier, file_name,
          content_type, page_number, content, embedding_at, embedding_bytes, embedding_model, task, task_workspace_id, kind,
          status, progress, title, message, payload, tsv, ord)
        -- Documents of a workspace that a webhook watches are written with their events instead.
        WHERE NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.workspace_id = ANY(workspace_ids) AND w.disabled_at IS NULL)
      ),
      docs AS (
        INSERT INTO documents (workspace_id, external_id, file_path, file_url, metadata, source, task_identifier, file_name, content_type)
        SELECT workspace_id, external_id, file_path, file_url, metadata::jsonb, source, task_identifier, file_name, content_type
        FROM input ORDER BY ord
        RETURNING id, task_identifier
      ),
      new_pages AS (
        INSERT INTO pages (document_id, workspace_id, page_number, content, tsv, embedding, embedding_model)
        SELECT d.id, i.workspace_id, i.page_number, i.content, i.tsv,
          CASE WHEN i.embedding_at IS NOT NULL THEN substring(embeddings FROM i.embedding_at FOR i.embedding_bytes) END,
          i.embedding_model
        FROM input i JOIN docs d ON d.task_identifier = i.task_identifier ORDER BY i.ord
        RETURNING id, document_id
      ),
      sentences AS (
        SELECT s.paragraph, array_agg(s.text ORDER BY s.n) AS texts
        FROM unnest(sentence_texts, sentence_paragraphs) WITH ORDINALITY AS s(text, paragraph, n)
        GROUP BY s.paragraph
      ),
      new_paragraphs AS (
        INSERT INTO paragraphs (page_id, paragraph_index, content, sentences, sentence_ids)
        SELECT p.id, q.paragraph_index, q.content, COALESCE(s.texts, '{}'),
          ARRAY(SELECT nextval('sentence_id_seq') FROM generate_series(1, cardinality(s.texts)))
        FROM unnest(paragraph_docs, paragraph_indexes, paragraph_contents) WITH ORDINALITY AS q(doc, paragraph_index, content, n)
        JOIN input i ON i.ord = q.doc
        JOIN docs d ON d.task_identifier = i.task_identifier
        JOIN new_pages p ON p.document_id = d.id
        LEFT JOIN sentences s ON s.paragraph = q.n
        ORDER BY q.n
      ),
      new_tasks AS (
        INSERT INTO tasks (identifier, workspace_id, kind, status, progress, title, message, payload, document_id)
        SELECT i.task, i.task_workspace_id, i.kind, i.status, i.progress, i.title, i.message, i.payload::jsonb, d.id
        FROM input i JOIN docs d ON d.task_identifier = i.task_identifier
      )
      ${sql.raw(pages ? 'SELECT docs.id, docs.task_identifier, new_pages.id FROM docs JOIN new_pages ON new_pages.document_id = docs.id' : 'SELECT docs.id, docs.task_identifier FROM docs')};
    END
    $$
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION insert_embedded_documents`.execute(db);
  await m0013.createFunction(db);
}
