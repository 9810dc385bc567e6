// The task registry: a kind without a handler or with two fails at boot, and a payload read
// back from the queue that does not match its schema fails its task with the reason.
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { TaskError } from '../../src/errors.js';
import { TASK_KINDS, TaskRegistry, bindTask, defineTask, type TaskContext, type TaskKind } from '../../src/tasks/registry.js';

const Payload = Type.Object({ blobKey: Type.String(), pages: Type.Integer() });

function task(kind: TaskKind, seen: unknown[] = []) {
  return bindTask(
    defineTask({
      kind,
      payload: Payload,
      run: async (ctx, deps: { seen: unknown[] }) => {
        deps.seen.push(ctx.payload);
      },
    }),
    { seen },
  );
}

function context(payload: Record<string, unknown>): TaskContext {
  return {
    task: { identifier: 'IngestFile:1', workspace_id: 1, kind: 'IngestFile', title: 'Ingest', payload, attempts: 1, max_attempts: 5 },
    signal: new AbortController().signal,
    progress: async () => undefined,
    commit: async () => {
      throw new Error('not in this test');
    },
  };
}

describe('TaskRegistry', () => {
  it('takes one task per kind', () => {
    expect(new TaskRegistry(TASK_KINDS.map((kind) => task(kind))).kinds).toEqual(TASK_KINDS);
  });

  it('fails at boot when a kind has no handler', () => {
    expect(() => new TaskRegistry([task('IngestFile'), task('IngestUrl')])).toThrow('No handler for task kind RunExtraction');
  });

  it('fails at boot when a kind has two handlers', () => {
    expect(() => new TaskRegistry([...TASK_KINDS.map((kind) => task(kind)), task('IngestUrl')])).toThrow('Task kind IngestUrl is defined twice');
  });
});

describe('bindTask', () => {
  it('hands the handler the checked payload', async () => {
    const seen: unknown[] = [];
    await task('IngestFile', seen).run(context({ blobKey: 'files/a/b.pdf', pages: 3 }));
    expect(seen).toEqual([{ blobKey: 'files/a/b.pdf', pages: 3 }]);
  });

  it('fails a task whose payload does not match its schema, saying where, without running it', async () => {
    const seen: unknown[] = [];
    const run = task('IngestFile', seen).run(context({ blobKey: 'files/a/b.pdf', pages: 'three' }));
    await expect(run).rejects.toThrow(TaskError);
    await expect(run).rejects.toThrow("The IngestFile task's payload is invalid (/pages must be integer); it cannot run");
    await expect(run).rejects.toMatchObject({ transient: false });
    expect(seen).toEqual([]);
  });
});
