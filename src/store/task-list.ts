// The task listing: a workspace's tasks a page at a time, newest first or oldest first,
// by status, kind and creation time, each with the name of its file where it has one.
import { sql, type Kysely } from 'kysely';
import { compileDateFilter } from './filter.js';
import { after, pageOf, positionText, type Ordering, type Position, type SortOrder } from './keyset.js';
import type { Database } from './schema.js';
import type { TaskRow, TaskStatus } from './tasks.js';

export interface TaskListQuery {
  order: SortOrder;
  limit: number;
  after: Position | null;
  status: TaskStatus | null;
  kind: string | null;
  createdAtFilter: Record<string, unknown> | null;
}

export interface ListedTaskRow extends Omit<TaskRow, 'document_id'> {
  file_name: string | null;
  created_at: Date;
  updated_at: Date;
  position: string;
}

export async function listTasks(db: Kysely<Database>, workspaceId: number, query: TaskListQuery): Promise<{ rows: ListedTaskRow[]; next: string | null }> {
  const ordering: Ordering = { sort: 'created_at', order: query.order };
  const column = sql.ref<Date>('t.created_at');
  let select = db
    .selectFrom('tasks as t')
    // A finished ingest's document has the file's name (a URL's is known only once fetched);
    // before that, an upload's name is in its payload.
    .leftJoin('documents as d', 'd.task_identifier', 't.identifier')
    .select([
      't.identifier',
      't.kind',
      't.status',
      't.progress',
      't.title',
      't.message',
      't.created_at',
      't.updated_at',
      sql<string | null>`COALESCE(d.file_name, t.payload->>'fileName')`.as('file_name'),
      positionText(column).as('position'),
    ])
    .where('t.workspace_id', '=', workspaceId)
    .where(compileDateFilter(query.createdAtFilter, column, 'created_at_filter'));
  if (query.status !== null) select = select.where('t.status', '=', query.status);
  if (query.kind !== null) select = select.where('t.kind', '=', query.kind);
  if (query.after) select = select.where(after(column, sql.ref('t.identifier'), query.order, query.after));
  const rows = await select.orderBy(column, query.order).orderBy('t.identifier', query.order).limit(query.limit + 1).execute();
  return pageOf(rows as ListedTaskRow[], query.limit, ordering, (r) => ({ at: r.position, key: r.identifier }));
}
