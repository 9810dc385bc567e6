// The search playground: every search parameter, and results with their relevance split
// into its semantic and keyword parts, query terms marked, linked to the page.
import { useState } from 'preact/hooks';
import { call, type Answer } from '../api';
import { ErrorNote, Highlighted, JsonField, ScoreBar, parseJsonObject } from '../ui';

type Result = Answer<'/api/v1/documents/search/pages', 'post'>['data'];

/**
 * What the search and answer forms share: the metadata and date filters as typed (each
 * checked as JSON), the optimise flags, and the request in flight with its error.
 */
export function useFilterForm() {
  const [metadata, setMetadata] = useState('');
  const [created, setCreated] = useState('');
  const [updated, setUpdated] = useState('');
  const [optimizeText, setOptimizeText] = useState(false);
  const [optimizeMetadata, setOptimizeMetadata] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const metadataFilter = parseJsonObject(metadata);
  const createdFilter = parseJsonObject(created);
  const updatedFilter = parseJsonObject(updated);
  const invalid = metadataFilter instanceof Error || createdFilter instanceof Error || updatedFilter instanceof Error;
  /** Runs the form's request unless a filter is invalid: busy meanwhile, its error kept until the next success. */
  const submit = async (e: Event, run: (filters: Record<'metadata_filter' | 'created_at_filter' | 'updated_at_filter', Record<string, unknown> | null>) => Promise<void>) => {
    e.preventDefault();
    if (metadataFilter instanceof Error || createdFilter instanceof Error || updatedFilter instanceof Error) return;
    setBusy(true);
    try {
      await run({ metadata_filter: metadataFilter ?? null, created_at_filter: createdFilter ?? null, updated_at_filter: updatedFilter ?? null });
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { metadata, setMetadata, created, setCreated, updated, setUpdated, optimizeText, setOptimizeText, optimizeMetadata, setOptimizeMetadata, error, busy, invalid, submit };
}

export function Filters(props: Pick<ReturnType<typeof useFilterForm>, 'metadata' | 'setMetadata' | 'created' | 'setCreated' | 'updated' | 'setUpdated'>) {
  return (
    <div class="row wrap">
      <div class="grow">
        <JsonField label="Metadata filter" value={props.metadata} onInput={props.setMetadata} placeholder='{"kind": "pdf"}' />
      </div>
      <div class="grow">
        <JsonField label="Created-at filter" value={props.created} onInput={props.setCreated} placeholder='{"$gte": "2026-01-01T00:00:00Z"}' />
      </div>
      <div class="grow">
        <JsonField label="Updated-at filter" value={props.updated} onInput={props.setUpdated} placeholder='{"$lt": "2026-06-01T00:00:00Z"}' />
      </div>
    </div>
  );
}

export function SearchView() {
  const [query, setQuery] = useState('');
  const [alpha, setAlpha] = useState(0.5);
  const [topK, setTopK] = useState(10);
  const [minRelevance, setMinRelevance] = useState(0);
  const form = useFilterForm();
  const { optimizeMetadata, setOptimizeMetadata, error, busy, invalid } = form;
  const [optimizeQuery, setOptimizeQuery] = [form.optimizeText, form.setOptimizeText];
  const [result, setResult] = useState<Result | null>(null);
  const [searched, setSearched] = useState('');

  const search = (e: Event) =>
    form.submit(e, async (filters) => {
      const res = await call('post', '/api/v1/documents/search/pages', {
        body: { query, alpha, top_k: topK, min_relevance: minRelevance, exact: false, ...filters, optimize_query: optimizeQuery, optimize_metadata: optimizeMetadata },
      });
      setResult(res.data);
      setSearched(query);
    });

  return (
    <section>
      <h1>Search</h1>
      <form class="card" onSubmit={search}>
        <label for="query">Query</label>
        <input id="query" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <div class="row wrap">
          <label class="inline">
            alpha {alpha.toFixed(2)} (1 = semantic only, 0 = keyword only)
            <input type="range" min={0} max={1} step={0.05} value={alpha} onInput={(e) => setAlpha(Number(e.currentTarget.value))} />
          </label>
          <label class="inline">
            top_k
            <input type="number" min={1} max={100} value={topK} onInput={(e) => setTopK(Number(e.currentTarget.value))} />
          </label>
          <label class="inline">
            min_relevance
            <input type="number" min={0} max={1} step={0.01} value={minRelevance} onInput={(e) => setMinRelevance(Number(e.currentTarget.value))} />
          </label>
        </div>
        <Filters {...form} />
        <div class="row wrap">
          <label class="inline">
            <input type="checkbox" checked={optimizeQuery} onChange={(e) => setOptimizeQuery(e.currentTarget.checked)} /> optimise query
          </label>
          <label class="inline">
            <input type="checkbox" checked={optimizeMetadata} onChange={(e) => setOptimizeMetadata(e.currentTarget.checked)} /> optimise metadata
          </label>
        </div>
        <button type="submit" disabled={busy || invalid}>
          Search
        </button>
      </form>
      <ErrorNote error={error} />
      {result && (
        <>
          {(optimizeQuery || optimizeMetadata) && (
            <p class="hint">
              Optimised query: <code>{result.optimized_query}</code>, metadata: <code>{JSON.stringify(result.optimized_metadata)}</code>
            </p>
          )}
          <p aria-live="polite">{result.results.length} results</p>
          <ol class="results">
            {result.results.map((r) => (
              <li key={r.id} class="card result" data-testid="search-result">
                <div class="row wrap">
                  <a href={`#/pages/${r.id}`}>
                    Document {r.document_id}, page {r.page_number}
                  </a>
                  <a href={`#/documents/${r.document_id}?page=${r.page_number}`}>in its document</a>
                </div>
                <ScoreBar relevance={r.relevance} semantic={r.semantic_score} keyword={r.keyword_score} />
                <p class="content snippet">
                  <Highlighted text={r.content.length > 400 ? `${r.content.slice(0, 400)}…` : r.content} query={searched} />
                </p>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
