// The pages of the superseded offline model (store/embedding-models.ts) get a partial index of
// their own. Every start asks which workspaces still hold such pages, and without the index
// that question read every page of the store before the service could start (a few seconds at
// a million pages, more with a cold cache). Once they are all embedded again, the index is empty.
import { sql, type Kysely } from 'kysely';
import { SUPERSEDED_EMBEDDING_MODEL } from '../embedding-models.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX pages_superseded_idx ON pages (workspace_id, document_id) WHERE embedding_model = ${sql.lit(SUPERSEDED_EMBEDDING_MODEL)}
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX pages_superseded_idx`.execute(db);
}
