// Opens a migrated store on each engine for tests: PGlite in memory, and the PostgreSQL
// server on 127.0.0.1 in a fresh schema per run. Under CI=true a missing server fails.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { migrateToLatest, openStore, type Engine, type Store } from '../../src/store/engine.js';
import type { Database } from '../../src/store/schema.js';

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

/** One statement on a bare connection to an engine, with its rows. */
export type Ask = <Row extends Record<string, unknown>>(text: string, params: unknown[]) => Promise<{ rows: Row[] }>;

/** Calls `use` with statements on a bare connection (no store, no schema): a fresh PGlite, or a client of the server; closed after. */
export async function withBareEngine(engine: Engine, use: (ask: Ask) => Promise<void>): Promise<void> {
  if (engine === 'pglite') {
    const db = await PGlite.create({ loadDataDir: await clusterSnapshot() });
    try {
      await use((text, params) => db.query(text, params));
    } finally {
      await db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await use((text, params) => client.query(text, params));
  } finally {
    await client.end();
  }
}

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

const MIGRATIONS = path.resolve(import.meta.dirname, '../../src/store/migrations');

/** Names a snapshot by what shapes it: the PGlite build, and the migration files when it is migrated. */
function snapshotFile(kind: 'cluster' | 'migrated'): string {
  const hash = createHash('sha256').update(fs.readFileSync(path.resolve(import.meta.dirname, '../../node_modules/@electric-sql/pglite/package.json')));
  if (kind === 'migrated') for (const name of fs.readdirSync(MIGRATIONS).sort()) hash.update(name).update(fs.readFileSync(path.join(MIGRATIONS, name)));
  return path.join(os.tmpdir(), `folio-test-pglite-${kind}-${hash.digest('hex').slice(0, 16)}.tar`);
}

async function dumpCluster(): Promise<Blob> {
  const pglite = await PGlite.create();
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  return dump;
}

async function dumpMigrated(): Promise<Blob> {
  const pglite = await PGlite.create({ loadDataDir: await clusterSnapshot() });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ ...createPgConfig(pglite), max: 1 }) }) });
  await migrateToLatest(db);
  await db.destroy();
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  return dump;
}

const snapshots = new Map<string, Promise<Blob>>();

/**
 * An embedded database to load instead of making one: initdb costs about 3 s of CPU (far more
 * while other test files keep both cores busy), loading this 1 s. Kept in the temporary
 * directory, shared by every test file and run on this machine, and written whole (rename) so
 * a concurrent reader never sees half.
 */
function snapshot(kind: 'cluster' | 'migrated', dump: () => Promise<Blob>): Promise<Blob> {
  const file = snapshotFile(kind);
  let kept = snapshots.get(file);
  if (!kept) {
    kept = (async () => {
      if (fs.existsSync(file)) return new Blob([fs.readFileSync(file)]);
      const made = await dump();
      const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      fs.writeFileSync(partial, Buffer.from(await made.arrayBuffer()));
      fs.renameSync(partial, file);
      return made;
    })();
    snapshots.set(file, kept);
  }
  return kept;
}

/** A new, empty cluster: what initdb makes. */
export const clusterSnapshot = (): Promise<Blob> => snapshot('cluster', dumpCluster);

/** A migrated, empty embedded database. */
const migratedSnapshot = (): Promise<Blob> => snapshot('migrated', dumpMigrated);

/**
 * A new data directory holding a migrated, empty embedded database, as `folio serve` leaves
 * one after its first start: for tests of later starts, which need not pay for initdb.
 */
export async function migratedDataDir(prefix: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const pglite = await PGlite.create(path.join(dir, 'pgdata'), { loadDataDir: await migratedSnapshot() });
  await pglite.close();
  return dir;
}

/** A migrated, empty store on the given engine; close() also drops the test schema. */
export async function openTestStore(engine: Engine): Promise<TestStore> {
  if (engine === 'pglite') {
    const store = await openStore({ databaseUrl: null, dataDir: null, snapshot: await migratedSnapshot() });
    // A no-op on the snapshot; it keeps the check that the store is at the latest migration.
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
