// Document routes: embedding ingest, retrieval, content drill-down, metadata patch,
// deletion and deletion previews. Each validates, calls one service function, shapes.
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { EMBEDDING_DIMENSIONS } from '../../search/vectors.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import {
  ApiKeyHeader,
  DeletePreview,
  DeleteResult,
  Document,
  DocumentFilters,
  DocumentWithPages,
  Envelope,
  IngestReceipt,
  Id,
  Metadata,
  Nullable,
  Page,
  Paragraph,
  bareErrors,
  envelopeErrors,
} from '../schemas.js';

const ExternalIdParam = Type.Object({ external_id: Type.String({ minLength: 1, maxLength: 255 }) });
const DocumentIdParam = Type.Object({ document_id: Id });
const TaskParam = Type.Object({ task_identifier: Type.String({ minLength: 1, maxLength: 255 }) });
const LatestOnlyQuery = Type.Object({ latest_only: Type.Boolean({ default: true }) });

const EmbeddingIngestBody = Type.Object({
  embedding: Type.Array(Type.Number(), { minItems: EMBEDDING_DIMENSIONS, maxItems: EMBEDDING_DIMENSIONS }),
  content: Type.String({ maxLength: 3000 }),
  metadata: Type.Optional(Nullable(Metadata)),
  external_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
});

const tags = ['documents'];

export function documentRoutes(deps: AppDeps): FastifyPluginAsync {
  const documents = deps.services.documents;
  return routePlugin((app) => {

    app.post(
      '/documents/ingest/embedding',
      {
        config: { scope: 'write' },
        schema: {
          operationId: 'ingestEmbedding',
          tags,
          summary: 'Create a document from a precomputed embedding (synchronous)',
          headers: ApiKeyHeader,
          body: EmbeddingIngestBody,
          response: { 201: Envelope(IngestReceipt), ...envelopeErrors },
        },
      },
      async (request, reply) => {
        const receipt = await documents.ingestEmbedding(request.principal.workspaceId, request.body);
        return reply.status(201).send(envelope(receipt));
      },
    );

    app.get(
      '/documents/task/:task_identifier',
      {
        config: { scope: 'read' },
        schema: { operationId: 'getDocumentByTask', tags, summary: 'The document created by a task, with pages', headers: ApiKeyHeader, params: TaskParam, response: { 200: Envelope(DocumentWithPages), ...envelopeErrors } },
      },
      async (request) => envelope(await documents.getByTask(request.principal.workspaceId, request.params.task_identifier)),
    );

    app.get(
      '/documents/internal/:document_id',
      {
        config: { scope: 'read' },
        schema: { operationId: 'getDocument', tags, summary: 'A document by internal id, with pages', headers: ApiKeyHeader, params: DocumentIdParam, response: { 200: Envelope(DocumentWithPages), ...envelopeErrors } },
      },
      async (request) => envelope(await documents.get(request.principal.workspaceId, request.params.document_id)),
    );

    app.get(
      '/documents/external/:external_id',
      {
        config: { scope: 'read' },
        schema: { operationId: 'getDocumentByExternalId', tags, summary: 'The latest version of a document by external id, with pages', headers: ApiKeyHeader, params: ExternalIdParam, response: { 200: Envelope(DocumentWithPages), ...envelopeErrors } },
      },
      async (request) => envelope(await documents.getLatestByExternalId(request.principal.workspaceId, request.params.external_id)),
    );

    app.get(
      '/documents/external/:external_id/versions',
      {
        config: { scope: 'read' },
        schema: { operationId: 'listDocumentVersions', tags, summary: 'All versions of a document by external id, newest first', headers: ApiKeyHeader, params: ExternalIdParam, response: { 200: Envelope(Type.Array(Document)), ...envelopeErrors } },
      },
      async (request) => envelope(await documents.listVersions(request.principal.workspaceId, request.params.external_id)),
    );

    app.get(
      '/documents/content/pages/:page_id',
      {
        config: { scope: 'read', shape: 'bare' },
        schema: {
          operationId: 'getPage',
          tags,
          summary: 'A page (no envelope); with include_paragraphs=true, its paragraphs and sentences',
          headers: ApiKeyHeader,
          params: Type.Object({ page_id: Id }),
          querystring: Type.Object({ include_paragraphs: Type.Boolean({ default: false }) }),
          response: { 200: Page, ...bareErrors },
        },
      },
      async (request) =>
        documents.getPage(request.principal.workspaceId, request.params.page_id, request.query.include_paragraphs),
    );

    app.get(
      '/documents/content/paragraphs/:paragraph_id',
      {
        config: { scope: 'read', shape: 'bare' },
        schema: { operationId: 'getParagraph', tags, summary: 'A paragraph with its sentences (no envelope)', headers: ApiKeyHeader, params: Type.Object({ paragraph_id: Id }), response: { 200: Paragraph, ...bareErrors } },
      },
      async (request) => documents.getParagraph(request.principal.workspaceId, request.params.paragraph_id),
    );

    app.patch(
      '/documents/external/:external_id/metadata',
      {
        config: { scope: 'write' },
        schema: {
          operationId: 'patchDocumentMetadata',
          tags,
          summary: 'Apply a JSON Merge Patch to the metadata of the latest version',
          headers: ApiKeyHeader,
          params: ExternalIdParam,
          body: Type.Object({ metadata: Metadata }),
          response: { 200: Envelope(Type.Object({ status: Type.Boolean(), data: Document })), ...envelopeErrors },
        },
      },
      async (request) =>
        envelope(await documents.patchMetadata(request.principal.workspaceId, request.params.external_id, request.body.metadata)),
    );

    app.delete(
      '/documents/internal/:document_id',
      {
        config: { scope: 'write' },
        schema: { operationId: 'deleteDocument', tags, summary: 'Delete a document by internal id', headers: ApiKeyHeader, params: DocumentIdParam, response: { 200: Envelope(DeleteResult), ...envelopeErrors } },
      },
      async (request) => envelope(await documents.deleteById(request.principal.workspaceId, request.params.document_id)),
    );

    app.delete(
      '/documents/external/:external_id',
      {
        config: { scope: 'write' },
        schema: {
          operationId: 'deleteDocumentByExternalId',
          tags,
          summary: 'Delete the latest version (latest_only=true) or all versions of a document',
          headers: ApiKeyHeader,
          params: ExternalIdParam,
          querystring: LatestOnlyQuery,
          response: { 200: Envelope(DeleteResult), ...envelopeErrors },
        },
      },
      async (request) =>
        envelope(await documents.deleteByExternalId(request.principal.workspaceId, request.params.external_id, request.query.latest_only)),
    );

    app.get(
      '/documents/delete/external/:external_id/preview',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'previewDeleteByExternalId',
          tags,
          summary: 'Preview what the delete by external id would remove',
          headers: ApiKeyHeader,
          params: ExternalIdParam,
          querystring: LatestOnlyQuery,
          response: { 200: Envelope(DeletePreview), ...envelopeErrors },
        },
      },
      async (request) =>
        envelope(
          await documents.previewDeleteByExternalId(request.principal.workspaceId, request.params.external_id, request.query.latest_only),
        ),
    );

    app.post(
      '/documents/delete/preview',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'previewDeleteByFilter',
          tags,
          summary: 'Preview the documents matching metadata and date filters (deletes nothing)',
          headers: ApiKeyHeader,
          body: DocumentFilters,
          response: { 200: Envelope(DeletePreview), ...envelopeErrors },
        },
      },
      async (request) => envelope(await documents.previewDeleteByFilter(request.principal.workspaceId, request.body)),
    );
  });
}
