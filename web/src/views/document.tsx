// A document (its pages, versions, original file, metadata edit, deletion) and one page
// drilled down to paragraphs and sentences.
import { useEffect, useState } from 'preact/hooks';
import { call, send, type Answer } from '../api';
import { ErrorNote, JsonField, parseJsonObject } from '../ui';

type Doc = Answer<'/api/v1/documents/internal/{document_id}', 'get'>['data'];
type Versions = Answer<'/api/v1/documents/external/{external_id}/versions', 'get'>['data'];

async function download(doc: Doc) {
  // The key goes in a header, so the file is fetched here and handed to the browser.
  const res = await send('get', `/api/v1/documents/internal/${doc.id}/file`);
  const href = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = href;
  const named = /filename\*=UTF-8''([^;]+)/.exec(res.headers.get('content-disposition') ?? '');
  a.download = named ? decodeURIComponent(named[1]) : `document-${doc.id}`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

function MetadataEditor({ doc, onSaved }: { doc: Doc; onSaved: (d: Doc) => void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  if (!doc.external_id) return <p class="hint">Metadata can be patched only on documents with an external id.</p>;
  const patch = parseJsonObject(text);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (!patch || patch instanceof Error) return;
        try {
          const res = await call('patch', '/api/v1/documents/external/{external_id}/metadata', { path: { external_id: doc.external_id! }, body: { metadata: patch } });
          // The patch applies to the latest version, which may not be the one shown.
          if (res.data.data.id === doc.id) onSaved({ ...doc, ...res.data.data });
          else location.hash = `#/documents/${res.data.data.id}`;
          setError(null);
          setSaved(true);
        } catch (err) {
          setError(err);
        }
      }}
    >
      <JsonField label="Metadata patch (JSON Merge Patch: null removes a key)" value={text} onInput={(v) => (setText(v), setSaved(false))} placeholder='{"reviewed": true}' />
      <button type="submit" disabled={!patch || patch instanceof Error}>
        Apply patch
      </button>
      {saved && <span role="status"> Saved.</span>}
      <ErrorNote error={error} />
    </form>
  );
}

interface Plan {
  what: string;
  count: number;
  run: () => Promise<unknown>;
}

/** Deletion in two steps: what would go, counted by the API's preview, then the delete. */
function Deleter({ doc }: { doc: Doc }) {
  const [plan, setPlan] = useState<Plan | null>(null);
  const [error, setError] = useState<unknown>(null);
  const external_id = doc.external_id;
  const prepare = async (all: boolean) => {
    try {
      if (all && external_id) {
        const preview = await call('get', '/api/v1/documents/delete/external/{external_id}/preview', {
          path: { external_id },
          query: { latest_only: false },
        });
        setPlan({
          what: `every version of “${external_id}” (ids ${preview.data.document_ids.join(', ')})`,
          count: preview.data.document_count,
          run: () => call('delete', '/api/v1/documents/external/{external_id}', { path: { external_id }, query: { latest_only: false } }),
        });
      } else {
        setPlan({ what: `this version (id ${doc.id})`, count: 1, run: () => call('delete', '/api/v1/documents/internal/{document_id}', { path: { document_id: doc.id } }) });
      }
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div>
      {plan === null ? (
        <>
          <button type="button" class="danger" onClick={() => prepare(false)}>
            Delete…
          </button>{' '}
          {external_id && (
            <button type="button" class="danger" onClick={() => prepare(true)}>
              Delete every version…
            </button>
          )}
        </>
      ) : (
        <p role="alert">
          This deletes {plan.count} document{plan.count === 1 ? '' : 's'}: {plan.what}, with their pages.{' '}
          <button
            type="button"
            class="danger"
            onClick={async () => {
              try {
                await plan.run();
                location.hash = '#/documents';
              } catch (err) {
                setError(err);
              }
            }}
          >
            Delete
          </button>{' '}
          <button type="button" onClick={() => setPlan(null)}>
            Cancel
          </button>
        </p>
      )}
      <ErrorNote error={error} />
    </div>
  );
}

export function DocumentView({ id, page }: { id: number; page: number | null }) {
  const [doc, setDoc] = useState<Doc | null>(null);
  const [versions, setVersions] = useState<Versions | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setDoc(null);
    call('get', '/api/v1/documents/internal/{document_id}', { path: { document_id: id } })
      .then((r) => {
        setDoc(r.data);
        if (r.data.external_id)
          return call('get', '/api/v1/documents/external/{external_id}/versions', { path: { external_id: r.data.external_id } }).then((v) => setVersions(v.data));
      })
      .catch(setError);
  }, [id]);
  useEffect(() => {
    if (doc && page !== null) document.getElementById(`page-${page}`)?.scrollIntoView({ block: 'start' });
  }, [doc, page]);

  if (!doc) return <ErrorNote error={error} />;
  return (
    <section>
      <h1>Document {doc.id}</h1>
      <dl class="facts">
        <dt>external id</dt>
        <dd>{doc.external_id ?? '—'}</dd>
        <dt>file</dt>
        <dd class="clip">{doc.file_url ?? doc.file_path}</dd>
        <dt>created</dt>
        <dd>{new Date(doc.created_at).toLocaleString()}</dd>
        <dt>updated</dt>
        <dd>{new Date(doc.updated_at).toLocaleString()}</dd>
        <dt>metadata</dt>
        <dd>
          <code data-testid="metadata">{JSON.stringify(doc.document_metadata)}</code>
        </dd>
      </dl>
      <div class="row wrap">
        <button type="button" onClick={() => download(doc).catch(setError)}>
          Download original
        </button>
        <Deleter doc={doc} />
      </div>
      <ErrorNote error={error} />
      {versions && versions.length > 1 && (
        <details>
          <summary>{versions.length} versions</summary>
          <ul>
            {versions.map((v) => (
              <li key={v.id}>
                <a href={`#/documents/${v.id}`}>{v.id}</a> — {new Date(v.created_at).toLocaleString()}
              </li>
            ))}
          </ul>
        </details>
      )}
      <details>
        <summary>Edit metadata</summary>
        <MetadataEditor doc={doc} onSaved={setDoc} />
      </details>
      <h2>Pages ({doc.pages.length})</h2>
      {doc.pages.map((p) => (
        <article key={p.page_number} id={`page-${p.page_number}`} class={`card page${p.page_number === page ? ' current' : ''}`}>
          <h3>
            Page {p.page_number} <a href={`#/pages/${p.id}`}>paragraphs and sentences</a>
          </h3>
          <p class="content">{p.content}</p>
        </article>
      ))}
    </section>
  );
}

type PageData = Answer<'/api/v1/documents/content/pages/{page_id}', 'get'>;

export function PageView({ id }: { id: number }) {
  const [page, setPage] = useState<PageData | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    call('get', '/api/v1/documents/content/pages/{page_id}', { path: { page_id: id }, query: { include_paragraphs: true } })
      .then(setPage)
      .catch(setError);
  }, [id]);
  if (!page) return <ErrorNote error={error} />;
  return (
    <section>
      <h1>
        Page {page.page_number} of <a href={`#/documents/${page.document_id}?page=${page.page_number}`}>document {page.document_id}</a>
      </h1>
      {(page.paragraphs ?? []).map((para) => (
        <div key={para.id} class="card paragraph">
          <h3>Paragraph {para.paragraph_index}</h3>
          <ol start={0} class="sentences">
            {para.sentences.map((s) => (
              <li key={s.id} data-sentence-id={s.id}>
                {s.content}
              </li>
            ))}
          </ol>
        </div>
      ))}
    </section>
  );
}
