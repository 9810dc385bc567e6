// Liveness and readiness, without a key.
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../deps.js';

export function healthRoutes(deps: AppDeps): FastifyPluginAsync {
  const health = deps.services.health;
  return async (app) => {
    app.get('/health', { schema: { tags: ['health'], summary: 'The process is alive', security: [] } }, async () => ({
      status: 'ok',
    }));
    app.get('/ready', { schema: { tags: ['health'], summary: 'The database answers', security: [] } }, async (_request, reply) => {
      try {
        await health.ping();
        return { status: 'ready', engine: health.engine, vector_index: health.vectorIndexMemory() };
      } catch {
        return reply.status(503).send({ status: 'unavailable', engine: health.engine });
      }
    });
  };
}
