// `folio mcp`: the MCP tools over stdio for desktop clients, bridged to a running Folio. The
// key's scope decides the tools, as it does at /mcp; stdout carries only the protocol.
import { FolioClient } from '@folio/client';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigError } from '../config.js';
import { clientBackend } from './client-backend.js';
import { createMcpServer } from './server.js';

export async function serveStdio(baseUrl: string, apiKey: string): Promise<void> {
  const client = new FolioClient({ baseUrl, apiKey });
  // Checked before serving: a wrong URL or key is told at once, not at the first tool call.
  const { scope } = await client.currentKey().catch((error: unknown) => {
    throw new ConfigError(`folio mcp: ${baseUrl} did not accept FOLIO_API_KEY: ${error instanceof Error ? error.message : String(error)}`);
  });
  const explain = (error: unknown) => (error instanceof Error ? error.message : String(error));
  const server = createMcpServer(clientBackend(client), scope, { explain });
  await server.connect(new StdioServerTransport());
}
