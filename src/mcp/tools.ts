// The MCP tools: each with the scope it needs, its input and output schemas, and what it
// does through the backend; the result is text for the model and the same data structured.
import { Type, type Static, type TSchema } from 'typebox';
import type { Scope } from '../config.js';
import type { FolioBackend } from './backend.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Metadata = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form metadata: primitives, arrays and nested objects' });
const MetadataFilter = Type.Record(Type.String(), Type.Unknown(), {
  description: 'A metadata filter in the document-query style: {"team": "finance"}, {"year": {"$gte": 2024}}, $and/$or/$in/$contains...',
});
const ExternalId = Type.String({ minLength: 1, maxLength: 255 });
const Id = Type.Integer({ minimum: 1 });

/** How many characters of each page get_document shows; get_page gives the whole text. */
const PREVIEW_CHARS = 200;

export interface ToolResult {
  structured: Record<string, unknown>;
  text: string;
}

export interface Tool<I extends TSchema = TSchema, O extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  scope: Scope;
  input: I;
  output: O;
  run(backend: FolioBackend, input: Static<I>): Promise<ToolResult & { structured: Static<O> }>;
}

const tool = <I extends TSchema, O extends TSchema>(definition: Tool<I, O>): Tool => definition as unknown as Tool;

const json = (value: unknown) => JSON.stringify(value, null, 2);

const SearchInput = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 10000, description: 'What to look for' }),
  top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 5, description: 'Most results' })),
  alpha: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.5, description: '1: by meaning only, 0: by keywords only' })),
  metadata_filter: Type.Optional(MetadataFilter),
});

const SearchOutput = Type.Object({
  results: Type.Array(
    Type.Object({
      document_id: Type.Integer(),
      external_id: Nullable(Type.String()),
      page_id: Type.Integer(),
      page_number: Type.Integer(),
      relevance: Type.Number(),
      content: Type.String(),
    }),
  ),
});

const AnswerInput = Type.Object({
  question: Type.String({ minLength: 1, maxLength: 10000 }),
  metadata_filter: Type.Optional(MetadataFilter),
  top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 5, description: 'Most sources' })),
});

const AnswerOutput = Type.Object({
  answer: Type.String(),
  sources: Type.Array(
    Type.Object({
      document_id: Type.Integer(),
      page_number: Type.Integer(),
      relevance: Type.String(),
      document_metadata: Metadata,
    }),
  ),
});

const ListInput = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 20 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'next_cursor of the previous call' })),
  sort: Type.Optional(Type.Union([Type.Literal('created_at'), Type.Literal('updated_at')])),
  order: Type.Optional(Type.Union([Type.Literal('desc'), Type.Literal('asc')])),
  metadata_filter: Type.Optional(MetadataFilter),
  external_id: Type.Optional(ExternalId),
  latest_only: Type.Optional(Type.Boolean({ default: true, description: 'Only the latest version of each external id' })),
});

const ListedDocument = Type.Object({
  id: Type.Integer(),
  external_id: Nullable(Type.String()),
  version: Type.Integer(),
  file_name: Nullable(Type.String()),
  content_type: Nullable(Type.String()),
  page_count: Type.Integer(),
  metadata: Metadata,
  created_at: Type.String(),
  updated_at: Type.String(),
});

const ListOutput = Type.Object({ documents: Type.Array(ListedDocument), next_cursor: Nullable(Type.String()) });

const DocumentOutput = Type.Object({
  id: Type.Integer(),
  external_id: Nullable(Type.String()),
  file_url: Nullable(Type.String()),
  metadata: Metadata,
  created_at: Type.String(),
  updated_at: Type.String(),
  pages: Type.Array(Type.Object({ page_id: Type.Integer(), page_number: Type.Integer(), characters: Type.Integer(), preview: Type.String() })),
});

const PageOutput = Type.Object({ page_id: Type.Integer(), document_id: Type.Integer(), page_number: Type.Integer(), content: Type.String() });

const Receipt = Type.Object({
  task_identifier: Type.String({ description: 'The task that stores the document; list_documents shows it once the task completes' }),
  file_path: Type.String(),
  external_id: Nullable(Type.String()),
});

/** An ingest's receipt as a tool result. */
function queued({ task_identifier, file_path, external_id }: Static<typeof Receipt>): ToolResult & { structured: Static<typeof Receipt> } {
  return {
    structured: { task_identifier, file_path, external_id },
    text: `Queued as task ${task_identifier}; the document is searchable once the task completes (usually seconds).`,
  };
}

