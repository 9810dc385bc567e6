// The task listing: a page of a workspace's tasks, each as the status endpoint shows it with
// its kind, file name and times, and the cursor of the next page.
import type { Kysely } from 'kysely';
import { decodeCursor, type SortOrder } from '../store/keyset.js';
import type { Database } from '../store/schema.js';
import { listTasks as listTaskRows } from '../store/task-list.js';
import type { TaskStatus } from '../store/tasks.js';
import { DEFAULT_LIST_LIMIT, filterObject } from '../documents/listing.js';
import type { TaskStatusView } from './status.js';

/** Every kind of task, queued or done at once (embedding ingests complete in their request). */
export const LISTED_TASK_KINDS = ['IngestFile', 'IngestUrl', 'IngestEmbedding', 'RunExtraction'] as const;

export interface TaskListRequest {
  limit?: number;
  cursor?: string | null;
  order?: SortOrder;
  status?: TaskStatus | null;
  kind?: (typeof LISTED_TASK_KINDS)[number] | null;
  /** An object of date operators, or its JSON text. */
  created_at_filter?: Record<string, unknown> | string | null;
}

export interface ListedTaskView extends TaskStatusView {
  task_identifier: string;
  kind: string;
  file_name: string | null;
  created_at: string;
  updated_at: string;
}

export interface TaskList {
  tasks: ListedTaskView[];
  next_cursor: string | null;
}

export async function listTasks(db: Kysely<Database>, workspaceId: number, req: TaskListRequest): Promise<TaskList> {
  const order = req.order ?? 'desc';
  const { rows, next } = await listTaskRows(db, workspaceId, {
    order,
    limit: req.limit ?? DEFAULT_LIST_LIMIT,
    after: req.cursor ? decodeCursor(req.cursor, { sort: 'created_at', order }) : null,
    status: req.status ?? null,
    kind: req.kind ?? null,
    createdAtFilter: filterObject(req.created_at_filter, 'created_at_filter'),
  });
  return {
    tasks: rows.map((r) => ({
      task_identifier: r.identifier,
      kind: r.kind,
      title: r.title,
      message: r.message,
      progress: r.progress,
      status: r.status,
      file_name: r.file_name,
      created_at: r.created_at.toISOString(),
      updated_at: r.updated_at.toISOString(),
    })),
    next_cursor: next,
  };
}
