// The MCP server at /mcp with the SDK's own client against a listening server, on both
// engines: the tools each scope sees, every tool called (structured results matching their
// output schemas, which the SDK's client checks), keys refused, workspaces kept apart, the
// rate limit; and `folio mcp`, the stdio bridge, spawned as a child process.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, call, startTestApp, vector, type TestApp } from '../helpers/app.js';
import { folioArgs, runFolio } from '../helpers/process.js';
import { ENGINES } from '../helpers/stores.js';
import { waitForTask } from '../helpers/tasks.js';

const READ_TOOLS = ['answer', 'get_document', 'get_page', 'list_documents', 'search'];
const ALL_TOOLS = [...READ_TOOLS, 'ingest_text', 'ingest_url'].sort();

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'folio-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured result of a tool call that succeeded, and its text. */
async function ok<T>(client: Client, name: string, args: Record<string, unknown>): Promise<{ data: T; text: string }> {
  const result = await callTool(client, name, args);
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  expect(result.isError, text).toBeFalsy();
  return { data: result.structuredContent as T, text };
}

async function toolError(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await callTool(client, name, args);
  expect(result.isError).toBe(true);
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

interface SearchData {
  results: { document_id: number; external_id: string | null; page_id: number; page_number: number; relevance: number; content: string }[];
}

describe.each(ENGINES)('MCP server on %s', (engine) => {
  let t: TestApp;
  let url: string;
  let source: http.Server;
  let sourceUrl: string;
  let alphaDoc: number;
  const clients: Client[] = [];

  const open = async (headers: Record<string, string>) => {
    const client = await connect(url, headers);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    t = await startTestApp(engine, { env: { FOLIO_URL_ALLOWLIST: '127.0.0.1' } });
    url = await listen(t);
    source = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('Lighthouse keepers log the weather every hour.'));
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/keepers.txt`;
    const ingest = async (key: string, content: string, externalId: string, metadata: Record<string, unknown>) => {
      const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', { key, body: { embedding: vector(content.length), content, external_id: externalId, metadata } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.document_id as number;
    };
    alphaDoc = await ingest(KEYS.write, 'The quarterly harbour report covers tides and cargo volumes.', 'harbour-q1', { team: 'ops' });
    await ingest(KEYS.write, 'Lunch menus for the canteen: soup, bread and salads.', 'menu', { team: 'kitchen' });
    await ingest(KEYS.other, 'Beta workspace secret harbour plans.', 'beta-harbour', { team: 'beta' });
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    await new Promise((resolve) => source?.close(resolve));
    await t?.close();
  });

  it('lists the read tools to a read key and every tool to a write key, each with input and output schemas', async () => {
    const reader = await open(bearer(KEYS.read));
    const readTools = (await reader.listTools()).tools;
    expect(readTools.map((tool) => tool.name).sort()).toEqual(READ_TOOLS);
    const writer = await open({ 'x-api-key': KEYS.write });
    const writeTools = (await writer.listTools()).tools;
    expect(writeTools.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS);
    for (const tool of writeTools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description).toBeTruthy();
    }
    // A tool the scope does not allow is unknown, even when called by name.
    expect(await toolError(reader, 'ingest_text', { text: 'Sneaked in.' })).toMatch(/Unknown tool/);
  });

  it('refuses a missing or unknown key', async () => {
    await expect(connect(url, bearer('not-a-key'))).rejects.toMatchObject({ code: 401, message: expect.stringMatching(/UNAUTHORIZED/) });
    await expect(connect(url, {})).rejects.toMatchObject({ code: 401 });
    // The other tools' key is not taken from another header.
    await expect(connect(url, { authorization: `Basic ${KEYS.read}` })).rejects.toMatchObject({ code: 401 });
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer nope' }, body: '{}' });
    expect(res.status).toBe(401);
    expect((await res.json()).error.error_code).toBe('UNAUTHORIZED');
  });

  it('calls every read tool in the key’s workspace', async () => {
    const reader = await open(bearer(KEYS.read));
    const { data: found, text } = await ok<SearchData>(reader, 'search', { query: 'harbour tides', top_k: 3 });
    expect(found.results[0]).toMatchObject({ document_id: alphaDoc, external_id: 'harbour-q1', page_number: 1 });
    expect(text).toContain('harbour-q1');
    expect(found.results.map((r) => r.external_id)).not.toContain('beta-harbour');
    const filtered = await ok<SearchData>(reader, 'search', { query: 'harbour', metadata_filter: { team: 'kitchen' }, alpha: 0 });
    expect(filtered.data.results).toEqual([]);

    const answered = await ok<{ answer: string; sources: { document_id: number }[] }>(reader, 'answer', { question: 'What does the harbour report cover?' });
    expect(answered.data.answer).toMatch(/tides|cargo/);
    expect(answered.data.sources[0].document_id).toBe(alphaDoc);

    const listed = await ok<{ documents: { id: number; external_id: string; page_count: number; metadata: object }[]; next_cursor: string | null }>(reader, 'list_documents', { limit: 1 });
    expect(listed.data.documents).toHaveLength(1);
    expect(listed.data.next_cursor).toEqual(expect.any(String));
    const rest = await ok<{ documents: { id: number }[]; next_cursor: string | null }>(reader, 'list_documents', { cursor: listed.data.next_cursor });
    expect([...listed.data.documents, ...rest.data.documents].map((d) => d.id)).toContain(alphaDoc);
    expect(rest.data.next_cursor).toBeNull();
    const byExternal = await ok<{ documents: { id: number; metadata: object; page_count: number }[] }>(reader, 'list_documents', { external_id: 'harbour-q1' });
    expect(byExternal.data.documents).toEqual([expect.objectContaining({ id: alphaDoc, metadata: { team: 'ops' }, page_count: 1 })]);

    const doc = await ok<{ id: number; pages: { page_id: number; preview: string }[] }>(reader, 'get_document', { document_id: alphaDoc });
    expect(doc.data.pages[0].preview).toMatch(/^The quarterly harbour report/);
    const page = await ok<{ content: string; document_id: number }>(reader, 'get_page', { page_id: doc.data.pages[0].page_id });
    expect(page.data).toMatchObject({ document_id: alphaDoc, content: 'The quarterly harbour report covers tides and cargo volumes.' });
    expect(page.text).toBe(page.data.content);

    expect(await toolError(reader, 'get_document', { document_id: 'one' })).toMatch(/Invalid arguments/);
    expect(await toolError(reader, 'list_documents', { cursor: 'forged' })).toMatch(/cursor/i);
    expect(await toolError(reader, 'search', { query: 'x', metadata_filter: { n: { $bogus: 1 } } })).toMatch(/unknown operator/);
  });

  it('keeps workspaces apart: another workspace’s ids are not found', async () => {
    const beta = await open(bearer(KEYS.other));
    expect(await toolError(beta, 'get_document', { document_id: alphaDoc })).toMatch(/not found/);
    const doc = await call(t.app, 'GET', `/api/v1/documents/internal/${alphaDoc}`, { key: KEYS.read });
    expect(await toolError(beta, 'get_page', { page_id: doc.json().data.pages[0].id })).toMatch(/not found/);
    const found = await ok<SearchData>(beta, 'search', { query: 'harbour' });
    expect(found.data.results.map((r) => r.external_id)).toEqual(['beta-harbour']);
    const listed = await ok<{ documents: { external_id: string }[] }>(beta, 'list_documents', {});
    expect(listed.data.documents.map((d) => d.external_id)).toEqual(['beta-harbour']);
  });

  it('ingests text and URLs with a write key', async () => {
    const writer = await open(bearer(KEYS.write));
    const stored = await ok<{ task_identifier: string; external_id: string }>(writer, 'ingest_text', {
      text: 'Penguins of the southern colony nest on rocky shores.',
      external_id: 'penguins',
      metadata: { topic: 'birds' },
    });
    expect(stored.data.external_id).toBe('penguins');
    expect(await waitForTask(t.app, stored.data.task_identifier)).toMatchObject({ status: 'COMPLETED' });
    const fetched = await ok<{ task_identifier: string }>(writer, 'ingest_url', { url: sourceUrl, metadata: { topic: 'weather' } });
    expect(await waitForTask(t.app, fetched.data.task_identifier)).toMatchObject({ status: 'COMPLETED' });
    const found = await ok<SearchData>(writer, 'search', { query: 'penguins rocky shores', metadata_filter: { topic: 'birds' } });
    expect(found.data.results[0]).toMatchObject({ external_id: 'penguins' });
    const listed = await ok<{ documents: { file_name: string; content_type: string }[] }>(writer, 'list_documents', { metadata_filter: { topic: 'weather' } });
    expect(listed.data.documents).toEqual([expect.objectContaining({ file_name: 'keepers.txt' })]);
    expect(await toolError(writer, 'ingest_url', { url: 'ftp://example.com/x' })).toBeTruthy();
  });
});

// The limit is the API's hook, the same on either engine.
describe('MCP rate limit', () => {
  let limited: TestApp;
  let limitedUrl: string;

  beforeAll(async () => {
    limited = await startTestApp('pglite', { env: { FOLIO_RATE_LIMIT: '3' } });
    limitedUrl = await listen(limited);
  });
  afterAll(async () => limited?.close());

  it('is rate-limited as the API is', async () => {
    const client = await connect(limitedUrl, bearer(KEYS.read));
    try {
      // initialize and its notification took two requests; the third is the last allowed.
      await client.listTools();
      await expect(client.listTools()).rejects.toMatchObject({ code: 429, message: expect.stringMatching(/RATE_LIMIT_EXCEEDED/) });
    } finally {
      await client.close();
    }
  });
});

describe('folio mcp (stdio bridge)', () => {
  let t: TestApp;
  let url: string;

  beforeAll(async () => {
    t = await startTestApp('pglite');
    url = await listen(t);
    const res = await call(t.app, 'POST', '/api/v1/documents/ingest/embedding', {
      body: { embedding: vector(9), content: 'Orchard notes: the apple trees bloom in April.', external_id: 'orchard' },
    });
    expect(res.statusCode).toBe(201);
  });
  afterAll(async () => t?.close());

  async function bridge(key: string): Promise<Client> {
    const client = new Client({ name: 'folio-test', version: '1.0.0' });
    const [command, ...args] = [process.execPath, ...folioArgs(['mcp'])];
    await client.connect(new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', FOLIO_URL: url, FOLIO_API_KEY: key }, stderr: 'pipe' }));
    return client;
  }

  it('serves the key’s tools over stdio, calling the running service', async () => {
    const reader = await bridge(KEYS.read);
    try {
      expect((await reader.listTools()).tools.map((tool) => tool.name).sort()).toEqual(READ_TOOLS);
      const { data } = await ok<SearchData>(reader, 'search', { query: 'apple trees' });
      expect(data.results[0]).toMatchObject({ external_id: 'orchard', page_number: 1 });
      const page = await ok<{ content: string }>(reader, 'get_page', { page_id: data.results[0].page_id });
      expect(page.data.content).toMatch(/^Orchard notes/);
      expect(await toolError(reader, 'get_document', { document_id: 999_999 })).toMatch(/not found/);
    } finally {
      await reader.close();
    }

    const writer = await bridge(KEYS.write);
    try {
      expect((await writer.listTools()).tools.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS);
      const stored = await ok<{ task_identifier: string }>(writer, 'ingest_text', { text: 'Bridged text about violins.', file_name: 'violins.md' });
      expect(await waitForTask(t.app, stored.data.task_identifier)).toMatchObject({ status: 'COMPLETED' });
      const listed = await ok<{ documents: { file_name: string }[] }>(writer, 'list_documents', { limit: 1 });
      expect(listed.data.documents[0].file_name).toBe('violins.md');
    } finally {
      await writer.close();
    }
  });

  it('refuses to start with an unknown key, saying why', async () => {
    const run = await runFolio(['mcp'], { FOLIO_URL: url, FOLIO_API_KEY: 'not-a-key' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`folio mcp: ${url} did not accept FOLIO_API_KEY: The API key is not valid`);
    await expect(bridge('not-a-key')).rejects.toThrow();
  });
});
