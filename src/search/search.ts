// Hybrid page search: exact semantic scores from the vector index and keyword scores from
// full-text ranking, mixed by alpha over every eligible page, under metadata and date filters.
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { ValidationError, type ValidationIssue } from '../errors.js';
import type { CachedEmbedder } from '../providers/embeddings/index.js';
import type { Database } from '../store/schema.js';
import { eligibleDocumentIds, keywordRanks, pageContents } from '../store/pages.js';
import { compileDateFilter, compileMetadataFilter } from './filter.js';
import { topK } from './kernel/index.js';
import type { VectorIndex } from './vector-index.js';
import { normalizeVector } from './vectors.js';

export interface SearchDeps {
  db: Kysely<Database>;
  index: VectorIndex;
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

/** keyword_score from a full-text rank: absolute, in [0, 1), 0 when nothing matched. */
export function keywordScore(rank: number): number {
  return rank > 0 ? rank / (rank + 1) : 0;
}

/** semantic_score from a cosine: negative similarity counts as none. */
export function semanticScore(cosine: number): number {
  return Math.min(1, Math.max(0, cosine));
}

function checkCombination(req: SearchRequest, alpha: number): void {
  const issues: ValidationIssue[] = [];
  const hasQuery = typeof req.query === 'string';
  const hasEmbedding = Array.isArray(req.embedding);
  if (!hasQuery && !hasEmbedding) {
    issues.push({ loc: ['body', 'query'], msg: 'Field required when embedding is absent', type: 'missing' });
  } else if (!hasQuery && alpha < 1) {
    issues.push({ loc: ['body', 'query'], msg: 'Field required when alpha < 1.0', type: 'missing' });
  }
  if (hasEmbedding && alpha !== 1) {
    issues.push({ loc: ['body', 'embedding'], msg: 'embedding is usable only with alpha = 1.0', type: 'value_error' });
  }
  for (const flag of ['optimize_query', 'optimize_metadata'] as const) {
    if (req[flag] && !hasQuery) {
      issues.push({ loc: ['body', flag], msg: `${flag} works only with query, not embedding`, type: 'value_error' });
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

async function queryVector(deps: SearchDeps, req: SearchRequest): Promise<Float32Array | null> {
  if (Array.isArray(req.embedding)) {
    const vector = normalizeVector(req.embedding);
    if (!vector) {
      throw new ValidationError([{ loc: ['body', 'embedding'], msg: 'Embedding must not be all zeros', type: 'value_error' }]);
    }
    return vector;
  }
  const vector = await deps.embedder.embedQuery(req.query!);
  return vector.some((v) => v !== 0) ? vector : null;
}

interface Scored {
  pageIds: number[];
  semantic: Float64Array;
  keyword: Float64Array;
}

/** Semantic and keyword scores of every candidate page, aligned by position. */
async function scoreCandidates(
  deps: SearchDeps,
  workspaceId: number,
  req: SearchRequest,
  alpha: number,
  condition: Expression<SqlBool> | null,
): Promise<Scored> {
  const semanticPart = async () => {
    if (alpha === 0) return null;
    const vector = await queryVector(deps, req);
    if (!vector) return null;
    const eligible = condition ? await eligibleDocumentIds(deps.db, workspaceId, condition) : null;
    return deps.index.score(workspaceId, vector, eligible);
  };
  const keywordPart = async () => (alpha < 1 ? keywordRanks(deps.db, workspaceId, req.query!, condition) : []);
  const [semantic, hits] = await Promise.all([semanticPart(), keywordPart()]);

  // Keyword hits are few next to the scanned pages: look them up, never the other way round.
  const pending = new Map(hits.map((hit) => [hit.pageId, keywordScore(hit.rank)]));
  const pageIds = semantic ? semantic.pageIds : [];
  const n = pageIds.length;
  const sem = new Float64Array(n + pending.size);
  const kw = new Float64Array(n + pending.size);
  for (let i = 0; i < n; i++) {
    sem[i] = semanticScore(semantic!.scores[i]);
    if (pending.size > 0) {
      const score = pending.get(pageIds[i]);
      if (score !== undefined) {
        kw[i] = score;
        pending.delete(pageIds[i]);
      }
    }
  }
  // Pages that match keywords but hold no embedding.
  for (const [pageId, score] of pending) {
    kw[pageIds.length] = score;
    pageIds.push(pageId);
  }
  return { pageIds, semantic: sem.subarray(0, pageIds.length), keyword: kw.subarray(0, pageIds.length) };
}

/** Fills in the score the ranking did not need (keyword at alpha 1, semantic at alpha 0) for the results. */
async function completeScores(
  deps: SearchDeps,
  workspaceId: number,
  req: SearchRequest,
  alpha: number,
  results: SearchResult[],
): Promise<void> {
  if (results.length === 0) return;
  const ids = results.map((r) => r.id);
  const byId = new Map(results.map((r) => [r.id, r]));
  if (alpha === 1 && typeof req.query === 'string') {
    for (const hit of await keywordRanks(deps.db, workspaceId, req.query, null, ids)) {
      byId.get(hit.pageId)!.keyword_score = keywordScore(hit.rank);
    }
  }
  if (alpha === 0) {
    const vector = await queryVector(deps, req);
    if (!vector) return;
    const semantic = await deps.index.scorePages(workspaceId, vector, ids);
    semantic.pageIds.forEach((id, i) => (byId.get(id)!.semantic_score = semanticScore(semantic.scores[i])));
  }
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

  const scored = await scoreCandidates(deps, workspaceId, req, alpha, condition);
  const n = scored.pageIds.length;
  const relevance = new Float64Array(n);
  for (let i = 0; i < n; i++) relevance[i] = alpha * scored.semantic[i] + (1 - alpha) * scored.keyword[i];

  const best = Array.from(topK(relevance, k, scored.pageIds)).filter((i) => relevance[i] > minRelevance);
  const contents = new Map((await pageContents(deps.db, best.map((i) => scored.pageIds[i]))).map((p) => [p.id, p]));
  const results: SearchResult[] = [];
  for (const i of best) {
    const page = contents.get(scored.pageIds[i]);
    // A page deleted since it was scored is no longer a result.
    if (!page) continue;
    results.push({
      content: page.content,
      document_id: page.document_id,
      id: page.id,
      page_number: page.page_number,
      relevance: relevance[i],
      semantic_score: scored.semantic[i],
      keyword_score: scored.keyword[i],
    });
  }
  await completeScores(deps, workspaceId, req, alpha, results);
  return {
    results,
    optimized_query: req.query ?? '',
    optimized_metadata: req.metadata_filter ?? {},
  };
}
