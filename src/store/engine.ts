// Opens the store on one of two engines behind one Kysely instance: PGlite (embedded, data
// under FOLIO_DATA_DIR) or a PostgreSQL server (pooled) when DATABASE_URL is set.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { Kysely, Migrator, sql, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { DEFAULT_EMBEDDED_CACHE_MB, DEFAULT_EMBEDDED_WAL_MB } from '../config.js';
import { writtenPages, type EmbeddedDocument } from './embedded-batch.js';
import type { Database } from './schema.js';
import { raisingStoreErrors, translatingPool } from './errors.js';
import { migrationProvider } from './migrations/index.js';
import { StoreDialect } from './introspection.js';
import { lockDataDir } from './lock.js';
import { unpackPages } from './page-batch.js';
import { CopyThread } from './page-copy-client.js';
import { serverPool } from './server-pool.js';
import type { IndexedPage, PageReader, PageSelection } from './pages.js';
import { EngineThread, ThreadConnection } from './pglite-client.js';

// int8 ids fit in a double; timestamps without zone are UTC wall times, kept as written.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.TIMESTAMP, (v) => v);

export type Engine = 'pglite' | 'postgres';

/**
 * Counts the statements that may have written what the page index reads (see `mayWrite`) on a
 * store that only this process opens, so a reader can tell that nothing it reads changed since
 * it last looked without asking the database.
 */
export interface LocalWrites {
  readonly count: number;
}

/**
 * Told of the pages the embedded engine's writes of documents from embeddings add, as each
 * commits and before any statement that ran after it is answered (the page index adds them
 * then instead of reading them back at the next search).
 */
export interface WrittenPagesWatcher {
  /** Whether the pages of a write to the workspace are wanted (they are then handed over with it). */
  wants(workspaceId: number): boolean;
  /**
   * The write, counted as local write `writes`, wrote to `workspaces`; `pages`: their pages by
   * workspace (a workspace is missing whose pages could not all be made: embedded-batch.ts), or
   * null when none was wanted.
   */
  written(writes: number, workspaces: readonly number[], pages: ReadonlyMap<number, IndexedPage[]> | null): void;
}

/** The connection pool right now (the embedded engine is one session: a pool of one). */
export interface ConnectionUse {
  max: number;
  open: number;
  idle: number;
  /** Callers waiting for a connection. */
  waiting: number;
}

export interface Store {
  db: Kysely<Database>;
  engine: Engine;
  /** Set on the embedded engine, whose data directory one process holds; null on the server engine. */
  localWrites: LocalWrites | null;
  /**
   * Embedded engine: writes documents from precomputed embeddings on the engine's thread, joined
   * there with the others waiting (as `insertEmbeddedDocumentsUnwatched` answers: ids in order,
   * or null when a webhook watches one of the workspaces). Null on the server engine.
   */
  writeEmbedded: ((items: EmbeddedDocument[]) => Promise<number[] | null>) | null;
  /** Embedded engine: adds a watcher of its writes' pages (`WrittenPagesWatcher`); returns its removal. Null on the server engine. */
  watchWrittenPages: ((watcher: WrittenPagesWatcher) => () => void) | null;
  /**
   * Reads pages for the page index (a batch of a workspace's load, or the pages a catch-up adds)
   * in binary: on the embedded engine's thread (page-batch.ts), or through COPY on a thread and
   * connection of the server engine's own (page-copy.ts).
   */
  readPages: PageReader;
  connections(): ConnectionUse;
  close(): Promise<void>;
}

