// Statistics of a workspace's document metadata for the metadata catalogue (answer/catalogue.ts):
// a cheap fingerprint that changes whenever the documents do, and per top-level field its
// JSON types and its most frequent scalar values (array elements included).
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** A string that changes whenever the workspace's documents change: inserts raise the newest id, deletions lower the count, metadata updates raise updated_at. */
export async function metadataFingerprint(db: Kysely<Database>, workspaceId: number): Promise<string> {
  const { rows } = await sql<{ n: string; max_id: string | null; updated: string | null }>`
    SELECT count(*)::text AS n, max(id)::text AS max_id, max(updated_at)::text AS updated
    FROM documents WHERE workspace_id = ${workspaceId}
  `.execute(db);
  const r = rows[0];
  return `${r.n}/${r.max_id ?? ''}/${r.updated ?? ''}`;
}

export interface MetadataStatisticsOptions {
  /** Newest documents read. */
  sample: number;
  valuesPerField: number;
  /** Longer string values are left out. */
  maxValueLength: number;
}

export interface MetadataStatistics {
  /** Documents read (the newest, up to the sample). */
  documents: number;
  /** Documents holding each field, by JSON type. */
  types: { key: string; type: string; n: number }[];
  /** Each field's most frequent scalar values, most frequent first within a field. */
  values: { key: string; value: string | number | boolean; inArray: boolean; n: number }[];
}

export async function metadataStatistics(
  db: Kysely<Database>,
  workspaceId: number,
  { sample, valuesPerField, maxValueLength }: MetadataStatisticsOptions,
): Promise<MetadataStatistics> {
  // CASE guards: set-returning functions see only objects / arrays, whatever the planner does.
  const docs = sql`
    docs AS (
      SELECT metadata FROM documents
      WHERE workspace_id = ${workspaceId} AND jsonb_typeof(metadata) = 'object'
      ORDER BY id DESC LIMIT ${sample}
    ),
    kv AS (
      SELECT e.key, e.value
      FROM docs, jsonb_each(CASE WHEN jsonb_typeof(docs.metadata) = 'object' THEN docs.metadata ELSE '{}'::jsonb END) e
    )`;
  const [count, types, values] = await Promise.all([
    sql<{ n: string }>`WITH ${docs} SELECT count(*)::text AS n FROM docs`.execute(db),
    sql<{ key: string; type: string; n: string }>`
      WITH ${docs}
      SELECT key, jsonb_typeof(value) AS type, count(*)::text AS n FROM kv GROUP BY key, jsonb_typeof(value)
    `.execute(db),
    sql<{ key: string; value: string | number | boolean; in_array: boolean; n: string }>`
      WITH ${docs},
      scalars AS (
        SELECT key, value, false AS in_array FROM kv WHERE jsonb_typeof(value) IN ('string', 'number', 'boolean')
        UNION ALL
        SELECT kv.key, el.value, true
        FROM kv, jsonb_array_elements(CASE WHEN jsonb_typeof(kv.value) = 'array' THEN kv.value ELSE '[]'::jsonb END) el
        WHERE jsonb_typeof(el.value) IN ('string', 'number', 'boolean')
      ),
      counted AS (
        SELECT key, value, in_array, count(*) AS n FROM scalars
        WHERE jsonb_typeof(value) <> 'string' OR length(value #>> '{}') BETWEEN 1 AND ${maxValueLength}
        GROUP BY key, value, in_array
      ),
      ranked AS (
        SELECT key, value, in_array, n, row_number() OVER (PARTITION BY key ORDER BY n DESC, value) AS r FROM counted
      )
      SELECT key, value, in_array, n::text AS n FROM ranked WHERE r <= ${valuesPerField} ORDER BY key, r
    `.execute(db),
  ]);
  return {
    documents: Number(count.rows[0]?.n ?? 0),
    types: types.rows.map((r) => ({ key: r.key, type: r.type, n: Number(r.n) })),
    values: values.rows.map((r) => ({ key: r.key, value: r.value, inArray: r.in_array, n: Number(r.n) })),
  };
}
