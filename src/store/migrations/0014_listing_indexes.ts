// The listings' orders as indexes: documents by (created_at, id) and (updated_at, id), tasks by
// (created_at, identifier), each within a workspace, so that a page of a keyset listing reads
// its rows from where the last ended instead of sorting the workspace. The new indexes
// cover the ones they replace (same leading columns).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX documents_created_idx;
    CREATE INDEX documents_created_idx ON documents (workspace_id, created_at, id);
    CREATE INDEX documents_updated_idx ON documents (workspace_id, updated_at, id);
    DROP INDEX tasks_workspace_idx;
    CREATE INDEX tasks_workspace_idx ON tasks (workspace_id, created_at, identifier);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX tasks_workspace_idx;
    CREATE INDEX tasks_workspace_idx ON tasks (workspace_id);
    DROP INDEX documents_updated_idx;
    DROP INDEX documents_created_idx;
    CREATE INDEX documents_created_idx ON documents (workspace_id, created_at);
  `.execute(db);
}
