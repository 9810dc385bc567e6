// A pool of connections to a PostgreSQL server, for the store and for the page-read thread.
import pg from 'pg';

/** A pool of `max` connections to `connectionString`, each running `settings` (statements) when it opens. */
export function serverPool(connectionString: string, max: number, settings: string): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  pool.on('connect', (client) => {
    void client.query(settings).catch(() => undefined);
  });
  pool.on('error', () => {
    // Idle clients that lose their connection are discarded by the pool; nothing to do.
  });
  return pool;
}
