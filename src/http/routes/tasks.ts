// Task status route.
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { ApiKeyHeader, Envelope, TaskStatus, envelopeErrors } from '../schemas.js';

export function taskRoutes(deps: AppDeps): FastifyPluginAsync {
  return routePlugin((app) => {
    app.get(
      '/tasks/status/:task_identifier',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'getTask',
          tags: ['tasks'],
          summary: 'Status of any processing task',
          headers: ApiKeyHeader,
          params: Type.Object({ task_identifier: Type.String({ minLength: 1, maxLength: 255 }) }),
          response: { 200: Envelope(TaskStatus), ...envelopeErrors },
        },
      },
      async (request) => envelope(await deps.services.tasks.status(request.principal.workspaceId, request.params.task_identifier)),
    );
  });
}
