// Document inserts and metadata updates carry their transaction id, like page changes, so a
// search process can tell from the change feed whether the documents a filter admits may have
// changed since it last read them (search/page-index.ts keeps filters' documents until then).
// Existing rows keep a NULL txid: their changes are older than any reader's position.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE documents ADD COLUMN txid xid8;
    ALTER TABLE documents ALTER COLUMN txid SET DEFAULT pg_current_xact_id();
    CREATE INDEX documents_change_idx ON documents (workspace_id, txid);
    CREATE FUNCTION documents_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.txid := pg_current_xact_id();
      RETURN NEW;
    END $$;
    CREATE TRIGGER documents_change BEFORE UPDATE ON documents
      FOR EACH ROW EXECUTE FUNCTION documents_record_change();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER documents_change ON documents;
    DROP FUNCTION documents_record_change();
    DROP INDEX documents_change_idx;
    ALTER TABLE documents DROP COLUMN txid;
  `.execute(db);
}
