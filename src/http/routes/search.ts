// Page search route.
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { EMBEDDING_DIMENSIONS } from '../../search/vectors.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { ApiKeyHeader, DocumentFilters, Envelope, FilterObject, Nullable, envelopeErrors } from '../schemas.js';

const SearchBody = Type.Object({
  query: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 10000 }))),
  embedding: Type.Optional(
    Nullable(Type.Array(Type.Number(), { minItems: EMBEDDING_DIMENSIONS, maxItems: EMBEDDING_DIMENSIONS })),
  ),
  alpha: Type.Number({ minimum: 0, maximum: 1, default: 1 }),
  top_k: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  min_relevance: Type.Number({ minimum: 0, maximum: 1, default: 0 }),
  exact: Type.Boolean({
    default: false,
    description:
      'Score every page from its full embedding instead of its compact code first. The results are the same either way, bit for bit; this only takes longer.',
  }),
  ...DocumentFilters.properties,
  optimize_query: Type.Boolean({ default: false }),
  optimize_metadata: Type.Boolean({ default: false }),
});

const SearchResult = Type.Object({
  content: Type.String(),
  document_id: Type.Integer(),
  id: Type.Integer(),
  page_number: Type.Integer(),
  relevance: Type.Number(),
  semantic_score: Type.Number(),
  keyword_score: Type.Number(),
});

export function searchRoutes(deps: AppDeps): FastifyPluginAsync {
  return routePlugin((app) => {
    app.post(
      '/documents/search/pages',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'searchDocuments',
          tags: ['search'],
          summary: 'Hybrid page search: relevance = alpha x semantic + (1 - alpha) x keyword',
          headers: ApiKeyHeader,
          body: SearchBody,
          response: {
            200: Envelope(
              Type.Object({ results: Type.Array(SearchResult), optimized_query: Type.String(), optimized_metadata: FilterObject }),
            ),
            ...envelopeErrors,
          },
        },
      },
      async (request) => envelope(await deps.services.search(request.principal.workspaceId, request.body)),
    );
  });
}
