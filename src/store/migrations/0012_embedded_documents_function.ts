// Writing a batch of documents from precomputed embeddings as a function with a generic plan.
// The batch is one statement with data-modifying CTEs over arrays. The server engine, which
// prepares no statement, planned it at every batch (0.4 ms for one document, over 1 ms for
// eight). The embedded engine prepares it, but PostgreSQL then kept choosing custom plans when
// the first batches were small (they know the arrays' sizes, so they look cheaper), and planned
// at every batch too, unless large batches came first. A function's statements keep their plan
// for the session, and `force_generic_plan` makes it the one built at the first call. Measured:
// PGlite in process, small batches first, per document 1.30 -> 0.85 ms in batches of one and
// 0.60 -> 0.47 in batches of four (the same at 128); PostgreSQL over HTTP, 8 clients,
// 985-1,113 -> 1,317-1,321 ingests/s.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION insert_embedded_documents(
      workspace_ids int[], external_ids text[], file_paths text[], file_urls text[], metadata_texts text[],
      sources text[], task_identifiers text[], file_names text[], content_types text[],
      page_numbers int[], contents text[], embedding_offsets int[], embedding_lengths int[], embedding_models text[],
      embeddings bytea,
      task_ids text[], task_workspace_ids int[], kinds text[], statuses text[], progresses int[], titles text[],
      messages text[], payload_texts text[],
      sentence_texts text[], paragraph_docs int[], paragraph_indexes int[], paragraph_contents text[],
      paragraph_firsts int[], paragraph_counts int[]
    )
    RETURNS TABLE (id bigint, task_identifier text)
    LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH input AS (
        SELECT * FROM unnest(
          workspace_ids, external_ids, file_paths, file_urls, metadata_texts, sources, task_identifiers, file_names,
          content_types, page_numbers, contents, embedding_offsets, embedding_lengths, embedding_models,
          task_ids, task_workspace_ids, kinds, statuses, progresses, titles, messages, payload_texts
        ) WITH ORDINALITY AS i(workspace_id, external_id, file_path, file_url, metadata, source, task_identifier, file_name,
          content_type, page_number, content, embedding_at, embedding_bytes, embedding_model, task, task_workspace_id, kind,
          status, progress, title, message, payload, ord)
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
        INSERT INTO pages (document_id, workspace_id, page_number, content, embedding, embedding_model)
        SELECT d.id, i.workspace_id, i.page_number, i.content,
          CASE WHEN i.embedding_at IS NOT NULL THEN substring(embeddings FROM i.embedding_at FOR i.embedding_bytes) END,
          i.embedding_model
        FROM input i JOIN docs d ON d.task_identifier = i.task_identifier ORDER BY i.ord
        RETURNING id, document_id
      ),
      new_paragraphs AS (
        INSERT INTO paragraphs (page_id, paragraph_index, content, sentences, sentence_ids)
        SELECT p.id, q.paragraph_index, q.content, sentence_texts[q.first : q.first + q.count - 1],
          ARRAY(SELECT nextval('sentence_id_seq') FROM generate_series(1, q.count))
        FROM unnest(paragraph_docs, paragraph_indexes, paragraph_contents, paragraph_firsts, paragraph_counts)
          WITH ORDINALITY AS q(doc, paragraph_index, content, first, count, n)
        JOIN input i ON i.ord = q.doc
        JOIN docs d ON d.task_identifier = i.task_identifier
        JOIN new_pages p ON p.document_id = d.id
        ORDER BY q.n
      ),
      new_tasks AS (
        INSERT INTO tasks (identifier, workspace_id, kind, status, progress, title, message, payload, document_id)
        SELECT i.task, i.task_workspace_id, i.kind, i.status, i.progress, i.title, i.message, i.payload::jsonb, d.id
        FROM input i JOIN docs d ON d.task_identifier = i.task_identifier
      )
      SELECT docs.id, docs.task_identifier FROM docs;
    END
    $$
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION insert_embedded_documents`.execute(db);
}