function connectionUse(pool: pg.Pool, max: number): () => ConnectionUse {
  return () => ({ max, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
}

export interface StoreOptions {
  databaseUrl: string | null;
  /** Directory for the embedded engine; `null` keeps it in memory (tests, tools). */
  dataDir: string | null;
  /** Pool size for the server engine. */
  poolSize?: number;
  /** Schema to use on the server engine (tests isolate runs in their own schema). */
  schema?: string;
  /**
   * Embedded engine: a dump of a data directory (PGlite's `dumpDataDir`) to start from, which
   * skips the seconds of CPU that creating an empty cluster costs (tests open hundreds).
   */
  snapshot?: Blob;
  /**
   * Embedded engine: PostgreSQL's shared_buffers in MiB. PGlite holds them in its WebAssembly
   * memory, which never shrinks; PostgreSQL's default of 128 MiB outweighs a small index.
   */
  cacheMb?: number;
  /**
   * Embedded engine: PostgreSQL's max_wal_size in MiB. PGlite has no checkpointer process: its
   * thread checkpoints when the log since the last checkpoint nears this (pglite-thread.ts).
   */
  walMb?: number;
}


async function openPostgres(options: StoreOptions): Promise<Store> {
  const max = options.poolSize ?? 10;
  // Session settings on each new connection (not through the URL's `options`, which a
  // DATABASE_URL may set itself): a runaway query must not hold a connection forever.
  const statements = ['SET statement_timeout = 30000'];
  if (options.schema) statements.push(`SET search_path TO ${pg.escapeIdentifier(options.schema)}`);
  const settings = statements.join('; ');
  const pool = serverPool(options.databaseUrl!, max, settings);
  const pageReads = new CopyThread({ connectionString: options.databaseUrl!, settings });
  const db = new Kysely<Database>({ dialect: new StoreDialect({ pool: translatingPool(pool) }) });
  return {
    db,
    engine: 'postgres',
    localWrites: null,
    watchWrittenPages: null,
    writeEmbedded: null,
    readPages: raisingStoreErrors((selection: PageSelection) => pageReads.readPages(selection)),
    connections: connectionUse(pool, max),
    close: async () => {
      try {
        await pageReads.close();
      } finally {
        await db.destroy();
      }
    },
  };
}

const PLAIN_SELECT = /^\s*select\b/i;
/** Functions that write, called from a SELECT: the statements that call them count as writes. */
const WRITING_FUNCTION = /\binsert_embedded_documents\(/;

/**
 * Statements that write only tables the page index never reads (the task queue, webhooks):
 * under a stream of uploads their progress and lease updates would otherwise send every search
 * to catch up. A statement that names one of the index's tables anywhere is not one of them.
 */
const UNINDEXED_WRITE = /^\s*(?:update|insert\s+into|delete\s+from)\s+"?(?:tasks|webhooks|webhook_events|webhook_deliveries|webhook_attempts)"?\s/i;
const INDEXED_TABLE = /\b(?:documents|pages|paragraphs|workspaces)\b/i;
/** Transaction control changes nothing by itself: a transaction's writes are counted as they are sent, before it commits. */
const TRANSACTION_CONTROL = /^\s*(?:begin|commit|rollback)\s*;?\s*$/i;

/** Whether a statement may change what the page index reads (the embedded engine's write count, `LocalWrites`). */
export function mayWrite(text: string): boolean {
  if (PLAIN_SELECT.test(text)) return WRITING_FUNCTION.test(text);
  if (TRANSACTION_CONTROL.test(text)) return false;
  return !UNINDEXED_WRITE.test(text) || INDEXED_TABLE.test(text);
}

/** Statements given a name at most, and statement texts remembered as run once. */
const MAX_NAMED = 200;
const MAX_SEEN = 1000;
/** Longer texts (multi-row inserts, mostly) are not worth a name. */
const MAX_NAMED_TEXT = 4000;

/**
 * Names for the statements the embedded engine runs again and again: a statement with
 * parameters gets a name at its second run, and PostgreSQL then parses and plans it once per
 * connection instead of at every run (0.1-0.15 ms of PGlite's thread each time; node-postgres
 * sends the Parse only on the connection's first use of a name). Only on the embedded engine:
 * a server may sit behind a pooler that does not keep named statements.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly seen = new Set<string>();

  nameOf(text: string, parameters: number): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined) return name;
    // Without parameters node-postgres uses the simple protocol (BEGIN, COMMIT, DDL): left so.
    if (parameters === 0 || text.length > MAX_NAMED_TEXT || this.names.size >= MAX_NAMED) return undefined;
    if (!this.seen.has(text)) {
      if (this.seen.size >= MAX_SEEN) this.seen.clear();
      this.seen.add(text);
      return undefined;
    }
    this.seen.delete(text);
    const next = `folio_${this.names.size + 1}`;
    this.names.set(text, next);
    return next;
  }
}

function embeddedPool(pool: pg.Pool, writes: { count: number }): PostgresPool {
  const names = new StatementNames();
  return {
    connect: async () => {
      const client = await pool.connect();
      const query = async (text: string, parameters: readonly unknown[]) => {
        // Counted before it runs: whoever reads the count afterwards queues behind it on the one connection.
        if (mayWrite(text)) writes.count++;
        return client.query({ name: names.nameOf(text, parameters.length), text, values: [...parameters] });
      };
      // Kysely calls only the (sql, parameters) form here: nothing streams through a cursor.
      return { query, release: () => client.release() } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}

/**
 * Creates the cluster of a new data directory in a child process. Creating it grows PGlite's
 * WebAssembly memory to about 650 MB, which never shrinks: a server that did it in process
 * kept that resident until its restart, where one opening an existing cluster holds ~180 MB.
 */
async function createCluster(dataDir: string): Promise<void> {
  if (fs.existsSync(path.join(dataDir, 'PG_VERSION'))) return;
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const script = `const { PGlite } = require(${JSON.stringify(entry)});
    PGlite.create(${JSON.stringify(dataDir)}).then((db) => db.close()).catch((e) => { console.error(e); process.exit(1); });`;
  await promisify(execFile)(process.execPath, ['-e', script], { maxBuffer: 1 << 20 });
}

async function openPGlite(options: StoreOptions): Promise<Store> {
  let release = (): void => {};
  let dataDir: string | undefined;
  if (options.dataDir) {
    release = lockDataDir(options.dataDir);
    dataDir = path.join(options.dataDir, 'pgdata');
  }
  try {
    if (dataDir) await createCluster(dataDir);
    const thread = await EngineThread.start({
      dataDir: dataDir ?? null,
      // Start parameters, not postgresqlconf, which would replace the file initdb wrote. A new
      // 16 MB WAL segment is not filled with zeros first: under a stream of ingests PostgreSQL
      // starts one every second or so, and writing the zeros took about a tenth of this thread.
      settings: [
        `shared_buffers=${options.cacheMb ?? DEFAULT_EMBEDDED_CACHE_MB}MB`,
        `max_wal_size=${options.walMb ?? DEFAULT_EMBEDDED_WAL_MB}MB`,
        'wal_init_zero=off',
      ],
      snapshot: options.snapshot ?? null,
    });
    // PGlite is one session: a second pooled connection would wait forever.
    // An idle store does not hold the process open (a command that forgot to close it still exits).
    const pool = new pg.Pool({ connection: new ThreadConnection(thread), max: 1, allowExitOnIdle: true } as pg.PoolConfig);
    pool.on('error', () => {
      // A stopped thread fails the statements that were waiting (their callers get the error); nothing else to do.
    });
    const localWrites = { count: 0 };
    const db = new Kysely<Database>({ dialect: new StoreDialect({ pool: translatingPool(embeddedPool(pool, localWrites)) }) });
    const watchers = new Set<WrittenPagesWatcher>();
    thread.onWritten = ({ workspaces, items, written, pagesWanted }) => {
      // Counted once committed: a reader that sees the count asks after the write.
      localWrites.count++;
      const byWorkspace = pagesWanted ? writtenPages(items, written) : null;
      for (const watcher of watchers) watcher.written(localWrites.count, workspaces, byWorkspace);
    };
    return {
      db,
      engine: 'pglite',
      localWrites,
      writeEmbedded: raisingStoreErrors((items: EmbeddedDocument[]) =>
        thread.writeEmbedded(items, [...watchers].some((watcher) => items.some((item) => watcher.wants(item.document.workspaceId)))),
      ),
      watchWrittenPages: (watcher) => {
        watchers.add(watcher);
        return () => watchers.delete(watcher);
      },
      readPages: raisingStoreErrors(async (selection: PageSelection) => unpackPages(await thread.readPages(selection))),
      connections: connectionUse(pool, 1),
      close: async () => {
        try {
          // After the statements already sent. The pool is left as it is (it holds no socket and
          // keeps no process alive): a statement asked later fails as on a lost connection.
          await thread.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

export async function openStore(options: StoreOptions): Promise<Store> {
  return options.databaseUrl ? openPostgres(options) : openPGlite(options);
}

/**
 * Applies pending migrations. Kysely's bookkeeping tables go in the current schema: left to
 * itself, Kysely would find another schema's bookkeeping (another app's, say) and skip ours.
 */
export async function migrateToLatest(db: Kysely<Database>, schema?: string): Promise<string[]> {
  const current = schema ?? (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0].schema;
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema: current });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
