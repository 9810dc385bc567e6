// The status of any processing task, as the status endpoint reports it.
import type { Kysely } from 'kysely';
import { errors } from '../errors.js';
import type { Database } from '../store/schema.js';
import { findTask } from '../store/tasks.js';

export interface TaskStatusView {
  title: string;
  message: string;
  progress: number;
  status: string;
}

export async function getTaskStatus(db: Kysely<Database>, workspaceId: number, identifier: string): Promise<TaskStatusView> {
  const task = await findTask(db, workspaceId, identifier);
  if (!task) throw errors.notFound(`Task ${identifier}`);
  return { title: task.title, message: task.message, progress: task.progress, status: task.status };
}
