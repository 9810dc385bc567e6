// The Fastify application: plugins (request ids, validation, errors, auth, rate limit,
// OpenAPI) and routes. Built from services already wired; runtime.ts does the wiring.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { errors } from '../errors.js';
import { VERSION } from '../version.js';
import { registerAuth } from './auth.js';
import { registerBodyLimit } from './body-limit.js';
import { errorBody } from './envelope.js';
import type { AppDeps } from './deps.js';
import { registerConsole } from './console.js';
import { createErrorHandler, handleClientError, handleFrameworkError } from './errors.js';
import { answerRoutes } from './routes/answer.js';
import { documentRoutes } from './routes/documents.js';
import { extractionRoutes } from './routes/extractions.js';
import { healthRoutes } from './routes/health.js';
import { ingestRoutes } from './routes/ingest.js';
import { keyRoutes } from './routes/keys.js';
import { mcpRoutes } from './routes/mcp.js';
import { searchRoutes } from './routes/search.js';
import { taskRoutes } from './routes/tasks.js';
import { webhookRoutes } from './routes/webhooks.js';
import { createValidatorCompiler, jsonBodyParser } from './validation.js';

export type App = FastifyInstance;

const MAX_PARAM_LENGTH = 4096;

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config } = deps;
  const app = Fastify({
    logger: deps.logger === false ? false : { level: config.logLevel },
    bodyLimit: config.bodyLimit,
    // A deadline for a whole request (Node's default, which Fastify turns off). Node checks its
    // deadlines on an interval, so the interval is a fraction of the deadline; and it swaps a
    // headers deadline longer than the request's into the request's, so that one is bounded too.
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(config.requestTimeoutMs / 4)),
    },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // An external id of 255 characters, each percent-encoded as up to 12 characters.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
    ajv: { customOptions: { strict: false } },
  });
  app.setValidatorCompiler(createValidatorCompiler());
  app.setErrorHandler(createErrorHandler({ bodyLimit: config.bodyLimit, drainBytes: config.maxFileBytes }));
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(errorBody('envelope', errors.notFound(`Route ${request.method} ${request.url.split('?')[0]}`)));
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  // JSON only: any other body type answers 415 rather than being validated as a string.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser());

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Folio',
        description:
          'Self-hosted document retrieval and extraction: ingest files, URLs or precomputed embeddings, search ' +
          'their pages by a hybrid of semantic and keyword relevance, answer questions citing the pages, and ' +
          'extract records described by a JSON Schema. Every /api/v1 request carries an API key in X-API-Key.',
        version: VERSION,
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      // Relative, so resolved against the URL this document was read from: the instance that
      // serves it, behind whatever host, port or proxy, which Folio itself cannot know.
      servers: [{ url: '/', description: 'The Folio instance serving this document' }],
      tags: [
        { name: 'documents', description: 'Ingestion, documents and their pages, paragraphs and sentences, metadata, deletion' },
        { name: 'search', description: 'Hybrid page search' },
        { name: 'answer', description: 'Answers from the documents, citing their sources' },
        { name: 'extractions', description: 'Records extracted by a JSON Schema from a URL, an upload or a document' },
        { name: 'tasks', description: 'The status of asynchronous ingestion and extraction tasks' },
        { name: 'keys', description: "API keys of the caller's workspace (admin scope)" },
        { name: 'health', description: 'Liveness and readiness, without a key' },
      ],
      components: { securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      security: [{ ApiKey: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  registerBodyLimit(app, config.maxFileBytes);
  registerAuth(app, deps.keys, deps.rateLimiter);
  if (deps.metrics && config.metricsToken) deps.metrics.register(app, config.metricsToken);
  await app.register(healthRoutes(deps));
  await app.register(documentRoutes(deps), { prefix: '/api/v1' });
  await app.register(ingestRoutes(deps), { prefix: '/api/v1' });
  await app.register(searchRoutes(deps), { prefix: '/api/v1' });
  await app.register(answerRoutes(deps), { prefix: '/api/v1' });
  await app.register(extractionRoutes(deps), { prefix: '/api/v1' });
  await app.register(taskRoutes(deps), { prefix: '/api/v1' });
  await app.register(keyRoutes(deps), { prefix: '/api/v1' });
  await app.register(webhookRoutes(deps), { prefix: '/api/v1' });
  await app.register(mcpRoutes(deps));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await registerConsole(app);
  await app.ready();
  return app;
}
