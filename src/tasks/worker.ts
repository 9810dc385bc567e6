// The worker loop: claims tasks from the task table, runs the handler of each task kind
// under a lease kept alive by a heartbeat, retries transient failures with backoff, and on
// shutdown finishes or releases the tasks in hand. A task's end (completed, or failed for good)
// records its webhook events in the same transaction.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { FastifyBaseLogger as Logger } from 'fastify';
import { TaskError } from '../errors.js';
import type { Database } from '../store/schema.js';
import { claimTask, commitTask, failTask, releaseTasks, renewLease, reportProgress, type ClaimedTask } from '../store/tasks.js';
import { recordEvents, taskEvent } from '../webhooks/events.js';
import type { TaskContext, TaskRegistry } from './registry.js';

/** Raised when this worker no longer holds the task (its lease expired and another took it). */
export class LeaseLostError extends Error {}

/** Reports progress; `force` reports at once, anything else at most every 250 ms. */
export type ProgressReporter = (percent: number, message: string, force?: boolean) => Promise<void>;

/** A reporter for a task's progress that keeps per-page updates from flooding the store. */
export function throttledProgress(ctx: TaskContext, intervalMs = 250): ProgressReporter {
  let last = 0;
  return async (percent, message, force = false) => {
    const now = Date.now();
    if (!force && now - last < intervalMs) return;
    last = now;
    await ctx.progress(percent, message);
  };
}

export interface WorkerOptions {
  concurrency: number;
  leaseMs: number;
  pollMs: number;
  /** How long shutdown waits for tasks in hand before releasing them. */
  shutdownGraceMs: number;
  retryBaseMs: number;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = {
  concurrency: 2,
  leaseMs: 30_000,
  pollMs: 1000,
  shutdownGraceMs: 20_000,
  retryBaseMs: 2000,
};

export class TaskWorker {
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly options: WorkerOptions;
  private running = false;
  private readonly inHand = new Map<string, { done: Promise<void>; abort: AbortController }>();
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly registry: TaskRegistry,
    private readonly log: Logger,
    options: Partial<WorkerOptions> = {},
    /** Told after a task's end recorded webhook deliveries (the delivery loop wakes up). */
    private readonly onEvents: () => void = () => {},
  ) {
    this.options = { ...DEFAULT_WORKER_OPTIONS, ...options };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.log.info({ worker: this.id, kinds: this.registry.kinds }, 'worker started');
    this.loop = this.run();
  }

  /** Asks the loop to look for work now (a task was just enqueued in this process). */
  notify(): void {
    this.wake?.();
  }

  private async run(): Promise<void> {
    const kinds = [...this.registry.kinds];
    while (this.running) {
      let claimed: ClaimedTask | undefined;
      if (this.inHand.size < this.options.concurrency) {
        try {
          claimed = await claimTask(this.db, this.id, kinds, this.options.leaseMs);
        } catch (err) {
          this.log.warn({ err }, 'could not claim a task');
        }
      }
      if (claimed && this.running) {
        this.begin(claimed);
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  private begin(task: ClaimedTask): void {
    const abort = new AbortController();
    const done = this.execute(task, abort).finally(() => {
      this.inHand.delete(task.identifier);
      this.notify();
    });
    this.inHand.set(task.identifier, { done, abort });
  }

  private async execute(task: ClaimedTask, abort: AbortController): Promise<void> {
    const log = this.log.child({ task: task.identifier, attempt: task.attempts });
    const heartbeat = setInterval(() => {
      renewLease(this.db, task.identifier, this.id, this.options.leaseMs)
        .then((held) => {
          if (!held) abort.abort(new LeaseLostError('lease lost'));
        })
        .catch((err: unknown) => log.warn({ err }, 'lease renewal failed'));
    }, Math.max(100, Math.floor(this.options.leaseMs / 3)));
    const ctx: TaskContext = {
      task,
      signal: abort.signal,
      progress: (percent, message) => reportProgress(this.db, task.identifier, this.id, percent, message),
      commit: async (write) => {
        let deliveries = 0;
        const result = await commitTask(
          this.db,
          task.identifier,
          this.id,
          async (trx) => {
            if (abort.signal.aborted) throw abort.signal.reason;
            const written = await write(trx);
            const ended = { ...task, progress: 100, message: written.message, status: 'COMPLETED' as const, documentId: written.documentId };
            deliveries = await recordEvents(trx, [taskEvent(task.workspace_id, ended)]);
            return written;
          },
          () => new LeaseLostError('lease lost before commit'),
        );
        if (deliveries > 0) this.onEvents();
        return result;
      },
    };
    try {
      log.info({ kind: task.kind }, 'task started');
      await this.registry.task(task.kind).run(ctx);
      log.info('task completed');
    } catch (err) {
      await this.settleFailure(task, err, log);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async settleFailure(task: ClaimedTask, err: unknown, log: Logger): Promise<void> {
    if (err instanceof LeaseLostError) {
      log.warn('task lost its lease; another worker owns it now');
      return;
    }
    if (!this.running && !(err instanceof TaskError)) {
      // Aborted by shutdown: released to the queue, not failed.
      return;
    }
    const known = err instanceof TaskError;
    const transient = known ? err.transient : true;
    const reason = known ? err.message : 'Processing failed unexpectedly';
    if (!known) log.error({ err }, 'task failed unexpectedly');
    const retry = transient && task.attempts < task.max_attempts;
    const delay = this.options.retryBaseMs * 2 ** (task.attempts - 1) * (1 + Math.random() * 0.25);
    const message = retry
      ? `${reason}; retrying (attempt ${task.attempts + 1} of ${task.max_attempts})`
      : transient
        ? `${reason} (gave up after ${task.attempts} attempts)`
        : reason;
    let deliveries = 0;
    try {
      await failTask(this.db, task.identifier, this.id, message, retry ? Math.min(delay, 300_000) : null, async (trx, { progress }) => {
        const ended = { ...task, progress, message, status: 'FAILED' as const, documentId: null };
        deliveries = await recordEvents(trx, [taskEvent(task.workspace_id, ended)]);
      });
      if (deliveries > 0) this.onEvents();
    } catch (storeErr) {
      log.error({ err: storeErr }, 'could not record the task failure; its lease will expire and it will run again');
    }
  }

  /** Stops claiming, lets tasks in hand finish for a grace period, then releases the rest. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.notify();
    await this.loop;
    const inHand = [...this.inHand.values()];
    const finished = Promise.all(inHand.map((t) => t.done));
    const timedOut = await Promise.race([
      finished.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), this.options.shutdownGraceMs).unref()),
    ]);
    if (timedOut) {
      for (const t of inHand) t.abort.abort(new Error('shutting down'));
      const released = await releaseTasks(this.db, this.id);
      this.log.info({ released }, 'released unfinished tasks at shutdown');
      // Released tasks can no longer commit; do not wait long for their handlers to notice.
      await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    }
  }
}
