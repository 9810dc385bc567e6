// A paragraph row holds its sentences (texts and ids, in order) instead of one row per
// sentence: a page has about 20 sentences, and their rows with their two index entries and
// foreign-key checks were the largest share of writing a document. Sentences are only ever read
// with their paragraph. Existing sentences keep their ids and the sequence goes on from them;
// a sentence's created_at is now its paragraph's.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE paragraphs
      ADD COLUMN sentences text[] NOT NULL DEFAULT '{}',
      ADD COLUMN sentence_ids bigint[] NOT NULL DEFAULT '{}';
    UPDATE paragraphs g
      SET sentences = s.contents, sentence_ids = s.ids
      FROM (
        SELECT paragraph_id, array_agg(content ORDER BY sentence_index) AS contents, array_agg(id ORDER BY sentence_index) AS ids
        FROM sentences GROUP BY paragraph_id
      ) s
      WHERE s.paragraph_id = g.id;
    ALTER TABLE paragraphs ALTER COLUMN sentences DROP DEFAULT, ALTER COLUMN sentence_ids DROP DEFAULT;
    ALTER TABLE paragraphs ADD CONSTRAINT paragraphs_sentence_ids CHECK (cardinality(sentences) = cardinality(sentence_ids));
    ALTER SEQUENCE sentences_id_seq OWNED BY NONE;
    ALTER SEQUENCE sentences_id_seq RENAME TO sentence_id_seq;
    DROP TABLE sentences;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER SEQUENCE sentence_id_seq RENAME TO sentences_id_seq;
    CREATE TABLE sentences (
      id bigint PRIMARY KEY DEFAULT nextval('sentences_id_seq'),
      paragraph_id bigint NOT NULL REFERENCES paragraphs(id) ON DELETE CASCADE,
      sentence_index integer NOT NULL,
      content text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    ALTER SEQUENCE sentences_id_seq OWNED BY sentences.id;
    INSERT INTO sentences (id, paragraph_id, sentence_index, content, created_at)
      SELECT s.id, g.id, s.n - 1, s.content, g.created_at
      FROM paragraphs g, unnest(g.sentence_ids, g.sentences) WITH ORDINALITY AS s(id, content, n);
    CREATE INDEX sentences_paragraph_idx ON sentences (paragraph_id, sentence_index);
    ALTER TABLE paragraphs DROP CONSTRAINT paragraphs_sentence_ids, DROP COLUMN sentences, DROP COLUMN sentence_ids;
  `.execute(db);
}
