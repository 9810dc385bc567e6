// Question answering route: POST /documents/answer.
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AnswerFormat } from '../../answer/extractive.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { ApiKeyHeader, DocumentFilters, Envelope, FilterObject, Metadata, envelopeErrors } from '../schemas.js';

const Format = Type.Unsafe<AnswerFormat>({ type: 'string', enum: ['MARKDOWN', 'PLAIN_TEXT'], default: 'MARKDOWN' });

const AnswerBody = Type.Object({
  question: Type.String({ minLength: 1, maxLength: 10000, pattern: '\\S' }),
  format: Format,
  ...DocumentFilters.properties,
  optimize_metadata: Type.Boolean({ default: false }),
  optimize_question: Type.Boolean({ default: false }),
  top_k: Type.Integer({ minimum: 1, maximum: 50, default: 5, description: 'Most sources returned' }),
});

const Source = Type.Object({
  document_id: Type.Integer(),
  page_number: Type.Integer(),
  relevance: Type.String({ description: 'Retrieval relevance of the page, four decimals' }),
  document_metadata: Metadata,
  sentence_ids: Type.Array(Type.Integer(), { description: 'Sentences of the page the answer drew on' }),
});

const AnswerData = Type.Object({
  answer: Type.String(),
  format: Format,
  sources: Type.Array(Source),
  optimized_question: Type.String(),
  optimized_metadata: FilterObject,
});

export function answerRoutes(deps: AppDeps): FastifyPluginAsync {
  return routePlugin((app) => {
    app.post(
      '/documents/answer',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'answerQuestion',
          tags: ['answer'],
          summary: 'Answer a question from the documents matching the filters, citing its sources',
          description:
            'Retrieves pages with the hybrid search, then answers: with a language model, a grounded answer whose ' +
            'citations are checked against the retrieved pages; otherwise (or when the model fails or cites nothing ' +
            'retrieved) an extractive answer from the best sentences. Marker [n] in the answer refers to sources[n-1]. ' +
            'The x-folio-answer-mode header says which: llm, extractive, fallback or none.',
          headers: ApiKeyHeader,
          body: AnswerBody,
          response: { 200: Envelope(AnswerData), ...envelopeErrors },
        },
      },
      async (request, reply) => {
        const outcome = await deps.services.answer(request.principal.workspaceId, request.body, (err) =>
          request.log.warn({ err }, 'language-model answer not used; extractive answer returned'),
        );
        reply.header('x-folio-answer-mode', outcome.mode);
        return envelope(outcome.data);
      },
    );
  });
}
