// Opens a migrated store on each engine for tests: PGlite in memory, and the PostgreSQL
// server on 127.0.0.1 in a fresh schema per run. Under CI=true a missing server fails.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { migrateToLatest, openStore, type Engine, type Store } from '../../src/store/engine.js';

export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const postgresAvailable = await postgresAnswers();
if (!postgresAvailable && process.env.CI === 'true') {
  throw new Error(`PostgreSQL is required under CI=true but does not answer at ${POSTGRES_URL}`);
}

/** The engines to run a suite against; the server engine is skipped only outside CI. */
export const ENGINES: Engine[] = postgresAvailable ? ['pglite', 'postgres'] : ['pglite'];

export interface TestStore extends Store {
  /** Connection settings to open more stores on the same data (server engine only). */
  schema: string | null;
}

export function newSchemaName(): string {
  return `test_${randomBytes(6).toString('hex')}`;
}

export async function createSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** A migrated, empty store on the given engine; close() also drops the test schema. */
export async function openTestStore(engine: Engine): Promise<TestStore> {
  if (engine === 'pglite') {
    const store = await openStore({ databaseUrl: null, dataDir: null });
    await migrateToLatest(store.db);
    return { ...store, schema: null };
  }
  const schema = newSchemaName();
  await createSchema(schema);
  const store = await openStore({ databaseUrl: POSTGRES_URL, dataDir: null, schema, poolSize: 10 });
  await migrateToLatest(store.db);
  await sql`SELECT 1`.execute(store.db);
  return {
    ...store,
    schema,
    close: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
}
