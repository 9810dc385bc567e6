// Extractions: definitions (a named JSON Schema per workspace), the documents runs read (a
// snapshot of the text, whatever its source) and the results of runs, one per task. Schemas
// and results are `json`, not `jsonb`: jsonb reorders object keys, and the order of a
// schema's properties is meaningful (columns of a table without a header, result layout).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE extractions (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      schema json NOT NULL,
      multiple boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX extractions_workspace_idx ON extractions (workspace_id, id);

    -- What a run read: the text of a fetched URL, an uploaded file or an ingested document
    -- (then document_id; the text is kept even if that document is deleted later).
    CREATE TABLE extraction_documents (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      extraction_id bigint NOT NULL REFERENCES extractions(id) ON DELETE CASCADE,
      task_identifier text NOT NULL UNIQUE,
      source text NOT NULL CHECK (source IN ('url', 'file', 'document')),
      document_id bigint REFERENCES documents(id) ON DELETE SET NULL,
      file_path text NOT NULL,
      file_url text,
      file_name text,
      content_type text,
      title text,
      pages jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX extraction_documents_extraction_idx ON extraction_documents (extraction_id);
    CREATE INDEX extraction_documents_document_idx ON extraction_documents (document_id);

    CREATE TABLE extraction_results (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      extraction_id bigint NOT NULL REFERENCES extractions(id) ON DELETE CASCADE,
      extraction_document_id bigint NOT NULL REFERENCES extraction_documents(id) ON DELETE CASCADE,
      task_identifier text NOT NULL UNIQUE,
      results json NOT NULL,
      engine text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX extraction_results_extraction_idx ON extraction_results (extraction_id);
    CREATE INDEX extraction_results_document_idx ON extraction_results (extraction_document_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE extraction_results, extraction_documents, extractions`.execute(db);
}
