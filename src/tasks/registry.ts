// The task registry: every kind a worker runs, each defined once with the schema of its
// payload and its handler. Payloads are checked when read back from the queue, so a malformed
// one fails its task saying why instead of reaching a handler; a kind without a handler stops
// the worker at boot.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { TaskError } from '../errors.js';
import type { Database } from '../store/schema.js';
import { insertTask, type ClaimedTask, type TaskWrite } from '../store/tasks.js';

/** The kinds of queued tasks; each has exactly one definition bound at boot. */
export const TASK_KINDS = ['IngestFile', 'IngestUrl', 'RunExtraction', 'ReembedPages'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** What the worker hands a running task. */
export interface TaskContext {
  task: ClaimedTask;
  signal: AbortSignal;
  /** Progress in percent (kept monotone by the store) and where the task is. */
  progress(percent: number, message: string): Promise<void>;
  /**
   * Runs `write` in one transaction that also marks the task completed; if this worker has
   * lost the task meanwhile, nothing is written (so a task never stores its result twice).
   */
  commit<T>(write: TaskWrite<T>): Promise<T>;
}

/** What a handler is given: the task's context and its checked payload. */
export interface PayloadContext<P> extends TaskContext {
  payload: P;
}

export interface TaskDefinition<K extends TaskKind, S extends TSchema, D> {
  kind: K;
  payload: S;
  run(ctx: PayloadContext<Static<S>>, deps: D): Promise<void>;
}

export function defineTask<K extends TaskKind, S extends TSchema, D>(definition: TaskDefinition<K, S, D>): TaskDefinition<K, S, D> {
  return definition;
}

/** A definition bound to the services it needs, ready for the worker. */
export interface BoundTask {
  kind: TaskKind;
  run(ctx: TaskContext): Promise<void>;
}

export function bindTask<K extends TaskKind, S extends TSchema, D>(definition: TaskDefinition<K, S, D>, deps: D): BoundTask {
  const validator = Compile(definition.payload);
  return {
    kind: definition.kind,
    run: async (ctx) => {
      const payload: unknown = ctx.task.payload;
      if (!validator.Check(payload)) {
        const [first] = validator.Errors(payload);
        const problem = first ? `${first.instancePath || '/'} ${first.message}` : 'it does not match its schema';
        throw new TaskError(`The ${definition.kind} task's payload is invalid (${problem}); it cannot run`);
      }
      await definition.run({ ...ctx, payload }, deps);
    },
  };
}

export class TaskRegistry {
  readonly #tasks = new Map<string, BoundTask>();

  /** Throws unless every kind has exactly one task. */
  constructor(tasks: readonly BoundTask[]) {
    for (const task of tasks) {
      if (this.#tasks.has(task.kind)) throw new Error(`Task kind ${task.kind} is defined twice`);
      this.#tasks.set(task.kind, task);
    }
    const missing = TASK_KINDS.filter((kind) => !this.#tasks.has(kind));
    if (missing.length > 0) throw new Error(`No handler for task kind ${missing.join(', ')}`);
  }

  get kinds(): readonly TaskKind[] {
    return TASK_KINDS;
  }

  /** The task of a claimed row; workers claim only registered kinds. */
  task(kind: string): BoundTask {
    const task = this.#tasks.get(kind);
    if (!task) throw new TaskError(`No handler for task kind ${kind}`);
    return task;
  }
}

/** Queues a task of `definition`'s kind; returns its identifier. */
export async function enqueueTask<K extends TaskKind, S extends TSchema, D>(
  db: Kysely<Database>,
  definition: TaskDefinition<K, S, D>,
  task: { workspaceId: number; title: string; payload: Static<S> },
): Promise<string> {
  const identifier = `${definition.kind}:${randomUUID()}`;
  await insertTask(db, {
    identifier,
    workspaceId: task.workspaceId,
    kind: definition.kind,
    status: 'PENDING',
    progress: 0,
    title: task.title,
    message: 'Waiting for a worker',
    payload: task.payload,
  });
  return identifier;
}
