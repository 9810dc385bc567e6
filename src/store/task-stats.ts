// What monitoring reads off the task table: how many tasks are in each state, and how long
// the oldest runnable one has waited.
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export interface TaskCount {
  kind: string;
  status: string;
  count: number;
}

export async function countTasksByKindAndStatus(db: Kysely<Database>): Promise<TaskCount[]> {
  const result = await sql<TaskCount>`SELECT kind, status, count(*)::int AS count FROM tasks GROUP BY kind, status`.execute(db);
  return result.rows;
}

/** Seconds since the longest-waiting runnable task became due (0 when none waits). */
export async function oldestRunnableTaskAge(db: Kysely<Database>): Promise<number> {
  const result = await sql<{ age: number | null }>`
    SELECT EXTRACT(EPOCH FROM clock_timestamp() - min(run_after))::float8 AS age FROM tasks
    WHERE status IN ('PENDING', 'RETRYING') AND run_after <= clock_timestamp()
  `.execute(db);
  return Math.max(0, result.rows[0]?.age ?? 0);
}
