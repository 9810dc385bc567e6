// Extractions: definitions (created from a JSON Schema), runs on a file, a URL or an
// ingested document, each polled as a task, and results as a table with a CSV download.
import { useEffect, useState } from 'preact/hooks';
import { call, type Answer } from '../api';
import { ErrorNote, JsonField, TaskBadge, parseJsonObject, useTaskStatus } from '../ui';

type Extraction = Answer<'/api/v1/extractions/{extraction_id}', 'get'>['data'];
type Result = Answer<'/api/v1/extractions/results/task/{task_identifier}', 'get'>['data'];

interface Run {
  taskId: string;
  source: string;
}

function columns(records: Record<string, unknown>[]): string[] {
  return [...new Set(records.flatMap((r) => Object.keys(r)))];
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function toCsv(records: Record<string, unknown>[]): string {
  const cols = columns(records);
  const quote = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return [cols.map(quote).join(','), ...records.map((r) => cols.map((c) => quote(cell(r[c]))).join(','))].join('\r\n') + '\r\n';
}

function saveCsv(name: string, records: Record<string, unknown>[]) {
  const href = URL.createObjectURL(new Blob([toCsv(records)], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

function RunRow({ run }: { run: Run }) {
  const { status, error } = useTaskStatus(run.taskId);
  const [result, setResult] = useState<Result | null>(null);
  const [resultError, setResultError] = useState<unknown>(null);
  useEffect(() => {
    if (status?.status !== 'COMPLETED') return;
    call('get', '/api/v1/extractions/results/task/{task_identifier}', { path: { task_identifier: run.taskId } })
      .then((r) => setResult(r.data))
      .catch(setResultError);
  }, [status?.status, run.taskId]);
  const cols = result ? columns(result.results) : [];
  return (
    <div class="card" data-testid="extraction-run">
      <div class="row wrap">
        <strong class="clip">{run.source}</strong> <TaskBadge status={status} />
        {status?.status === 'FAILED' && <span class="error-text">{status.message}</span>}
        {result && (
          <button type="button" onClick={() => saveCsv(`extraction-${result.extraction_id}-result-${result.id}.csv`, result.results)}>
            Download CSV
          </button>
        )}
      </div>
      <ErrorNote error={error ?? resultError} />
      {result && (
        <div class="table-wrap">
          <table data-testid="extraction-results">
            <thead>
              <tr>
                {cols.map((c) => (
                  <th key={c}>{c}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {result.results.map((r, i) => (
                <tr key={i}>
                  {cols.map((c) => (
                    <td key={c}>{cell(r[c])}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function CreateForm({ onCreated }: { onCreated: (e: Extraction) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [schema, setSchema] = useState('{\n  "type": "object",\n  "properties": {\n    "title": {"type": "string", "description": "The title"}\n  }\n}');
  const [multiple, setMultiple] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const parsed = parseJsonObject(schema);
  return (
    <form
      class="card"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!parsed || parsed instanceof Error) return;
        try {
          const res = await call('post', '/api/v1/extractions', { body: { name, description: description || null, schema: parsed, multiple } });
          onCreated(res.data);
          setError(null);
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h2>New extraction</h2>
      <label for="extraction-name">Name</label>
      <input id="extraction-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="extraction-description">Description</label>
      <input id="extraction-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <JsonField label="JSON Schema of one record" value={schema} onInput={setSchema} rows={7} />
      <label class="inline">
        <input type="checkbox" checked={multiple} onChange={(e) => setMultiple(e.currentTarget.checked)} /> one record per item found
      </label>
      <button type="submit" disabled={!name || !parsed || parsed instanceof Error}>
        Create
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

function RunForm({ extraction, onRun }: { extraction: Extraction; onRun: (r: Run) => void }) {
  const [url, setUrl] = useState('');
  const [documentId, setDocumentId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const run = async (source: string, request: () => Promise<{ data: { task_identifier: string } }>) => {
    try {
      onRun({ source, taskId: (await request()).data.task_identifier });
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card">
      <h2>Run “{extraction.name}”</h2>
      <div class="row wrap">
        <label class="inline">
          On a file
          <input
            type="file"
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              if (!file) return;
              const form = new FormData();
              form.set('extraction_id', String(extraction.id));
              form.set('file', file, file.name);
              void run(file.name, () => call('post', '/api/v1/extractions/run/file', { form }));
              e.currentTarget.value = '';
            }}
          />
        </label>
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void run(url, () => call('post', '/api/v1/extractions/run/url', { body: { extraction_id: extraction.id, url } }));
          }}
        >
          <label for="run-url">On a URL</label> <input id="run-url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          <button type="submit" disabled={!url}>
            Run
          </button>
        </form>
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void run(`document ${documentId}`, () =>
              call('post', '/api/v1/extractions/run/document', { body: { extraction_id: extraction.id, document_id: Number(documentId) } }),
            );
          }}
        >
          <label for="run-document">On document id</label>{' '}
          <input id="run-document" inputMode="numeric" size={6} value={documentId} onInput={(e) => setDocumentId(e.currentTarget.value)} />
          <button type="submit" disabled={!/^\d+$/.test(documentId)}>
            Run
          </button>
        </form>
      </div>
      <ErrorNote error={error} />
    </div>
  );
}

export function ExtractionsView() {
  const [list, setList] = useState<Extraction[]>([]);
  const [selected, setSelected] = useState<Extraction | null>(null);
  const [runs, setRuns] = useState<Run[]>([]);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    call('get', '/api/v1/extractions', { query: { limit: 100, offset: 0 } })
      .then((r) => setList(r.data))
      .catch(setError);
  }, []);
  return (
    <section>
      <h1>Extractions</h1>
      <ErrorNote error={error} />
      <div class="row wrap top">
        <div class="grow">
          <CreateForm
            onCreated={(e) => {
              setList((l) => [e, ...l]);
              setSelected(e);
            }}
          />
        </div>
        <div class="card grow">
          <h2>Definitions</h2>
          {list.length === 0 && <p class="hint">None yet.</p>}
          <ul class="plain">
            {list.map((e) => (
              <li key={e.id}>
                <button type="button" class={selected?.id === e.id ? 'selected' : 'link'} aria-pressed={selected?.id === e.id} onClick={() => setSelected(e)}>
                  {e.name}
                </button>{' '}
                <small>
                  #{e.id} {e.multiple ? '(multiple)' : ''} {e.description}
                </small>
              </li>
            ))}
          </ul>
        </div>
      </div>
      {selected && <RunForm extraction={selected} onRun={(r) => setRuns((rs) => [r, ...rs])} />}
      {runs.map((r) => (
        <RunRow key={r.taskId} run={r} />
      ))}
    </section>
  );
}
