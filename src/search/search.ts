// Hybrid page search: exact semantic scores and keyword ranks from the in-process page
// index, mixed by alpha over every eligible page, under metadata and date filters.
import type { Kysely } from 'kysely';
import { ValidationError, type FieldIssue } from '../errors.js';
import { hashEmbed, type CachedEmbedder } from '../providers/embeddings/index.js';
import { compileDocumentFilter, type DocumentFilter } from '../store/filter.js';
import { eligibleDocumentIds } from '../store/matching.js';
import { pageContents } from '../store/pages.js';
import type { Database } from '../store/schema.js';
import type { PageIndex } from './page-index.js';
import { normalizeVector } from './vectors.js';

export interface SearchDeps {
  db: Kysely<Database>;
  index: PageIndex;
  embedder: CachedEmbedder;
  /** Serves optimize_query / optimize_metadata; without one the flags change nothing. */
  optimizer?: QueryOptimizer | null;
}

export interface OptimizeInput {
  text: string;
  metadata_filter?: Record<string, unknown> | null;
  /** The caller's filters compiled: the metadata filter and the date filters. */
  filter: DocumentFilter | null;
  /** Remove from the text what the metadata filter covers. */
  optimizeText: boolean;
  /** Derive a metadata filter from the text. */
  optimizeMetadata: boolean;
}

export interface OptimizeOutput {
  /** The text to search with (the input text when nothing was removed). */
  text: string;
  /** The metadata filter to apply: the caller's, combined with $and with a derived one when one was used. */
  metadata_filter: Record<string, unknown> | null;
  /** That metadata filter and the input's date filters, compiled. */
  filter: DocumentFilter | null;
}

/** Rewrites a query and its metadata filter (answer/optimize.ts implements it). */
export interface QueryOptimizer {
  optimize(workspaceId: number, input: OptimizeInput): Promise<OptimizeOutput>;
}

export interface SearchRequest {
  query?: string | null;
  embedding?: number[] | null;
  alpha?: number;
  top_k?: number;
  min_relevance?: number;
  exact?: boolean;
  metadata_filter?: Record<string, unknown> | null;
  created_at_filter?: Record<string, unknown> | null;
  updated_at_filter?: Record<string, unknown> | null;
  optimize_query?: boolean;
  optimize_metadata?: boolean;
}

export interface SearchResult {
  content: string;
  document_id: number;
  id: number;
  page_number: number;
  relevance: number;
  semantic_score: number;
  keyword_score: number;
}

export interface SearchResponse {
  results: SearchResult[];
  optimized_query: string;
  optimized_metadata: Record<string, unknown>;
}

function checkCombination(req: SearchRequest, alpha: number): void {
  const issues: FieldIssue[] = [];
  const hasQuery = typeof req.query === 'string';
  const hasEmbedding = Array.isArray(req.embedding);
  if (!hasQuery && !hasEmbedding) {
    issues.push({ path: ['query'], msg: 'Field required when embedding is absent', type: 'missing' });
  } else if (!hasQuery && alpha < 1) {
    issues.push({ path: ['query'], msg: 'Field required when alpha < 1.0', type: 'missing' });
  }
  if (hasEmbedding && alpha !== 1) {
    issues.push({ path: ['embedding'], msg: 'embedding is usable only with alpha = 1.0', type: 'value_error' });
  }
  for (const flag of ['optimize_query', 'optimize_metadata'] as const) {
    if (req[flag] && !hasQuery) {
      issues.push({ path: [flag], msg: `${flag} works only with query, not embedding`, type: 'value_error' });
    }
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

/** The query's unit vector: a given embedding is checked at once, query text is embedded (null when it embeds to zeros). */
function queryVector(deps: SearchDeps, req: Pick<SearchRequest, 'query' | 'embedding'>): Promise<Float32Array | null> {
  if (Array.isArray(req.embedding)) {
    const vector = normalizeVector(req.embedding);
    if (!vector) {
      throw new ValidationError([{ path: ['embedding'], msg: 'Embedding must not be all zeros', type: 'value_error' }]);
    }
    return Promise.resolve(vector);
  }
  return deps.embedder.embedQuery(req.query!).then(nonZero);
}

const nonZero = (vector: Float32Array): Float32Array | null => (vector.some((v) => v !== 0) ? vector : null);

export async function searchPages(deps: SearchDeps, workspaceId: number, req: SearchRequest): Promise<SearchResponse> {
  checkCombination(req, req.alpha ?? 1);
  let filter = compileDocumentFilter(req);
  if ((req.optimize_query || req.optimize_metadata) && typeof req.query === 'string' && deps.optimizer) {
    const optimized = await deps.optimizer.optimize(workspaceId, {
      text: req.query,
      metadata_filter: req.metadata_filter,
      filter,
      optimizeText: req.optimize_query === true,
      optimizeMetadata: req.optimize_metadata === true,
    });
    req = { ...req, query: optimized.text, metadata_filter: optimized.metadata_filter };
    filter = optimized.filter;
  }
  return {
    results: await findPages(deps, workspaceId, req, filter),
    optimized_query: req.query ?? '',
    optimized_metadata: req.metadata_filter ?? {},
  };
}

/** The best pages for a checked request under its compiled filter (the request's own filters are not read). */
export async function findPages(
  deps: SearchDeps,
  workspaceId: number,
  req: Pick<SearchRequest, 'query' | 'embedding' | 'alpha' | 'top_k' | 'min_relevance' | 'exact'>,
  filter: DocumentFilter | null,
): Promise<SearchResult[]> {
  const alpha = req.alpha ?? 1;
  const k = req.top_k ?? 10;
  const minRelevance = req.min_relevance ?? 0;
  // At alpha 0 the query vector still gives the results their semantic_score. The query is
  // embedded while the index catches up and reads the filter's documents, and its lexemes are
  // read while the index scans; a failure is reported by the search that awaits it.
  const vector = queryVector(deps, req);
  const terms = typeof req.query === 'string' ? deps.index.queryTerms(req.query) : Promise.resolve([]);
  for (const pending of [vector, terms]) pending.catch(() => undefined);
  const eligible = filter && { key: filter.key, read: () => eligibleDocumentIds(deps.db, workspaceId, filter) };
  // Pages still holding a vector of the superseded offline model (until their re-embedding) are
  // scored with the query embedded by that model; a given embedding has no text to embed.
  const text = req.query;
  const supersededVector = typeof text === 'string' ? () => Promise.resolve(nonZero(hashEmbed(text))) : undefined;
  const ranked = await deps.index.search(workspaceId, {
    vector,
    supersededVector,
    terms,
    alpha,
    filter: eligible,
    k,
    minRelevance,
    exact: req.exact ?? false,
  });
  // The index gives each result's content from its content file, unless that file could not
  // keep it (no directory, a full disk): those are read from the store, and a page deleted
  // since it was scored is then no longer a result.
  const unkept = ranked.filter((r) => r.content === null).map((r) => r.pageId);
  const read = new Map(unkept.length > 0 ? (await pageContents(deps.db, unkept)).map((p) => [p.id, p.content]) : []);
  const results: SearchResult[] = [];
  for (const r of ranked) {
    const content = r.content ?? read.get(r.pageId);
    if (content === undefined) continue;
    results.push({
      content,
      document_id: r.documentId,
      id: r.pageId,
      page_number: r.pageNumber,
      relevance: r.relevance,
      semantic_score: r.semantic,
      keyword_score: r.keyword,
    });
  }
  return results;
}
