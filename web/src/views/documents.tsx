// Documents: the workspace's documents under a metadata filter, a page at a time. The API
// has no list endpoint, so the ids come from the deletion preview (read scope, deletes
// nothing) and each shown document is read by id.
import { useEffect, useState } from 'preact/hooks';
import { call, type Answer } from '../api';
import { ErrorNote, JsonField, parseJsonObject } from '../ui';

type Doc = Answer<'/api/v1/documents/internal/{document_id}', 'get'>['data'];
const PAGE_SIZE = 20;

export function DocumentsView() {
  const [filterText, setFilterText] = useState('');
  const [ids, setIds] = useState<number[] | null>(null);
  const [offset, setOffset] = useState(0);
  // The rows shown and the page they belong to: rows of an earlier page or filter are never shown under a new count.
  const [shown, setShown] = useState<{ ids: number[]; offset: number; docs: Doc[] } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [externalId, setExternalId] = useState('');
  const [busy, setBusy] = useState(false);

  const load = async () => {
    const filter = parseJsonObject(filterText);
    if (filter instanceof Error) return;
    setBusy(true);
    try {
      const res = await call('post', '/api/v1/documents/delete/preview', { body: { metadata_filter: filter ?? null } });
      setIds([...res.data.document_ids].sort((a, b) => b - a));
      setOffset(0);
      setError(null);
    } catch (e) {
      setError(e);
      setIds(null);
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    void load();
  }, []);

  useEffect(() => {
    if (!ids) return;
    let stale = false;
    Promise.all(ids.slice(offset, offset + PAGE_SIZE).map((id) => call('get', '/api/v1/documents/internal/{document_id}', { path: { document_id: id } })))
      .then((res) => !stale && setShown({ ids, offset, docs: res.map((r) => r.data) }))
      .catch((e) => !stale && setError(e));
    return () => {
      stale = true;
    };
  }, [ids, offset]);

  const openExternal = async (e: Event) => {
    e.preventDefault();
    try {
      const res = await call('get', '/api/v1/documents/external/{external_id}', { path: { external_id: externalId } });
      location.hash = `#/documents/${res.data.id}`;
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section>
      <h1>Documents</h1>
      <div class="row wrap">
        <form
          class="card grow"
          onSubmit={(e) => {
            e.preventDefault();
            void load();
          }}
        >
          <JsonField label="Metadata filter" value={filterText} onInput={setFilterText} placeholder='{"kind": {"$eq": "pdf"}}' />
          <button type="submit" disabled={busy || parseJsonObject(filterText) instanceof Error}>
            Apply filter
          </button>
        </form>
        <form class="card" onSubmit={openExternal}>
          <label for="external-id">External id</label>
          <input id="external-id" value={externalId} onInput={(e) => setExternalId(e.currentTarget.value)} />
          <button type="submit" disabled={!externalId}>
            Open latest version
          </button>
        </form>
      </div>
      <ErrorNote error={error} />
      {ids && (
        <>
          <p aria-live="polite">
            {ids.length} document{ids.length === 1 ? '' : 's'}
            {ids.length > 0 && `, ${offset + 1}–${Math.min(offset + PAGE_SIZE, ids.length)} shown`}
          </p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>id</th>
                  <th>external id</th>
                  <th>file</th>
                  <th>created</th>
                  <th>metadata</th>
                </tr>
              </thead>
              <tbody>
                {(shown && shown.ids === ids && shown.offset === offset ? shown.docs : []).map((d) => (
                  <tr key={d.id}>
                    <td>
                      <a href={`#/documents/${d.id}`}>{d.id}</a>
                    </td>
                    <td>{d.external_id ?? '—'}</td>
                    <td class="clip">{d.file_url ?? d.file_path}</td>
                    <td>{new Date(d.created_at).toLocaleString()}</td>
                    <td class="clip">
                      <code>{JSON.stringify(d.document_metadata)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="row">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
              Previous
            </button>
            <button type="button" disabled={offset + PAGE_SIZE >= ids.length} onClick={() => setOffset(offset + PAGE_SIZE)}>
              Next
            </button>
          </div>
        </>
      )}
    </section>
  );
}
