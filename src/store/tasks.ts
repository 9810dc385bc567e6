// Queries on the task table (the queue and the status of every processing task).
import { sql, type Kysely, type Transaction } from 'kysely';
import type { AlsoWrite, Database } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export type TaskStatus = 'PENDING' | 'PROCESSING' | 'RETRYING' | 'COMPLETED' | 'FAILED';

export interface NewTask {
  identifier: string;
  workspaceId: number;
  kind: string;
  status: TaskStatus;
  progress: number;
  title: string;
  message: string;
  /** Stored as JSON. */
  payload?: object;
  documentId?: number | null;
}

export interface TaskRow {
  identifier: string;
  kind: string;
  status: TaskStatus;
  progress: number;
  title: string;
  message: string;
  document_id: number | null;
}

function taskValues(task: NewTask) {
  return {
    identifier: task.identifier,
    workspace_id: task.workspaceId,
    kind: task.kind,
    status: task.status,
    progress: task.progress,
    title: task.title,
    message: task.message,
    payload: JSON.stringify(task.payload ?? {}),
    document_id: task.documentId ?? null,
  };
}

export async function insertTask(db: Db, task: NewTask): Promise<void> {
  await insertTasks(db, [task]);
}

export async function insertTasks(db: Db, tasks: NewTask[]): Promise<void> {
  if (tasks.length > 0) await db.insertInto('tasks').values(tasks.map(taskValues)).execute();
}

const TASK_COLUMNS = ['identifier', 'kind', 'status', 'progress', 'title', 'message', 'document_id'] as const;

export async function findTask(db: Db, workspaceId: number, identifier: string): Promise<TaskRow | undefined> {
  const row = await db
    .selectFrom('tasks')
    .select(TASK_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('identifier', '=', identifier)
    .executeTakeFirst();
  return row ? { ...row, status: row.status as TaskStatus } : undefined;
}

/** A task with what it was queued with (to queue it again). */
export async function findTaskWithPayload(db: Db, workspaceId: number, identifier: string): Promise<(TaskRow & { payload: Record<string, unknown> }) | undefined> {
  const row = await db
    .selectFrom('tasks')
    .select([...TASK_COLUMNS, 'payload'])
    .where('workspace_id', '=', workspaceId)
    .where('identifier', '=', identifier)
    .executeTakeFirst();
  return row ? { ...row, status: row.status as TaskStatus } : undefined;
}

export interface ClaimedTask {
  identifier: string;
  workspace_id: number;
  kind: string;
  title: string;
  payload: Record<string, unknown>;
  attempts: number;
  max_attempts: number;
}

/** The condition of a task of these kinds that a worker may claim now. */
function runnable(kinds: string[]) {
  return sql<boolean>`kind = ANY(${kinds}::text[]) AND (
    (status IN ('PENDING', 'RETRYING') AND run_after <= clock_timestamp())
    OR (status = 'PROCESSING' AND lease_until < clock_timestamp())
  )`;
}

/**
 * Claims the next runnable task for `workerId`: pending, due for a retry, or processing
 * under a lease that expired (its worker died). SKIP LOCKED lets workers claim concurrently.
 * An idle queue is found by a plain read first: an idle worker's poll then writes nothing, and
 * on the embedded engine the page index's readers do not take it for a change to catch up with.
 */
export async function claimTask(db: Db, workerId: string, kinds: string[], leaseMs: number): Promise<ClaimedTask | undefined> {
  const waiting = await sql<{ one: number }>`SELECT 1 AS one FROM tasks WHERE ${runnable(kinds)} LIMIT 1`.execute(db);
  if (waiting.rows.length === 0) return undefined;
  const result = await sql<ClaimedTask>`
    UPDATE tasks SET status = 'PROCESSING', attempts = attempts + 1, worker_id = ${workerId},
      lease_until = clock_timestamp() + ${leaseMs} * interval '1 millisecond', updated_at = clock_timestamp()
    WHERE identifier = (
      SELECT identifier FROM tasks
      WHERE ${runnable(kinds)}
      ORDER BY run_after, created_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING identifier, workspace_id, kind, title, payload, attempts, max_attempts
  `.execute(db);
  return result.rows[0];
}

/** Extends the lease; false when the task is no longer ours. */
export async function renewLease(db: Db, identifier: string, workerId: string, leaseMs: number): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ lease_until: sql<Date>`clock_timestamp() + ${leaseMs} * interval '1 millisecond'` })
    .where('identifier', '=', identifier)
    .where('worker_id', '=', workerId)
    .where('status', '=', 'PROCESSING')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records progress; it never goes backwards (a retry resumes at the highest value shown). */
