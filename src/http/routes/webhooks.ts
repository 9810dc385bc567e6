// Webhook routes (admin scope), limited to the caller's workspace: endpoints and their deliveries.
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../webhooks/events.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { ApiKeyHeader, Envelope, Id, Nullable, envelopeErrors } from '../schemas.js';

const tags = ['webhooks'];

const DateTime = Type.String({ format: 'date-time' });

// An enum rather than a union of literals: one clear 422 item for a wrong value.
const EventType = Type.Unsafe<WebhookEventType>({ type: 'string', enum: [...WEBHOOK_EVENT_TYPES] });

const Webhook = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Nullable(Type.String()),
  created_at: DateTime,
  last_success_at: Nullable(DateTime),
  failing_since: Nullable(Type.String({ format: 'date-time', description: 'The first failed attempt since the last success' })),
  disabled: Type.Boolean({ description: 'A disabled endpoint gets no more deliveries' }),
  disabled_at: Nullable(DateTime),
  disabled_reason: Nullable(Type.String()),
});

const WebhookBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that receives the POSTs; private addresses only when the host is in FOLIO_URL_ALLOWLIST' }),
  events: Type.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length * 4, description: `Any of ${WEBHOOK_EVENT_TYPES.join(', ')}` }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
});

const Attempt = Type.Object({
  attempt: Type.Integer(),
  response_code: Nullable(Type.Integer()),
  duration_ms: Type.Integer(),
  error: Nullable(Type.String()),
  attempted_at: DateTime,
});

const Delivery = Type.Object({
  id: Type.Integer(),
  event_id: Type.String(),
  event_type: Type.String(),
  status: Type.String({ enum: ['pending', 'succeeded', 'failed'] }),
  attempt_count: Type.Integer(),
  response_code: Nullable(Type.Integer({ description: "The last attempt's HTTP status; null when it got no answer" })),
  duration_ms: Nullable(Type.Integer()),
  error: Nullable(Type.String({ description: 'Why the last attempt failed' })),
  last_attempt_at: Nullable(DateTime),
  next_attempt_at: Nullable(Type.String({ format: 'date-time', description: 'When a pending delivery is tried next' })),
  created_at: DateTime,
  attempts: Type.Array(Attempt),
});

const WebhookIdParam = Type.Object({ webhook_id: Id });

export function webhookRoutes(deps: AppDeps): FastifyPluginAsync {
  const webhooks = deps.services.webhooks;
  return routePlugin((app) => {
    app.post(
      '/webhooks',
      {
        config: { scope: 'admin' },
        schema: {
          operationId: 'createWebhook',
          tags,
          summary: 'Create a webhook endpoint (its signing secret is shown only in this response)',
          description:
            'The URL must be http(s) (422 otherwise); one the delivery guard refuses (a private address whose host is not in FOLIO_URL_ALLOWLIST, a host that does not resolve) answers 400.',
          headers: ApiKeyHeader,
          body: WebhookBody,
          response: { 201: Envelope(Type.Object({ ...Webhook.properties, secret: Type.String() })), ...envelopeErrors },
        },
      },
      async (request, reply) => reply.status(201).send(envelope(await webhooks.create(request.principal.workspaceId, request.body))),
    );
    app.get(
      '/webhooks',
      {
        config: { scope: 'admin' },
        schema: { operationId: 'listWebhooks', tags, summary: "This workspace's webhook endpoints (never their secrets)", headers: ApiKeyHeader, response: { 200: Envelope(Type.Array(Webhook)), ...envelopeErrors } },
      },
      async (request) => envelope(await webhooks.list(request.principal.workspaceId)),
    );
    app.delete(
      '/webhooks/:webhook_id',
      {
        config: { scope: 'admin' },
        schema: {
          operationId: 'deleteWebhook',
          tags,
          summary: 'Delete a webhook endpoint and its deliveries',
          headers: ApiKeyHeader,
          params: WebhookIdParam,
          response: { 200: Envelope(Type.Object({ id: Type.Integer(), deleted: Type.Boolean() })), ...envelopeErrors },
        },
      },
      async (request) => envelope(await webhooks.delete(request.principal.workspaceId, request.params.webhook_id)),
    );
    app.get(
      '/webhooks/:webhook_id/deliveries',
      {
        config: { scope: 'admin' },
        schema: {
          operationId: 'listWebhookDeliveries',
          tags,
          summary: "An endpoint's latest deliveries, newest first, with every attempt",
          headers: ApiKeyHeader,
          params: WebhookIdParam,
          querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }) }),
          response: { 200: Envelope(Type.Array(Delivery)), ...envelopeErrors },
        },
      },
      async (request) => envelope(await webhooks.deliveries(request.principal.workspaceId, request.params.webhook_id, request.query.limit)),
    );
  });
}
