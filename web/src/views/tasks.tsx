// Tasks: the workspace's ingestion and extraction tasks, the failed ones first with the reason
// each failed, read by the typed client's cursor iterator. A failed upload can be ingested
// again from the file the service kept.
import { useEffect, useState } from 'preact/hooks';
import type { ListedTask } from '@folio/client';
import { folio } from '../api';
import { ErrorNote, TaskBadge } from '../ui';

/** How many of each kind the view shows. */
const SHOWN = 50;

/** The first `count` items that `keep` accepts (a break ends the listing: no further page is read). */
async function take<T>(items: AsyncGenerator<T>, count: number, keep: (item: T) => boolean = () => true): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) {
    if (keep(item)) out.push(item);
    if (out.length === count) break;
  }
  return out;
}

function TaskTable({ tasks, label, onRetry }: { tasks: ListedTask[]; label: string; onRetry?: (task: ListedTask) => void }) {
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            <th>status</th>
            <th>task</th>
            <th>kind</th>
            <th>message</th>
            <th>created</th>
            {onRetry && <th />}
          </tr>
        </thead>
        <tbody>
          {tasks.map((task) => (
            <tr key={task.task_identifier} data-testid="listed-task" data-id={task.task_identifier}>
              <td>
                <TaskBadge status={task} />
              </td>
              <td class="clip" title={task.task_identifier}>
                {task.file_name ?? task.title}
              </td>
              <td>{task.kind}</td>
              <td class={task.status === 'FAILED' ? 'error-text' : undefined}>{task.message}</td>
              <td>{new Date(task.created_at).toLocaleString()}</td>
              {onRetry && (
                <td>
                  {task.kind === 'IngestFile' && (
                    <button type="button" onClick={() => onRetry(task)}>
                      Retry
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TasksView() {
  const [failed, setFailed] = useState<ListedTask[] | null>(null);
  const [recent, setRecent] = useState<ListedTask[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');

  const load = async () => {
    try {
      const client = folio();
      const [f, r] = await Promise.all([
        take(client.tasks({ status: 'FAILED' }, { pageSize: SHOWN }), SHOWN),
        take(client.tasks({}, { pageSize: SHOWN }), SHOWN, (task) => task.status !== 'FAILED'),
      ]);
      setFailed(f);
      setRecent(r);
      setError(null);
    } catch (e) {
      setError(e);
    }
  };

  useEffect(() => {
    void load();
  }, []);

  const retry = async (task: ListedTask) => {
    try {
      const receipt = await folio().retryTask(task.task_identifier);
      setNote(`${task.file_name ?? task.title}: queued again as ${receipt.task_identifier}.`);
      await load();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <section>
      <h1>Tasks</h1>
      <div class="row">
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <ErrorNote error={error} />
      {note && <p role="status">{note}</p>}
      {failed && (
        <>
          <h2>Failed ({failed.length === SHOWN ? `latest ${SHOWN}` : failed.length})</h2>
          {failed.length === 0 ? <p>No task has failed.</p> : <TaskTable tasks={failed} label="Failed tasks" onRetry={(task) => void retry(task)} />}
        </>
      )}
      {recent && (
        <>
          <h2>Recent</h2>
          {recent.length === 0 ? <p>No other tasks yet.</p> : <TaskTable tasks={recent} label="Recent tasks" />}
        </>
      )}
    </section>
  );
}
