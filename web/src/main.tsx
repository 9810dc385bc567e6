// The console's shell: the key gate, navigation, hash routes (nothing of the page state
// reaches the server), and the states that concern every view (401, network down).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, onGlobalError, session } from './api';
import { ErrorNote } from './ui';
import { DocumentsView } from './views/documents';
import { DocumentView, PageView } from './views/document';
import { UploadView, type UploadRow } from './views/upload';
import { SearchView } from './views/search';
import { AnswerView } from './views/answer';
import { ExtractionsView } from './views/extractions';
import { KeysView } from './views/keys';
import { TasksView } from './views/tasks';
import './style.css';

const NAV: [string, string][] = [
  ['#/documents', 'Documents'],
  ['#/upload', 'Upload'],
  ['#/tasks', 'Tasks'],
  ['#/search', 'Search'],
  ['#/answer', 'Answers'],
  ['#/extractions', 'Extractions'],
  ['#/keys', 'Keys'],
];

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/documents');
  useEffect(() => {
    const update = () => setHash(location.hash || '#/documents');
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return hash;
}

function KeyForm({ reason, onKey }: { reason: unknown; onKey: () => void }) {
  const [value, setValue] = useState('');
  return (
    <form
      class="card key-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!value.trim()) return;
        session.setKey(value.trim());
        onKey();
      }}
    >
      <h1>Folio console</h1>
      <ErrorNote error={reason} />
      <label for="api-key">API key</label>
      <input id="api-key" type="password" autocomplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      <p class="hint">Kept in this tab's session storage only; it is sent as the X-API-Key header.</p>
      <button type="submit">Use this key</button>
    </form>
  );
}

function Route({ hash, uploads, setUploads }: { hash: string; uploads: UploadRow[]; setUploads: (f: (rows: UploadRow[]) => UploadRow[]) => void }) {
  const [path, queryText] = hash.slice(1).split('?');
  const query = new URLSearchParams(queryText ?? '');
  const parts = path.split('/').filter(Boolean);
  switch (parts[0]) {
    case 'upload':
      return <UploadView rows={uploads} setRows={setUploads} />;
    case 'tasks':
      return <TasksView />;
    case 'search':
      return <SearchView />;
    case 'answer':
      return <AnswerView />;
    case 'extractions':
      return <ExtractionsView />;
    case 'keys':
      return <KeysView />;
    case 'pages':
      return <PageView id={Number(parts[1])} />;
    case 'documents':
      if (parts[1]) return <DocumentView id={Number(parts[1])} page={query.get('page') ? Number(query.get('page')) : null} />;
      return <DocumentsView />;
    default:
      return <DocumentsView />;
  }
}

function App() {
  const hash = useHash();
  const [hasKey, setHasKey] = useState(session.key() !== null);
  const [globalError, setGlobalError] = useState<ApiError | null>(null);
  const [uploads, setUploads] = useState<UploadRow[]>([]);
  useEffect(
    () =>
      onGlobalError((error) => {
        // A later 401 stays until a key is pasted; a network failure until a call gets through.
        setGlobalError((current) => (error === null && current?.status !== 0 ? current : error));
        if (error?.status === 401) {
          session.clear();
          setHasKey(false);
        }
      }),
    [],
  );
  if (!hasKey)
    return (
      <main class="gate">
        <KeyForm
          reason={globalError}
          onKey={() => {
            setGlobalError(null);
            setHasKey(true);
          }}
        />
      </main>
    );
  const section = hash.slice(1).split(/[/?]/)[1] ?? 'documents';
  return (
    <>
      <header>
        <a class="brand" href="#/documents">
          Folio
        </a>
        <nav aria-label="Sections">
          {NAV.map(([href, label]) => (
            <a key={href} href={href} aria-current={href.slice(2) === section || (section === 'pages' && href === '#/documents') ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <button
          class="link"
          type="button"
          onClick={() => {
            session.clear();
            setHasKey(false);
          }}
        >
          Change key
        </button>
      </header>
      {globalError?.status === 0 && (
        <div class="banner">
          <p class="error" role="alert">
            {globalError.message}
          </p>
        </div>
      )}
      <main>
        <Route hash={hash} uploads={uploads} setUploads={setUploads} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
