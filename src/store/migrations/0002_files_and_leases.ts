// File ingestion: the original file's name and type on documents, the lease holder and
// last error on tasks, and at most one document per task (a task run twice stores once).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE documents ADD COLUMN file_name text, ADD COLUMN content_type text;
    DROP INDEX documents_task_idx;
    CREATE UNIQUE INDEX documents_task_idx ON documents (task_identifier);
    ALTER TABLE tasks ADD COLUMN worker_id text, ADD COLUMN max_attempts integer NOT NULL DEFAULT 5;
    CREATE INDEX tasks_lease_idx ON tasks (lease_until) WHERE status = 'PROCESSING';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX tasks_lease_idx;
    ALTER TABLE tasks DROP COLUMN worker_id, DROP COLUMN max_attempts;
    DROP INDEX documents_task_idx;
    CREATE INDEX documents_task_idx ON documents (task_identifier);
    ALTER TABLE documents DROP COLUMN file_name, DROP COLUMN content_type;
  `.execute(db);
}
