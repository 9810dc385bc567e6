// The MCP server of one API key: the tools its scope allows, listed with their schemas and
// called with checked arguments; a failure is a tool error carrying the API's message.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Compile } from 'typebox/compile';
import type { Scope } from '../config.js';
import { VERSION } from '../version.js';
import { scopeAllows } from '../workspaces/keys.js';
import type { FolioBackend } from './backend.js';
import { TOOLS, type Tool } from './tools.js';

export interface McpServerOptions {
  /** The message a tool error shows for an error thrown by the backend. */
  explain(error: unknown): string;
}

const checks = new Map(TOOLS.map((t) => [t.name, Compile(t.input)]));

function failure(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

async function call(tool: Tool, backend: FolioBackend, args: unknown, options: McpServerOptions): Promise<CallToolResult> {
  const check = checks.get(tool.name)!;
  if (!check.Check(args)) {
    const problems = [...check.Errors(args)].slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`);
    return failure(`Invalid arguments for ${tool.name}: ${problems.join('; ')}`);
  }
  try {
    const { structured, text } = await tool.run(backend, args);
    return { content: [{ type: 'text', text }], structuredContent: structured };
  } catch (error) {
    return failure(options.explain(error));
  }
}

/** A server offering the tools `scope` allows over `backend`; connect it to a transport. */
export function createMcpServer(backend: FolioBackend, scope: Scope, options: McpServerOptions): Server {
  const tools = TOOLS.filter((t) => scopeAllows(scope, t.scope));
  const server = new Server({ name: 'folio', title: 'Folio', version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.input, outputSchema: t.output })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = tools.find((t) => t.name === request.params.name);
    // A tool the key's scope does not allow is as unknown as one that does not exist.
    if (!tool) return failure(`Unknown tool: ${request.params.name}`);
    return call(tool, backend, request.params.arguments ?? {}, options);
  });
  return server;
}
