// The MCP endpoint (streamable HTTP, stateless): each request gets a server of its key's
// tools over the services, answers in JSON and is closed. Authentication, the scope floor
// (read) and the rate limit are the API's own hooks; the key may also come as a Bearer token.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import { serviceBackend } from '../../mcp/service-backend.js';
import { createMcpServer } from '../../mcp/server.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { toKnownError } from '../errors.js';

export function mcpRoutes(deps: AppDeps): FastifyPluginAsync {
  async function handle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const explain = (error: unknown): string => {
      const known = toKnownError(error, deps.config.bodyLimit);
      if (known) return known.message;
      request.log.error({ err: error }, 'MCP tool failed');
      return errors.internal().message;
    };
    const onLlmError = (err: unknown) => request.log.warn({ err }, 'language-model answer not used; extractive answer returned');
    const server = createMcpServer(serviceBackend(deps.services, request.principal, onLlmError), request.principal.scope, { explain });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the response itself: the headers the hooks set (rate limit) go first.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.raw.setHeader('x-request-id', request.id);
    reply.hijack();
    reply.raw.on('close', () => void server.close());
    await server.connect(transport);
    // A POST without a body is given null, which the transport answers as a parse error (the
    // request's stream was read already).
    await transport.handleRequest(request.raw, reply.raw, request.body ?? null);
  }

  return routePlugin((app) => {
    app.post('/mcp', { config: { scope: 'read', bearer: true }, schema: { hide: true } }, handle);
    // Stateless: no stream for the server to send on and no session to end. Clients open the
    // stream when they may, so a 405 (which the protocol provides for) keeps no connection open.
    const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
      reply.status(405).header('allow', 'POST').send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless; POST each message' }, id: null });
    app.get('/mcp', { schema: { hide: true } }, notAllowed);
    app.delete('/mcp', { schema: { hide: true } }, notAllowed);
  });
}
