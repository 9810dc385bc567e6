// Task routes: the status of one task, the listing of a workspace's tasks, and the retry of
// a failed upload.
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { LISTED_TASK_KINDS } from '../../tasks/listing.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { ApiKeyHeader, Envelope, IngestReceipt, JsonQueryFilter, ListQuery, StringEnum, TASK_STATUSES, TaskList, TaskStatus, envelopeErrors } from '../schemas.js';

const tags = ['tasks'];
const TaskParam = Type.Object({ task_identifier: Type.String({ minLength: 1, maxLength: 255 }) });

const TaskListQuery = Type.Object({
  ...ListQuery,
  status: Type.Optional(StringEnum(TASK_STATUSES)),
  kind: Type.Optional(StringEnum(LISTED_TASK_KINDS)),
  created_at_filter: JsonQueryFilter('A created_at filter ({"$gte": "2026-01-01T00:00:00"})'),
});

export function taskRoutes(deps: AppDeps): FastifyPluginAsync {
  const { tasks, ingest } = deps.services;
  return routePlugin((app) => {
    app.get(
      '/tasks/status/:task_identifier',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'getTask',
          tags,
          summary: 'Status of any processing task',
          headers: ApiKeyHeader,
          params: TaskParam,
          response: { 200: Envelope(TaskStatus), ...envelopeErrors },
        },
      },
      async (request) => envelope(await tasks.status(request.principal.workspaceId, request.params.task_identifier)),
    );

    app.get(
      '/tasks',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'listTasks',
          tags,
          summary: 'List tasks a page at a time, newest first, by status, kind and creation time',
          description: 'Keyset paging as the document listing has it: pass next_cursor back as cursor (with the same order) until it is null.',
          headers: ApiKeyHeader,
          querystring: TaskListQuery,
          response: { 200: Envelope(TaskList), ...envelopeErrors },
        },
      },
      async (request) => envelope(await tasks.list(request.principal.workspaceId, request.query)),
    );

    app.post(
      '/tasks/retry/:task_identifier',
      {
        config: { scope: 'write' },
        schema: {
          operationId: 'retryTask',
          tags,
          summary: 'Ingest a FAILED upload again from the file it kept, as a new task',
          description: 'Only IngestFile tasks that FAILED can be retried (400 otherwise); 404 when the kept file is gone.',
          headers: ApiKeyHeader,
          params: TaskParam,
          response: { 201: Envelope(IngestReceipt), ...envelopeErrors },
        },
      },
      async (request, reply) => reply.status(201).send(envelope(await ingest.retryUpload(request.principal.workspaceId, request.params.task_identifier))),
    );
  });
}
