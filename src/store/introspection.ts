// Kysely's introspector for PostgreSQL reads every table of every schema in the database and
// calls functions that take a schema's name (has_schema_privilege, pg_get_serial_sequence):
// a schema that another client drops during that read fails the read with "schema does not
// exist". Folio's migrator only asks about its own schema, so the store's dialect reads that
// one alone.
import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

interface ColumnRow {
  table: string;
  table_type: string;
  schema: string;
  column: string;
  not_null: boolean;
  has_default: boolean;
  type: string;
  type_schema: string;
  column_description: string | null;
  auto_incrementing: string | null;
}

/** Introspects the session's current schema (the first of its search_path that exists). */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`SELECT nspname AS name FROM pg_catalog.pg_namespace`.execute(this.db);
    return rows.map((row) => ({ name: row.name }));
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      SELECT c.relname AS table, c.relkind AS table_type, ns.nspname AS schema, a.attname AS column,
             a.attnotnull AS not_null, a.atthasdef AS has_default, typ.typname AS type, dtns.nspname AS type_schema,
             col_description(a.attrelid, a.attnum) AS column_description,
             pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) AS auto_incrementing
      FROM pg_catalog.pg_attribute a
      JOIN pg_catalog.pg_class c ON a.attrelid = c.oid
      JOIN pg_catalog.pg_namespace ns ON c.relnamespace = ns.oid
      JOIN pg_catalog.pg_type typ ON a.atttypid = typ.oid
      JOIN pg_catalog.pg_namespace dtns ON typ.typnamespace = dtns.oid
      WHERE ns.nspname = current_schema() AND c.relkind IN ('r', 'v', 'p') AND a.attnum >= 0 AND NOT a.attisdropped
        AND (${options.withInternalKyselyTables ?? false} OR c.relname NOT IN (${DEFAULT_MIGRATION_TABLE}, ${DEFAULT_MIGRATION_LOCK_TABLE}))
      ORDER BY c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const row of rows) {
      let table = tables.get(row.table);
      if (!table) {
        table = { name: row.table, schema: row.schema, isView: row.table_type === 'v', columns: [] };
        tables.set(row.table, table);
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        isAutoIncrementing: row.auto_incrementing !== null,
        hasDefaultValue: row.has_default,
        comment: row.column_description ?? undefined,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

/** Kysely's PostgreSQL dialect, introspecting the current schema only. */
export class StoreDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
