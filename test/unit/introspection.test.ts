// The store's introspector reads the current schema alone, so the migrator's checks do not
// fail when another client drops some other schema of the database meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/store/engine.js';
import { ENGINES, POSTGRES_URL, newSchemaName, openTestStore, type TestStore } from '../helpers/stores.js';

describe.each(ENGINES)('introspection on %s', (engine) => {
  let store: TestStore;

  beforeAll(async () => {
    store = await openTestStore(engine);
  });
  afterAll(async () => {
    await store?.close();
  });

  it("lists the current schema's tables and no other schema's", async () => {
    const other = newSchemaName();
    await sql`CREATE SCHEMA ${sql.id(other)}`.execute(store.db);
    await sql`CREATE TABLE ${sql.id(other, 'elsewhere')} (id serial PRIMARY KEY)`.execute(store.db);
    try {
      const tables = await store.db.introspection.getTables();
      const names = tables.map((table) => table.name);
      expect(names).toContain('pages');
      expect(names).not.toContain('elsewhere');
      expect(names).not.toContain('kysely_migration');
      expect(new Set(tables.map((table) => table.schema)).size).toBe(1);
      const pages = tables.find((table) => table.name === 'pages')!;
      expect(pages.columns.find((column) => column.name === 'id')).toMatchObject({ isAutoIncrementing: true, isNullable: false });

      const internal = await store.db.introspection.getTables({ withInternalKyselyTables: true });
      expect(internal.map((table) => table.name)).toEqual(expect.arrayContaining(['kysely_migration', 'kysely_migration_lock']));
      expect((await store.db.introspection.getSchemas()).map((schema) => schema.name)).toContain(other);
    } finally {
      await sql`DROP SCHEMA ${sql.id(other)} CASCADE`.execute(store.db);
    }
  });

  it.runIf(engine === 'postgres')('migrates while another client creates and drops schemas', async () => {
    const churn = new pg.Client({ connectionString: POSTGRES_URL });
    await churn.connect();
    let running = true;
    const dropping = (async () => {
      while (running) {
        const name = newSchemaName();
        await churn.query(`CREATE SCHEMA ${name}; CREATE TABLE ${name}.t (id serial PRIMARY KEY, a int, b text, c text, d text)`);
        await churn.query(`DROP SCHEMA ${name} CASCADE`);
      }
    })();
    try {
      for (let i = 0; i < 60; i++) expect(await migrateToLatest(store.db)).toEqual([]);
    } finally {
      running = false;
      await dropping;
      await churn.end();
    }
  });
});
