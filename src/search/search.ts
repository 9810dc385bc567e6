// Hybrid page search: exact semantic scores and keyword ranks from the in-process page
// index, mixed by alpha over every eligible page, under metadata and date filters.
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { ValidationError, type FieldIssue } from '../errors.js';
import type { CachedEmbedder } from '../providers/embeddings/index.js';
import type { Database } from '../store/schema.js';
import { eligibleDocumentIds, pageContents } from '../store/pages.js';
import { compileDateFilter, compileMetadataFilter } from './filter.js';
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
  created_at_filter?: Record<string, unknown> | null;
  updated_at_filter?: Record<string, unknown> | null;
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

function isEmpty(filter: Record<string, unknown> | null | undefined): boolean {
  return !filter || Object.keys(filter).length === 0;
}

/** The document filter as one SQL condition over `d`, or null when nothing is filtered. */
export function documentCondition(req: Pick<SearchRequest, 'metadata_filter' | 'created_at_filter' | 'updated_at_filter'>): Expression<SqlBool> | null {
  if (isEmpty(req.metadata_filter) && isEmpty(req.created_at_filter) && isEmpty(req.updated_at_filter)) return null;
  return sql<SqlBool>`(${compileMetadataFilter(req.metadata_filter, sql.ref('d.metadata'))}
    AND ${compileDateFilter(req.created_at_filter, sql.ref('d.created_at'), 'created_at_filter')}
    AND ${compileDateFilter(req.updated_at_filter, sql.ref('d.updated_at'), 'updated_at_filter')})`;
}

/** The request's filters as a cache key: equal keys compile to the same condition. */
function filterKey(req: SearchRequest): string {
  return JSON.stringify([req.metadata_filter ?? null, req.created_at_filter ?? null, req.updated_at_filter ?? null]);
}

async function queryVector(deps: SearchDeps, req: SearchRequest): Promise<Float32Array | null> {
  if (Array.isArray(req.embedding)) {
    const vector = normalizeVector(req.embedding);
    if (!vector) {
      throw new ValidationError([{ path: ['embedding'], msg: 'Embedding must not be all zeros', type: 'value_error' }]);
    }
    return vector;
  }
  const vector = await deps.embedder.embedQuery(req.query!);
  return vector.some((v) => v !== 0) ? vector : null;
}

export async function searchPages(deps: SearchDeps, workspaceId: number, req: SearchRequest): Promise<SearchResponse> {
  const alpha = req.alpha ?? 1;
  const k = req.top_k ?? 10;
  const minRelevance = req.min_relevance ?? 0;
  checkCombination(req, alpha);
  let condition = documentCondition(req);
  if ((req.optimize_query || req.optimize_metadata) && typeof req.query === 'string' && deps.optimizer) {
    const optimized = await deps.optimizer.optimize(workspaceId, {
      text: req.query,
      metadata_filter: req.metadata_filter,
      created_at_filter: req.created_at_filter,
      updated_at_filter: req.updated_at_filter,
      optimizeText: req.optimize_query === true,
      optimizeMetadata: req.optimize_metadata === true,
    });
    req = { ...req, query: optimized.text, metadata_filter: optimized.metadata_filter };
    condition = documentCondition(req);
  }

  const filter = condition;
  // At alpha 0 the query vector still gives the results their semantic_score.
  const [vector, terms, documents] = await Promise.all([
    queryVector(deps, req),
    typeof req.query === 'string' ? deps.index.queryTerms(req.query) : [],
    filter ? deps.index.eligibleDocuments(workspaceId, filterKey(req), () => eligibleDocumentIds(deps.db, workspaceId, filter)) : null,
  ]);
  const ranked = await deps.index.search(workspaceId, { vector, terms, alpha, documents, k, minRelevance });
  const contents = new Map((await pageContents(deps.db, ranked.map((r) => r.pageId))).map((p) => [p.id, p]));
  const results: SearchResult[] = [];
  for (const r of ranked) {
    const page = contents.get(r.pageId);
    // A page deleted since it was scored is no longer a result.
    if (!page) continue;
    results.push({
      content: page.content,
      document_id: page.document_id,
      id: page.id,
      page_number: page.page_number,
      relevance: r.relevance,
      semantic_score: r.semantic,
      keyword_score: r.keyword,
    });
  }
  return {
    results,
    optimized_query: req.query ?? '',
    optimized_metadata: req.metadata_filter ?? {},
  };
}
