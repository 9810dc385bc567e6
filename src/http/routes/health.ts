// Liveness and readiness, without a key.
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../deps.js';
import { ErrorEnvelope } from '../schemas.js';

// Neither route takes a key, a parameter or a body, so no route error applies; what a
// request to them can still meet is Node's HTTP parser refusing it (errors.ts
// handleClientError), answered in the error envelope.
const parserErrors = {
  400: { ...ErrorEnvelope, description: 'INVALID_REQUEST: a request line or header Node cannot parse' },
  408: { ...ErrorEnvelope, description: 'REQUEST_TIMEOUT: the request was not received in time' },
  431: { ...ErrorEnvelope, description: 'HEADERS_TOO_LARGE: request headers over 16 KiB' },
};

const Engine = Type.String({ enum: ['pglite', 'postgres'] });

// Extra properties are kept (fast-json-stringify would drop undeclared ones): a new
// measure of the index shows in /ready before this schema names it.
const VectorIndexMemory = Type.Object(
  {
    workspaces: Type.Integer({ description: 'Workspaces whose pages are loaded' }),
    pages: Type.Integer(),
    vectorBytes: Type.Integer({ description: 'Bytes of memory holding the page vectors\' codes (and the vectors, where no file keeps them)' }),
    reservedBytes: Type.Integer({ description: 'Address space the matrices of codes have grown to (untouched pages take no RAM), and the vectors held in memory' }),
    postings: Type.Integer({ description: 'Postings (page, lexeme) of the keyword index' }),
    keywordBytes: Type.Integer({ description: "Bytes of the keyword index's postings and per-page arrays" }),
    loading: Type.Integer({ description: 'Workspaces whose index is being loaded (at start-up, or by a first search)' }),
  },
  { additionalProperties: true },
);

export function healthRoutes(deps: AppDeps): FastifyPluginAsync {
  const health = deps.services.health;
  return async (app) => {
    app.get(
      '/health',
      {
        schema: {
          operationId: 'getHealth',
          tags: ['health'],
          summary: 'The process is alive',
          security: [],
          response: { 200: Type.Object({ status: Type.Literal('ok') }), ...parserErrors },
        },
      },
      async () => ({ status: 'ok' }),
    );
    app.get(
      '/ready',
      {
        schema: {
          operationId: 'getReadiness',
          tags: ['health'],
          summary: 'The database answers',
          security: [],
          response: {
            200: Type.Object({ status: Type.Literal('ready'), engine: Engine, vector_index: VectorIndexMemory }),
            ...parserErrors,
            503: Type.Object({ status: Type.Literal('unavailable'), engine: Engine }, { description: 'The database does not answer' }),
          },
        },
      },
      async (_request, reply) => {
        try {
          await health.ping();
          return { status: 'ready', engine: health.engine, vector_index: health.vectorIndexMemory() };
        } catch {
          return reply.status(503).send({ status: 'unavailable', engine: health.engine });
        }
      },
    );
  };
}
