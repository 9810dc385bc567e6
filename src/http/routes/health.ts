// Liveness and readiness, without a key.
import type { FastifyPluginAsync } from 'fastify';
import { ping } from '../../store/engine.js';
import type { AppDeps } from '../app.js';

export function healthRoutes(deps: AppDeps): FastifyPluginAsync {
  return async (app) => {
    app.get('/health', { schema: { tags: ['health'], summary: 'The process is alive', security: [] } }, async () => ({
      status: 'ok',
    }));
    app.get('/ready', { schema: { tags: ['health'], summary: 'The database answers', security: [] } }, async (_request, reply) => {
      try {
        await ping(deps.store.db);
        return { status: 'ready', engine: deps.store.engine, vector_index: deps.index.memory() };
      } catch {
        return reply.status(503).send({ status: 'unavailable', engine: deps.store.engine });
      }
    });
  };
}
