// The workspace's metadata catalogue: its top-level metadata fields, the JSON types each
// holds, and each field's most frequent scalar values (array elements included), computed
// in SQL over documents.metadata. It feeds query and metadata optimisation. Kept current:
// a cheap fingerprint of the workspace's documents (count, newest id, latest update) is read
// on every use, and the catalogue is recomputed whenever it changed.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

export type CatalogueScalar = string | number | boolean;

export interface CatalogueValue {
  value: CatalogueScalar;
  /** Documents (array elements: occurrences) holding the value. */
  count: number;
  /** Seen as an element of an array rather than as the field's own value. */
  inArray: boolean;
}

export interface CatalogueField {
  name: string;
  /** Documents holding the field, by JSON type (string, number, boolean, array, object, null). */
  types: Record<string, number>;
  documents: number;
  /** Most frequent first. */
  values: CatalogueValue[];
}

export interface Catalogue {
  /** Documents the catalogue was computed over (the newest ones when there are more than the sample). */
  documents: number;
  fields: CatalogueField[];
}

export interface CatalogueOptions {
  /** Newest documents read (LIMIT); older ones beyond it are not catalogued. */
  sampleDocuments?: number;
  maxFields?: number;
  valuesPerField?: number;
  /** Longer string values are not catalogued (they are text, not labels). */
  maxValueLength?: number;
  /** Workspaces kept in memory. */
  maxWorkspaces?: number;
}

interface Entry {
  fingerprint: string;
  catalogue: Catalogue;
}

export class MetadataCatalogue {
  private readonly cache = new Map<number, Entry>();
  private readonly sample: number;
  private readonly maxFields: number;
  private readonly valuesPerField: number;
  private readonly maxValueLength: number;
  private readonly maxWorkspaces: number;

  constructor(
    private readonly db: Kysely<Database>,
    options: CatalogueOptions = {},
  ) {
    this.sample = options.sampleDocuments ?? 20_000;
    this.maxFields = options.maxFields ?? 100;
    this.valuesPerField = options.valuesPerField ?? 50;
    this.maxValueLength = options.maxValueLength ?? 200;
    this.maxWorkspaces = options.maxWorkspaces ?? 500;
  }

  async get(workspaceId: number): Promise<Catalogue> {
    const fingerprint = await this.fingerprint(workspaceId);
    const cached = this.cache.get(workspaceId);
    if (cached && cached.fingerprint === fingerprint) return cached.catalogue;
    const catalogue = await this.compute(workspaceId);
    this.cache.delete(workspaceId);
    this.cache.set(workspaceId, { fingerprint, catalogue });
    if (this.cache.size > this.maxWorkspaces) this.cache.delete(this.cache.keys().next().value!);
    return catalogue;
  }

  // Inserts raise the newest id, deletions lower the count, metadata updates raise updated_at.
  private async fingerprint(workspaceId: number): Promise<string> {
    const { rows } = await sql<{ n: string; max_id: string | null; updated: string | null }>`
      SELECT count(*)::text AS n, max(id)::text AS max_id, max(updated_at)::text AS updated
      FROM documents WHERE workspace_id = ${workspaceId}
    `.execute(this.db);
    const r = rows[0];
    return `${r.n}/${r.max_id ?? ''}/${r.updated ?? ''}`;
  }

  private async compute(workspaceId: number): Promise<Catalogue> {
    // CASE guards: set-returning functions see only objects / arrays, whatever the planner does.
    const docs = sql`
      docs AS (
        SELECT metadata FROM documents
        WHERE workspace_id = ${workspaceId} AND jsonb_typeof(metadata) = 'object'
        ORDER BY id DESC LIMIT ${this.sample}
      ),
      kv AS (
        SELECT e.key, e.value
        FROM docs, jsonb_each(CASE WHEN jsonb_typeof(docs.metadata) = 'object' THEN docs.metadata ELSE '{}'::jsonb END) e
      )`;
    const [count, types, values] = await Promise.all([
      sql<{ n: string }>`WITH ${docs} SELECT count(*)::text AS n FROM docs`.execute(this.db),
      sql<{ key: string; type: string; n: string }>`
        WITH ${docs}
        SELECT key, jsonb_typeof(value) AS type, count(*)::text AS n FROM kv GROUP BY key, jsonb_typeof(value)
      `.execute(this.db),
      sql<{ key: string; value: CatalogueScalar; in_array: boolean; n: string }>`
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
          WHERE jsonb_typeof(value) <> 'string' OR length(value #>> '{}') BETWEEN 1 AND ${this.maxValueLength}
          GROUP BY key, value, in_array
        ),
        ranked AS (
          SELECT key, value, in_array, n, row_number() OVER (PARTITION BY key ORDER BY n DESC, value) AS r FROM counted
        )
        SELECT key, value, in_array, n::text AS n FROM ranked WHERE r <= ${this.valuesPerField} ORDER BY key, r
      `.execute(this.db),
    ]);

    const fields = new Map<string, CatalogueField>();
    for (const row of types.rows) {
      const field = fields.get(row.key) ?? { name: row.key, types: {}, documents: 0, values: [] };
      field.types[row.type] = Number(row.n);
      field.documents += Number(row.n);
      fields.set(row.key, field);
    }
    for (const row of values.rows) {
      fields.get(row.key)?.values.push({ value: row.value, count: Number(row.n), inArray: row.in_array });
    }
    const ordered = Array.from(fields.values())
      .sort((a, b) => b.documents - a.documents || (a.name < b.name ? -1 : 1))
      .slice(0, this.maxFields);
    return { documents: Number(count.rows[0]?.n ?? 0), fields: ordered };
  }
}
