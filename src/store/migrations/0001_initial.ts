// Initial schema: workspaces, keys, documents with versions, pages with full-text vectors
// and float32 embeddings, paragraphs, sentences, tasks, and the page change log.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE workspaces (
      id serial PRIMARY KEY,
      name text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE api_keys (
      id serial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      key_hash text NOT NULL UNIQUE,
      key_prefix text NOT NULL,
      scope text NOT NULL CHECK (scope IN ('read', 'write', 'admin')),
      label text,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    );

    CREATE TABLE documents (
      id bigserial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      external_id text,
      file_path text NOT NULL,
      file_url text,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      source text NOT NULL,
      task_identifier text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX documents_external_idx ON documents (workspace_id, external_id, created_at DESC, id DESC);
    CREATE INDEX documents_created_idx ON documents (workspace_id, created_at);
    CREATE INDEX documents_task_idx ON documents (task_identifier);

    CREATE SEQUENCE page_change_seq;

    CREATE TABLE pages (
      id bigserial PRIMARY KEY,
      document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
      workspace_id integer NOT NULL,
      page_number integer NOT NULL,
      content text NOT NULL,
      tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED,
      embedding bytea,
      embedding_model text,
      change_seq bigint NOT NULL DEFAULT nextval('page_change_seq'),
      txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
      created_at timestamp NOT NULL DEFAULT (clock_timestamp() AT TIME ZONE 'UTC')
    );
    CREATE INDEX pages_document_idx ON pages (document_id, page_number);
    CREATE INDEX pages_change_idx ON pages (workspace_id, txid);
    CREATE INDEX pages_tsv_idx ON pages USING gin (tsv);

    -- Every page change carries its transaction id (txid) and a sequence number: a vector
    -- index catches up by reading the changes of transactions not yet known complete at its
    -- last read (see search/page-index.ts). Deleted pages leave a tombstone.
    CREATE TABLE page_tombstones (
      page_id bigint NOT NULL,
      workspace_id integer NOT NULL,
      change_seq bigint NOT NULL DEFAULT nextval('page_change_seq'),
      txid xid8 NOT NULL DEFAULT pg_current_xact_id()
    );
    CREATE INDEX page_tombstones_change_idx ON page_tombstones (workspace_id, txid);

    CREATE FUNCTION pages_record_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO page_tombstones (page_id, workspace_id) VALUES (OLD.id, OLD.workspace_id);
      RETURN OLD;
    END;
    $$;
    CREATE TRIGGER pages_tombstone AFTER DELETE ON pages
      FOR EACH ROW EXECUTE FUNCTION pages_record_tombstone();

    CREATE TABLE paragraphs (
      id bigserial PRIMARY KEY,
      page_id bigint NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
      paragraph_index integer NOT NULL,
      content text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX paragraphs_page_idx ON paragraphs (page_id, paragraph_index);

    CREATE TABLE sentences (
      id bigserial PRIMARY KEY,
      paragraph_id bigint NOT NULL REFERENCES paragraphs(id) ON DELETE CASCADE,
      sentence_index integer NOT NULL,
      content text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX sentences_paragraph_idx ON sentences (paragraph_id, sentence_index);

    CREATE TABLE tasks (
      identifier text PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      kind text NOT NULL,
      status text NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'RETRYING', 'COMPLETED', 'FAILED')),
      progress integer NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
      title text NOT NULL,
      message text NOT NULL DEFAULT '',
      payload jsonb NOT NULL DEFAULT '{}'::jsonb,
      document_id bigint,
      attempts integer NOT NULL DEFAULT 0,
      run_after timestamptz NOT NULL DEFAULT now(),
      lease_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX tasks_claim_idx ON tasks (status, run_after);
    CREATE INDEX tasks_workspace_idx ON tasks (workspace_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE tasks, sentences, paragraphs, page_tombstones, pages, documents, api_keys, workspaces;
    DROP FUNCTION pages_record_tombstone();
    DROP SEQUENCE page_change_seq;
  `.execute(db);
}
