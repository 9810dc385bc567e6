// Authentication (X-API-Key -> workspace and scope), scope checks and per-key rate limiting,
// run before a request body is even read.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Scope } from '../config.js';
import { errors } from '../errors.js';
import { scopeAllows, type KeyResolver, type Principal } from '../workspaces/keys.js';
import type { ResponseShape } from './envelope.js';
import { rateLimitHeaders, type RateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** The scope a route needs; routes without one need no key. */
    scope?: Scope;
    /** The shape of the route's bodies, errors included. */
    shape?: ResponseShape;
    /** The key may also come as `Authorization: Bearer <key>` (MCP clients send it so). */
    bearer?: boolean;
  }
}

function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key || !request.routeOptions.config.bearer) return key;
  return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
}

export function registerAuth(app: FastifyInstance, keys: KeyResolver, rateLimiter: RateLimiter | null): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    const key = apiKeyOf(request);
    if (!key) throw errors.unauthorized();
    const principal = await keys.resolve(key);
    if (!principal) throw errors.unauthorized('The API key is not valid');
    request.principal = principal;
    // The request's own child logger (Fastify makes one per request) takes the principal's
    // fields: a second child would cost a logger and its level setup on every request.
    const fields = { workspace: principal.workspace, key: principal.keyId };
    const log: FastifyBaseLogger & { setBindings?: (bindings: Record<string, unknown>) => void } = request.log;
    if (log.setBindings) log.setBindings(fields);
    else request.log = request.log.child(fields);
    if (rateLimiter) {
      const decision = await rateLimiter.consume(principal.keyId);
      reply.headers(rateLimitHeaders(decision));
      if (!decision.allowed) throw errors.rateLimited(decision.resetSeconds);
    }
    if (!scopeAllows(principal.scope, scope)) throw errors.forbidden(scope);
  });
}
