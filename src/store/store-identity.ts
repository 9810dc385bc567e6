// Which database a process reads, and how far its transactions have gone: what the page
// index's snapshots (search/index-snapshot.ts) are keyed and checked by, so that one is never
// used for another database or schema, nor for a store behind its position (restored from an
// older backup).
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export interface StoreIdentity {
  /** The cluster's system identifier, the database and the schema, hashed: a directory name. */
  key: string;
  /** Every transaction id from this on is still to be assigned (the current snapshot's xmax). */
  xmax: bigint;
  /** The last migration applied: a snapshot made before another leaves pages it may have rewritten. */
  migration: string;
}

export async function storeIdentity(db: Kysely<Database>): Promise<StoreIdentity> {
  const result = await sql<{ system: string; database: string; schema: string; xmax: string; migration: string | null }>`
    SELECT (SELECT system_identifier FROM pg_control_system())::text AS system, current_database() AS database,
      current_schema() AS schema, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax,
      (SELECT max(name) FROM kysely_migration) AS migration
  `.execute(db);
  const { system, database, schema, xmax, migration } = result.rows[0];
  const key = createHash('sha256').update(`${system}\0${database}\0${schema}`).digest('hex').slice(0, 24);
  return { key, xmax: BigInt(xmax), migration: migration ?? '' };
}
