// The embedded engine runs PGlite on a thread of its own and speaks the PostgreSQL protocol
// to it: what a caller sees must be what a server connection gives (results, errors with
// their codes, transactions), and the thread must not outlive or hang its store.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/engine.js';
import { clusterSnapshot, migratedDataDir } from '../helpers/stores.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the embedded engine on its own thread', () => {
  let store: Store;

  beforeAll(async () => {
    store = await openStore({ databaseUrl: null, dataDir: null, snapshot: await clusterSnapshot() });
    await sql`CREATE TABLE t (id int PRIMARY KEY, body text)`.execute(store.db);
  });
  afterAll(async () => {
    await store.close();
  });

  it('answers many concurrent callers each with its own result', async () => {
    const values = Array.from({ length: 300 }, (_, i) => i);
    const results = await Promise.all(values.map((v) => sql<{ v: number; s: string }>`SELECT ${v}::int AS v, repeat('x', ${v}) AS s`.execute(store.db)));
    expect(results.map((r) => r.rows[0])).toEqual(values.map((v) => ({ v, s: 'x'.repeat(v) })));
  });

  it('starts with a small cache and WAL segments that are not zero-filled', async () => {
    const setting = async (name: string) => (await sql<{ value: string }>`SELECT current_setting(${name}) AS value`.execute(store.db)).rows[0].value;
    expect(await setting('wal_init_zero')).toBe('off');
    expect(await setting('shared_buffers')).not.toBe('128MB');
  });

  it('carries large values both ways', async () => {
    const body = 'é'.repeat(3_000_000);
    await sql`INSERT INTO t VALUES (1, ${body})`.execute(store.db);
    const row = await sql<{ body: string }>`SELECT body FROM t WHERE id = 1`.execute(store.db);
    expect(row.rows[0].body).toBe(body);
  });

  it('reports errors with their PostgreSQL code and goes on working', async () => {
    await expect(sql`INSERT INTO t VALUES (1, 'again')`.execute(store.db)).rejects.toMatchObject({ code: '23505' });
    await expect(sql`SELECT * FROM no_such_table`.execute(store.db)).rejects.toMatchObject({ code: '42P01' });
    await expect(sql`SELECT 1/0`.execute(store.db)).rejects.toMatchObject({ code: '22012' });
    expect((await sql<{ n: number }>`SELECT 2 AS n`.execute(store.db)).rows).toEqual([{ n: 2 }]);
  });

  it('rolls a failed transaction back whole', async () => {
    await expect(
      store.db.transaction().execute(async (trx) => {
        await sql`INSERT INTO t VALUES (2, 'kept?')`.execute(trx);
        await sql`INSERT INTO t VALUES (1, 'duplicate')`.execute(trx);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect((await sql`SELECT id FROM t WHERE id = 2`.execute(store.db)).rows).toEqual([]);
  });

  it('refuses statements after close instead of hanging', async () => {
    const other = await openStore({ databaseUrl: null, dataDir: null, snapshot: await clusterSnapshot() });
    await other.close();
    // As a lost server connection: PostgreSQL's code for it, which the API answers with a 503.
    await expect(sql`SELECT 1`.execute(other.db)).rejects.toMatchObject({ kind: 'connection_failed' });
  });

  it('does not keep a process alive once its statements are answered, and keeps what it wrote', async () => {
    const dir = await migratedDataDir('folio-thread-');
    try {
      // The script opens a store on a data directory, writes, and never closes it.
      const script = `
        import { sql } from 'kysely';
        import { openStore } from ${JSON.stringify(path.join(ROOT, 'src/store/engine.ts'))};
        const store = await openStore({ databaseUrl: null, dataDir: ${JSON.stringify(dir)} });
        await sql\`CREATE TABLE kept (n int)\`.execute(store.db);
        await sql\`INSERT INTO kept VALUES (42)\`.execute(store.db);
        console.log('written');
      `;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('close', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      expect(output).toContain('written');
      expect(code).toBe(0);

      // The lock it left names a process that is gone: the directory opens, with the row.
      const reopened = await openStore({ databaseUrl: null, dataDir: dir });
      try {
        expect((await sql<{ n: number }>`SELECT n FROM kept`.execute(reopened.db)).rows).toEqual([{ n: 42 }]);
      } finally {
        await reopened.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('checkpoints as it writes, so its write-ahead log stays near max_wal_size', async () => {
    const dir = await migratedDataDir('folio-wal-');
    // PostgreSQL's least max_wal_size: a checkpoint is due after about 17 MB of log.
    const walStore = await openStore({ databaseUrl: null, dataDir: dir, walMb: 32 });
    try {
      const walBytes = () =>
        fs.readdirSync(path.join(dir, 'pgdata/pg_wal')).reduce((sum, name) => (/^[0-9A-F]{24}$/.test(name) ? sum + fs.statSync(path.join(dir, 'pgdata/pg_wal', name)).size : sum), 0);
      const redo = async () => (await sql<{ redo: string }>`SELECT redo_lsn::text AS redo FROM pg_control_checkpoint()`.execute(walStore.db)).rows[0].redo;
      await sql`CREATE TABLE blobs (b bytea)`.execute(walStore.db);
      await sql`ALTER TABLE blobs ALTER COLUMN b SET STORAGE EXTERNAL`.execute(walStore.db);
      const redos = [await redo()];
      for (let round = 0; round < 2; round++) {
        // 40 MB of random bytes, which nothing compresses; then, past the thread's interval
        // between looks at the log, one more write after which it looks.
        for (let i = 0; i < 10; i++) {
          await sql`INSERT INTO blobs VALUES (${randomBytes(4 * 1024 * 1024)})`.execute(walStore.db);
        }
        await new Promise((resolve) => setTimeout(resolve, 1100));
        await sql`INSERT INTO blobs VALUES ('\\x00')`.execute(walStore.db);
        redos.push(await redo());
      }
      // A checkpoint after each round (each a new redo position), and 80 MB written into a log
      // that reused its files (32 MB): without checkpoints it held all of it.
      expect(new Set(redos).size).toBe(redos.length);
      expect(walBytes()).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await walStore.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
