// API key management routes (admin scope), limited to the caller's workspace, and what any
// key may ask of itself.
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Scope } from '../../config.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { ApiKeyHeader, Envelope, Id, Nullable, envelopeErrors } from '../schemas.js';

const KeySummary = Type.Object({
  id: Type.Integer(),
  workspace: Type.String(),
  scope: Type.String(),
  prefix: Type.String(),
  label: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Nullable(Type.String({ format: 'date-time' })),
});

const tags = ['keys'];

export function keyRoutes(deps: AppDeps): FastifyPluginAsync {
  const keys = deps.services.keys;
  return routePlugin((app) => {
    app.get(
      '/keys/current',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'getCurrentKey',
          tags,
          summary: "The calling key's workspace and scope (any scope)",
          headers: ApiKeyHeader,
          response: { 200: Envelope(Type.Object({ workspace: Type.String(), scope: Type.Unsafe<Scope>({ type: 'string', enum: ['read', 'write', 'admin'] }) })), ...envelopeErrors },
        },
      },
      async (request) => envelope({ workspace: request.principal.workspace, scope: request.principal.scope }),
    );

    app.post(
      '/keys',
      {
        config: { scope: 'admin' },
        schema: {
          operationId: 'createApiKey',
          tags,
          summary: 'Create an API key for this workspace (the key is shown only in this response)',
          headers: ApiKeyHeader,
          body: Type.Object({
            // An enum rather than a union of literals: one clear 422 item for a wrong value.
            scope: Type.Unsafe<Scope>({ type: 'string', enum: ['read', 'write', 'admin'] }),
            label: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
          }),
          response: { 201: Envelope(Type.Object({ ...KeySummary.properties, key: Type.String() })), ...envelopeErrors },
        },
      },
      async (request, reply) =>
        reply.status(201).send(envelope(await keys.issue(request.principal, request.body.scope, request.body.label ?? null))),
    );
    app.get(
      '/keys',
      {
        config: { scope: 'admin' },
        schema: { operationId: 'listApiKeys', tags, summary: "This workspace's API keys (never the keys themselves)", headers: ApiKeyHeader, response: { 200: Envelope(Type.Array(KeySummary)), ...envelopeErrors } },
      },
      async (request) => envelope(await keys.list(request.principal)),
    );
    app.delete(
      '/keys/:key_id',
      {
        config: { scope: 'admin' },
        schema: { operationId: 'revokeApiKey', tags, summary: 'Revoke an API key of this workspace', headers: ApiKeyHeader, params: Type.Object({ key_id: Id }), response: { 200: Envelope(Type.Object({ revoked: Type.Integer() })), ...envelopeErrors } },
      },
      async (request) => envelope(await keys.revoke(request.principal, request.params.key_id)),
    );
  });
}