export async function reportProgress(db: Db, identifier: string, workerId: string, progress: number, message: string): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ progress: sql<number>`greatest(progress, ${Math.round(progress)})`, message, updated_at: sql<Date>`clock_timestamp()` })
    .where('identifier', '=', identifier)
    .where('worker_id', '=', workerId)
    .where('status', '=', 'PROCESSING')
    .execute();
}

/** Marks the task completed if `workerId` still holds it; false when it lost the lease. */
export async function completeTask(db: Db, identifier: string, workerId: string, documentId: number | null, message: string): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ status: 'COMPLETED', progress: 100, message, document_id: documentId, lease_until: null, updated_at: sql<Date>`clock_timestamp()` })
    .where('identifier', '=', identifier)
    .where('worker_id', '=', workerId)
    .where('status', '=', 'PROCESSING')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What a task writes when it completes: its rows, and the document and message it records. */
export type TaskWrite<T> = (trx: Transaction<Database>) => Promise<{ documentId: number | null; message: string; result: T }>;

/**
 * Runs `write` and marks the task completed in one transaction, so a task's rows land only
 * with its completion; throws `lost()` (rolling back) when `workerId` no longer holds the task.
 */
export async function commitTask<T>(db: Kysely<Database>, identifier: string, workerId: string, write: TaskWrite<T>, lost: () => Error): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const { documentId, message, result } = await write(trx);
    if (!(await completeTask(trx, identifier, workerId, documentId, message))) throw lost();
    return result;
  });
}

/**
 * Ends the task FAILED, or schedules a retry (RETRYING) after `retryInMs`. A FAILED end runs
 * `also` (its events) in the same transaction, given the task's progress as it stays.
 */
export async function failTask(
  db: Kysely<Database>,
  identifier: string,
  workerId: string,
  message: string,
  retryInMs: number | null,
  also?: AlsoWrite<{ progress: number }>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const failed = await trx
      .updateTable('tasks')
      .set({
        status: retryInMs === null ? 'FAILED' : 'RETRYING',
        message,
        lease_until: null,
        run_after: retryInMs === null ? sql<Date>`run_after` : sql<Date>`clock_timestamp() + ${retryInMs} * interval '1 millisecond'`,
        updated_at: sql<Date>`clock_timestamp()`,
      })
      .where('identifier', '=', identifier)
      .where('worker_id', '=', workerId)
      .where('status', '=', 'PROCESSING')
      .returning('progress')
      .executeTakeFirst();
    if (failed && retryInMs === null) await also?.(trx, failed);
  });
}

/** Hands the worker's tasks back to the queue (shutdown), to be claimed again at once. */
export async function releaseTasks(db: Db, workerId: string): Promise<number> {
  const result = await db
    .updateTable('tasks')
    .set({ status: 'PENDING', lease_until: null, worker_id: null, run_after: sql<Date>`clock_timestamp()`, attempts: sql<number>`greatest(attempts - 1, 0)`, message: 'Waiting for a worker (released at shutdown)' })
    .where('worker_id', '=', workerId)
    .where('status', '=', 'PROCESSING')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The workspaces with a task of `kind` not yet ended (pending, processing or retrying). */
export async function workspacesWithUnfinishedTasks(db: Db, kind: string): Promise<Set<number>> {
  const rows = await db
    .selectFrom('tasks')
    .select('workspace_id')
    .distinct()
    .where('kind', '=', kind)
    .where('status', 'in', ['PENDING', 'PROCESSING', 'RETRYING'])
    .execute();
  return new Set(rows.map((r) => Number(r.workspace_id)));
}
