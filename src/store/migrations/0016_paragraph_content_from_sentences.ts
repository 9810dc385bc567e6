// A paragraph's text is no longer stored when it is its sentences joined by single spaces, as it
// is for most prose: it was stored twice (content and sentences), a fifth of a one-page
// document's bytes. NULL content means that join; readers rebuild it (documents.ts). Rows written
// before keep their content.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE paragraphs ALTER COLUMN content DROP NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`UPDATE paragraphs SET content = array_to_string(sentences, ' ') WHERE content IS NULL`.execute(db);
  await sql`ALTER TABLE paragraphs ALTER COLUMN content SET NOT NULL`.execute(db);
}
