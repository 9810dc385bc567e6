// The pages' GIN index on their tsvector goes: keyword ranking and the answer's "is this word
// known" both read the in-memory inverted index, so no statement matches tsvectors any more,
// and every page written paid for the index (and, on the embedded engine, which runs no
// autovacuum, for flushing its pending list in the middle of some write).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX pages_tsv_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX pages_tsv_idx ON pages USING gin (tsv)`.execute(db);
}