export const TOOLS: readonly Tool[] = [
  tool({
    name: 'search',
    title: 'Search pages',
    description: "Hybrid search over the pages of the workspace's documents: the best pages for a query, with their text.",
    scope: 'read',
    input: SearchInput,
    output: SearchOutput,
    run: async (backend, input) => {
      const { results } = await backend.search({ query: input.query, top_k: input.top_k ?? 5, alpha: input.alpha ?? 0.5, metadata_filter: input.metadata_filter });
      const ids = [...new Set(results.map((r) => r.document_id))];
      const listed = ids.length === 0 ? [] : (await backend.listDocuments({ ids, latest_only: false, limit: ids.length })).documents;
      const externalIds = new Map(listed.map((d) => [d.id, d.external_id]));
      const structured = {
        results: results.map((r) => ({
          document_id: r.document_id,
          external_id: externalIds.get(r.document_id) ?? null,
          page_id: r.id,
          page_number: r.page_number,
          relevance: r.relevance,
          content: r.content,
        })),
      };
      const text =
        structured.results
          .map((r, i) => `[${i + 1}] document ${r.document_id}${r.external_id ? ` (${r.external_id})` : ''}, page ${r.page_number} (page_id ${r.page_id}), relevance ${r.relevance.toFixed(4)}\n${r.content}`)
          .join('\n\n') || 'No page matches.';
      return { structured, text };
    },
  }),
  tool({
    name: 'answer',
    title: 'Answer a question',
    description: "Answers a question from the workspace's documents, citing its sources ([n] refers to sources[n-1]).",
    scope: 'read',
    input: AnswerInput,
    output: AnswerOutput,
    run: async (backend, input) => {
      const { answer, sources } = await backend.answer({ question: input.question, metadata_filter: input.metadata_filter, top_k: input.top_k ?? 5, format: 'PLAIN_TEXT' });
      const structured = { answer, sources: sources.map(({ document_id, page_number, relevance, document_metadata }) => ({ document_id, page_number, relevance, document_metadata })) };
      const cited = structured.sources.map((s, i) => `[${i + 1}] document ${s.document_id}, page ${s.page_number}`).join('\n');
      return { structured, text: cited ? `${answer}\n\nSources:\n${cited}` : answer };
    },
  }),
  tool({
    name: 'list_documents',
    title: 'List documents',
    description: 'Lists the workspace\'s documents, newest first, a page at a time (pass next_cursor back as cursor), optionally by metadata filter or external id.',
    scope: 'read',
    input: ListInput,
    output: ListOutput,
    run: async (backend, input) => {
      const page = await backend.listDocuments({ ...input, limit: input.limit ?? 20 });
      const structured = {
        documents: page.documents.map((d) => ({
          id: d.id,
          external_id: d.external_id,
          version: d.version,
          file_name: d.file_name,
          content_type: d.content_type,
          page_count: d.page_count,
          metadata: d.document_metadata,
          created_at: d.created_at,
          updated_at: d.updated_at,
        })),
        next_cursor: page.next_cursor,
      };
      return { structured, text: json(structured) };
    },
  }),
  tool({
    name: 'get_document',
    title: 'Get a document',
    description: `A document by id: its metadata and its pages, each with its page_id and the first ${PREVIEW_CHARS} characters (get_page gives a page's whole text).`,
    scope: 'read',
    input: Type.Object({ document_id: Id }),
    output: DocumentOutput,
    run: async (backend, input) => {
      const d = await backend.getDocument(input.document_id);
      const structured = {
        id: d.id,
        external_id: d.external_id,
        file_url: d.file_url,
        metadata: d.document_metadata,
        created_at: d.created_at,
        updated_at: d.updated_at,
        pages: d.pages.map((p) => ({ page_id: p.id, page_number: p.page_number, characters: p.content.length, preview: p.content.slice(0, PREVIEW_CHARS) })),
      };
      return { structured, text: json(structured) };
    },
  }),
  tool({
    name: 'get_page',
    title: "Get a page's text",
    description: 'The whole text of a page by its page_id (as search results and get_document give it).',
    scope: 'read',
    input: Type.Object({ page_id: Id }),
    output: PageOutput,
    run: async (backend, input) => {
      const p = await backend.getPage(input.page_id);
      return { structured: { page_id: p.id, document_id: p.document_id, page_number: p.page_number, content: p.content }, text: p.content };
    },
  }),
  tool({
    name: 'ingest_url',
    title: 'Ingest a URL',
    description: 'Fetches the document at an http(s) URL (PDF, DOCX, HTML, text, images) and stores it, asynchronously.',
    scope: 'write',
    input: Type.Object({ url: Type.String({ minLength: 1, maxLength: 2048 }), external_id: Type.Optional(ExternalId), metadata: Type.Optional(Metadata) }),
    output: Receipt,
    run: async (backend, input) => queued(await backend.ingestUrl(input)),
  }),
  tool({
    name: 'ingest_text',
    title: 'Store text as a document',
    description: 'Stores text (plain text or Markdown) with its metadata as a document, asynchronously.',
    scope: 'write',
    input: Type.Object({
      text: Type.String({ minLength: 1, pattern: '\\S' }),
      file_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, default: 'text.txt', description: 'The name it is stored under (.md for Markdown)' })),
      external_id: Type.Optional(ExternalId),
      metadata: Type.Optional(Metadata),
    }),
    output: Receipt,
    run: async (backend, input) => queued(await backend.ingestText({ ...input, file_name: input.file_name ?? 'text.txt' })),
  }),
];
