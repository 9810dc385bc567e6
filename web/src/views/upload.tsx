// Upload: files (several at once, picked or dropped) and URLs; each becomes a task row that
// polls its status and ends in a link to the document or the failure reason.
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorNote, JsonField, TaskBadge, parseJsonObject, useTaskStatus } from '../ui';

export interface UploadRow {
  key: string;
  name: string;
  taskId: string | null;
  error: unknown;
}

function TaskRow({ row }: { row: UploadRow }) {
  const { status, error } = useTaskStatus(row.taskId);
  const [documentId, setDocumentId] = useState<number | null>(null);
  useEffect(() => {
    if (status?.status !== 'COMPLETED' || !row.taskId) return;
    call('get', '/api/v1/documents/task/{task_identifier}', { path: { task_identifier: row.taskId } })
      .then((r) => setDocumentId(r.data.id))
      .catch(() => setDocumentId(null));
  }, [status?.status, row.taskId]);
  return (
    <tr data-testid="task-row" data-name={row.name}>
      <td class="clip">{row.name}</td>
      <td>{row.error ? <span class="badge failed">REFUSED</span> : <TaskBadge status={status} />}</td>
      <td>
        {row.error ? <ErrorNote error={row.error} /> : status?.status === 'FAILED' ? <span class="error-text">{status.message}</span> : (status?.message ?? '')}
        <ErrorNote error={error} />
      </td>
      <td>{documentId !== null && <a href={`#/documents/${documentId}`}>document {documentId}</a>}</td>
    </tr>
  );
}

export function UploadView({ rows, setRows }: { rows: UploadRow[]; setRows: (f: (rows: UploadRow[]) => UploadRow[]) => void }) {
  const [urls, setUrls] = useState('');
  const [metadataText, setMetadataText] = useState('');
  const [dragging, setDragging] = useState(false);
  const metadata = parseJsonObject(metadataText);

  const start = (name: string, request: () => Promise<string>) => {
    const key = `${Date.now()}-${Math.random()}`;
    setRows((r) => [{ key, name, taskId: null, error: null }, ...r]);
    request().then(
      (taskId) => setRows((r) => r.map((x) => (x.key === key ? { ...x, taskId } : x))),
      (error) => setRows((r) => r.map((x) => (x.key === key ? { ...x, error } : x))),
    );
  };

  const uploadFiles = (files: FileList | null) => {
    if (!files || metadata instanceof Error) return;
    for (const file of Array.from(files)) {
      start(file.name, async () => {
        const form = new FormData();
        if (metadata) form.set('metadata', JSON.stringify(metadata));
        form.set('file', file, file.name);
        return (await call('post', '/api/v1/documents/ingest', { form })).data.task_identifier;
      });
    }
  };

  const ingestUrls = (e: Event) => {
    e.preventDefault();
    if (metadata instanceof Error) return;
    for (const url of urls.split(/\s+/).filter(Boolean)) {
      start(url, async () => (await call('post', '/api/v1/documents/ingest/url', { body: { url, metadata: metadata ?? null } })).data.task_identifier);
    }
    setUrls('');
  };

  return (
    <section>
      <h1>Upload</h1>
      <JsonField label="Metadata for these documents (optional)" value={metadataText} onInput={setMetadataText} placeholder='{"kind": "report"}' />
      <div class="row wrap">
        <label
          class={`card drop grow${dragging ? ' dragging' : ''}`}
          onDragOver={(e) => (e.preventDefault(), setDragging(true))}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            uploadFiles(e.dataTransfer?.files ?? null);
          }}
        >
          Drop files here or choose them
          <input
            type="file"
            multiple
            aria-label="Files to upload"
            onChange={(e) => {
              uploadFiles(e.currentTarget.files);
              e.currentTarget.value = '';
            }}
          />
        </label>
        <form class="card grow" onSubmit={ingestUrls}>
          <label for="urls">URLs, one per line</label>
          <textarea id="urls" rows={3} value={urls} onInput={(e) => setUrls(e.currentTarget.value)} />
          <button type="submit" disabled={!urls.trim()}>
            Ingest URLs
          </button>
        </form>
      </div>
      {rows.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>source</th>
                <th>status</th>
                <th>message</th>
                <th>document</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <TaskRow key={row.key} row={row} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
