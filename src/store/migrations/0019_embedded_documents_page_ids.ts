// insert_embedded_documents returns each document's page id beside its id: the embedded engine
// hands the pages it wrote to the page index from the request that carried them (their texts,
// vectors and tsvectors are all there) instead of reading them back from the store, which took
// about a tenth of the engine's thread under a bulk ingest.
import { sql, type Kysely } from 'kysely';
import * as m0017 from './0017_sentences_by_paragraph.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION insert_embedded_documents`.execute(db);
  await m0017.createFunction(db, 'documents and pages');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION insert_embedded_documents`.execute(db);
  await m0017.createFunction(db, 'documents');
}
