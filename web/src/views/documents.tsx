// Documents: the workspace's documents under a metadata filter, newest first, a page at a
// time. The typed client's cursor iterator reads the listing; pages already read are kept,
// so Previous reads nothing, and one document more than shown tells whether Next has any.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ListedDocument } from '@folio/client';
import { call, folio } from '../api';
import { ErrorNote, JsonField, parseJsonObject } from '../ui';

const PAGE_SIZE = 20;

/** What has been read of one listing: its documents so far, and whether that is all of them. */
interface Listing {
  documents: ListedDocument[];
  complete: boolean;
}

export function DocumentsView() {
  const [filterText, setFilterText] = useState('');
  const [listing, setListing] = useState<Listing | null>(null);
  const [offset, setOffset] = useState(0);
  const [error, setError] = useState<unknown>(null);
  const [externalId, setExternalId] = useState('');
  const [busy, setBusy] = useState(false);
  // The listing being read; a newer filter replaces it, and reads of the old one are dropped.
  const source = useRef<AsyncGenerator<ListedDocument> | null>(null);

  /** Reads the listing on until it holds `count` documents or ends. */
  const readTo = async (iterator: AsyncGenerator<ListedDocument>, current: Listing, count: number) => {
    const documents = [...current.documents];
    let complete = current.complete;
    while (!complete && documents.length < count) {
      const next = await iterator.next();
      if (next.done) complete = true;
      else documents.push(next.value);
    }
    if (source.current === iterator) setListing({ documents, complete });
  };

  const load = async () => {
    const filter = parseJsonObject(filterText);
    if (filter instanceof Error) return;
    const iterator = folio().documents(filter ? { metadata_filter: filter } : {}, { pageSize: 50 });
    source.current = iterator;
    setBusy(true);
    try {
      await readTo(iterator, { documents: [], complete: false }, PAGE_SIZE + 1);
      setOffset(0);
      setError(null);
    } catch (e) {
      setError(e);
      setListing(null);
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    void load();
  }, []);

  const next = async () => {
    if (!listing || !source.current) return;
    setBusy(true);
    try {
      await readTo(source.current, listing, offset + 2 * PAGE_SIZE + 1);
      setOffset(offset + PAGE_SIZE);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

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
      {listing && (
        <>
          <p aria-live="polite">{summary(listing, offset)}</p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>id</th>
                  <th>external id</th>
                  <th>version</th>
                  <th>file</th>
                  <th>pages</th>
                  <th>created</th>
                  <th>metadata</th>
                </tr>
              </thead>
              <tbody>
                {listing.documents.slice(offset, offset + PAGE_SIZE).map((d) => (
                  <tr key={d.id}>
                    <td>
                      <a href={`#/documents/${d.id}`}>{d.id}</a>
                    </td>
                    <td>{d.external_id ?? '—'}</td>
                    <td>{d.version}</td>
                    <td class="clip">{d.file_name ?? d.file_url ?? d.file_path}</td>
                    <td>{d.page_count}</td>
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
            <button type="button" disabled={busy || listing.documents.length <= offset + PAGE_SIZE} onClick={() => void next()}>
              Next
            </button>
          </div>
        </>
      )}
    </section>
  );
}

/** "N documents, a–b shown" once the listing has been read to its end; until then, what is shown and that more follow. */
function summary(listing: Listing, offset: number): string {
  const total = listing.documents.length;
  const last = Math.min(offset + PAGE_SIZE, total);
  if (total === 0) return '0 documents';
  const shown = `${offset + 1}–${last} shown`;
  return listing.complete ? `${total} document${total === 1 ? '' : 's'}, ${shown}` : `${shown}, more follow`;
}
