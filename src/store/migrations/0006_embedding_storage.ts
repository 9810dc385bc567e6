// Page embeddings (6 KB of float32) are stored out of line without compression: pglz finds
// nothing to squeeze in float bits, and trying costs every insert. SET STORAGE applies to rows
// written from now on.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE pages ALTER COLUMN embedding SET STORAGE EXTERNAL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE pages ALTER COLUMN embedding SET STORAGE EXTENDED`.execute(db);
}
