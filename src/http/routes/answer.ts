// Question answering route: POST /documents/answer, as JSON or, asked with
// `Accept: text/event-stream`, as Server-Sent Events (sources, deltas, then done or error).
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AnswerFormat } from '../../answer/extractive.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { ApiKeyHeader, DocumentFilters, Envelope, ErrorEnvelope, FilterObject, Metadata, envelopeErrors } from '../schemas.js';
import { EventStreams, acceptsEventStream } from '../sse.js';

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

const AnswerEnvelope = Envelope(AnswerData);

const AnswerEvent = Type.Union(
  [
    Type.Object({ event: Type.Literal('sources'), data: Type.Array(Source) }),
    Type.Object({ event: Type.Literal('delta'), data: Type.Object({ text: Type.String() }) }),
    Type.Object({ event: Type.Literal('done'), data: AnswerEnvelope }),
    Type.Object({ event: Type.Literal('error'), data: ErrorEnvelope }),
  ],
  {
    description:
      'One Server-Sent Event: its event name and its data line, JSON. First `sources`, the sources the markers of the ' +
      'deltas refer to; then `delta` events, pieces of the answer as it is written; last `done`, the body the JSON ' +
      'response has, or `error`, the error envelope of a failure after the stream began. Comment lines keep the ' +
      'connection alive. The x-folio-answer-mode trailer follows done.',
  },
);

const MODE_HEADER = 'x-folio-answer-mode';

export function answerRoutes(deps: AppDeps): FastifyPluginAsync {
  return routePlugin((app) => {
    const streams = new EventStreams(app, { shutdownGraceMs: deps.config.shutdownGraceMs });
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
            'The x-folio-answer-mode header says which: llm, extractive, fallback or none. With ' +
            '`Accept: text/event-stream` the answer streams as Server-Sent Events once the request is checked and the ' +
            'pages retrieved (errors until then are the usual responses). While a model writes, the deltas are its ' +
            'unchecked text citing the passages listed by `sources`; `done` then holds the checked answer.',
          headers: ApiKeyHeader,
          body: AnswerBody,
          response: {
            200: {
              description: 'The answer (JSON), or its events (text/event-stream)',
              content: {
                'application/json': { schema: AnswerEnvelope },
                'text/event-stream': { schema: AnswerEvent },
              },
            },
            ...envelopeErrors,
          },
        },
      },
      async (request, reply) => {
        const workspaceId = request.principal.workspaceId;
        const onLlmError = (err: unknown) => request.log.warn({ err }, 'language-model answer not used; extractive answer returned');
        if (acceptsEventStream(request.headers.accept)) {
          const write = await deps.services.prepareAnswer(workspaceId, request.body, onLlmError);
          return streams.send(
            request,
            reply,
            async (events) => {
              const outcome = await write({
                sources: (sources) => events.send('sources', sources),
                delta: (text) => events.send('delta', { text }),
                signal: events.signal,
              });
              events.trailer(MODE_HEADER, outcome.mode);
              events.send('done', envelope(outcome.data));
            },
            [MODE_HEADER],
          );
        }
        const outcome = await deps.services.answer(workspaceId, request.body, onLlmError);
        reply.header(MODE_HEADER, outcome.mode);
        return envelope(outcome.data);
      },
    );
  });
}
