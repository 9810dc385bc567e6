// Document routes: embedding ingest, retrieval, content drill-down, metadata patch,
// deletion and deletion previews. Each validates, calls one service function, shapes.
import { Type, type Static } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { EmbeddingIngestInput } from '../../documents/ingest-embedding.js';
import { EMBEDDING_DIMENSIONS } from '../../search/vectors.js';
import { mapInSlices } from '../../slices.js';
import { jsonTextIssues, MAX_JSON_DEPTH } from '../../text/json-text.js';
import { routePlugin, type AppDeps } from '../deps.js';
import { envelope } from '../envelope.js';
import { itemFailure } from '../errors.js';
import { compileBodyValidator, jsonBodyParser, located } from '../validation.js';
import {
  ApiKeyHeader,
  DeletePreview,
  DeleteResult,
  Document,
  DocumentFilters,
  DocumentList,
  JsonQueryFilter,
  ListQuery,
  StringEnum,
  DocumentWithPages,
  Envelope,
  IngestReceipt,
  Id,
  Metadata,
  Nullable,
  Page,
  Paragraph,
  ValidationErrorBody,
  bareErrors,
  envelopeErrors,
} from '../schemas.js';

const ExternalIdParam = Type.Object({ external_id: Type.String({ minLength: 1, maxLength: 255 }) });
const DocumentIdParam = Type.Object({ document_id: Id });
const TaskParam = Type.Object({ task_identifier: Type.String({ minLength: 1, maxLength: 255 }) });
const LatestOnlyQuery = Type.Object({ latest_only: Type.Boolean({ default: true }) });

const DocumentListQuery = Type.Object({
  ...ListQuery,
  sort: StringEnum(['created_at', 'updated_at'], { default: 'created_at' }),
  metadata_filter: JsonQueryFilter('A metadata filter as the search takes it'),
  created_at_filter: JsonQueryFilter('A created_at filter ({"$gte": "2026-01-01T00:00:00"})'),
  updated_at_filter: JsonQueryFilter('An updated_at filter'),
  external_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  ids: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}(,[1-9][0-9]{0,15}){0,999}$', description: 'Only these documents: ids separated by commas, at most 1,000' })),
  latest_only: Type.Boolean({ default: true, description: 'Only the latest version of each external_id' }),
});

const EmbeddingIngestBody = Type.Object({
  embedding: Type.Array(Type.Number(), { minItems: EMBEDDING_DIMENSIONS, maxItems: EMBEDDING_DIMENSIONS }),
  content: Type.String({ maxLength: 3000 }),
  metadata: Type.Optional(Nullable(Metadata)),
  external_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
});

/** Documents in one batch of the embedding ingest. */
const MAX_BATCH_DOCUMENTS = 1000;

/**
 * The batch route's body limit, in multiples of the app's (FOLIO_BODY_LIMIT_BYTES, 1 MiB by
 * default, which every other JSON route takes): 64 MiB fits 1,000 items of 1536 numbers written
 * at full precision (about 32 KB each) with their content and metadata.
 */
const BATCH_BODY_LIMIT_FACTOR = 64;

// Each item is checked on its own, against the single route's schema: a broken item is
// answered in its place, and the others are stored.
const EmbeddingBatchBody = Type.Object({
  documents: Type.Array(
    Type.Record(Type.String(), Type.Unknown(), {
      description: `A document as the body of ingestEmbedding takes it: embedding (${EMBEDDING_DIMENSIONS} numbers), content (at most 3,000 characters), metadata?, external_id?`,
    }),
    { minItems: 1, maxItems: MAX_BATCH_DOCUMENTS },
  ),
});

const StoredDocument = Type.Object({ ...IngestReceipt.properties, document_id: Type.Integer() });

const BatchItemError = Type.Object({
  error_code: Type.String({ description: 'VALIDATION_ERROR for a 422 (its problems in detail); otherwise the error code the single ingest answers' }),
  message: Type.String(),
  detail: Type.Optional(ValidationErrorBody.properties.detail),
});

const EmbeddingBatchResult = Type.Object({
  results: Type.Array(
    Type.Union([
      Type.Object({
        index: Type.Integer({ description: "The item's position in documents" }),
        status: Type.Integer({ description: '201: stored' }),
        document: StoredDocument,
      }),
      Type.Object({
        index: Type.Integer({ description: "The item's position in documents" }),
        status: Type.Integer({ description: 'The status the single ingest would have answered for this item alone (422 for a broken item)' }),
        error: BatchItemError,
      }),
    ]),
    { description: 'One result per item, in the order of documents' },
  ),
  created: Type.Integer({ description: 'Items stored' }),
  failed: Type.Integer({ description: 'Items not stored' }),
});

type BatchResult = Static<typeof EmbeddingBatchResult>['results'][number];

const tags = ['documents'];

/** The embedding ingest of many documents in one request (its own plugin: it parses its body itself). */
function embeddingBatchRoute(deps: AppDeps): FastifyPluginAsync {
  const documents = deps.services.documents;
  const validateItem = compileBodyValidator(EmbeddingIngestBody);
  const single = { body: EmbeddingIngestBody };
  return routePlugin((app) => {
    // Strings the store cannot hold, and nesting deeper than a body may have, refuse the item
    // that holds them, not the batch: each item is checked below as the single route checks
    // its body. The batch as a whole may nest twice as deep as a body; past that it is refused.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser({ maxDepth: 2 * MAX_JSON_DEPTH, checkText: false }));

    app.post(
      '/documents/ingest/embedding/batch',
      {
        config: { scope: 'write' },
        bodyLimit: deps.config.bodyLimit * BATCH_BODY_LIMIT_FACTOR,
        schema: {
          operationId: 'ingestEmbeddings',
          tags,
          summary: `Create up to ${MAX_BATCH_DOCUMENTS.toLocaleString('en')} documents from precomputed embeddings in one request (synchronous)`,
          description:
            'Each item of documents is what ingestEmbedding takes, checked and stored on its own: the answer (200) holds one ' +
            "result per item, in order, with the item's document as ingestEmbedding answers it (status 201) or the error it " +
            'would have answered for that item alone. A broken item does not keep the others from being stored. Every stored ' +
            `item is committed and searchable when the answer is sent. The body limit is ${BATCH_BODY_LIMIT_FACTOR} times that of ` +
            `other JSON routes (FOLIO_BODY_LIMIT_BYTES; ${BATCH_BODY_LIMIT_FACTOR} MiB by default). Items that share an ` +
            'external_id become versions in their order.',
          headers: ApiKeyHeader,
          body: EmbeddingBatchBody,
          response: { 200: Envelope(EmbeddingBatchResult), ...envelopeErrors },
        },
      },
      async (request) => {
        const items = request.body.documents;
        const results: BatchResult[] = new Array(items.length);
        const valid: { index: number; input: EmbeddingIngestInput }[] = [];
        // In the single route's order: the text of the JSON, then its schema; in slices, as a
        // thousand items take a while.
        const checks = await mapInSlices(items, (item) => {
          const issues = jsonTextIssues(item, []);
          return issues.length > 0 ? located('body', issues) : validateItem(item);
        });
        checks.forEach((invalid, index) => {
          if (invalid) results[index] = { index, ...itemFailure(invalid, single, request) };
          else valid.push({ index, input: items[index] as unknown as EmbeddingIngestInput });
        });
        const outcomes = await documents.ingestEmbeddings(request.principal.workspaceId, valid.map((v) => v.input));
        let created = 0;
        outcomes.forEach((outcome, i) => {
          const { index } = valid[i];
          if (outcome.ok) created++;
          results[index] = outcome.ok ? { index, status: 201, document: outcome.receipt } : { index, ...itemFailure(outcome.error, single, request) };
        });
        return envelope({ results, created, failed: items.length - created });
      },
    );
  });
}

export function documentRoutes(deps: AppDeps): FastifyPluginAsync {
  const documents = deps.services.documents;
  return routePlugin(async (app) => {

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

    await app.register(embeddingBatchRoute(deps));

    app.get(
      '/documents',
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'listDocuments',
          tags,
          summary: 'List documents a page at a time, newest first, under the search filters',
          description:
            'Keyset paging: pass next_cursor back as cursor (with the same sort and order) until it is null. Documents added or ' +
            'deleted meanwhile do not shift the pages: each document that exists throughout is listed exactly once. Sorted by ' +
            'updated_at, a document whose metadata changes meanwhile moves. A cursor not issued by this listing is a 422.',
          headers: ApiKeyHeader,
          querystring: DocumentListQuery,
          response: { 200: Envelope(DocumentList), ...envelopeErrors },
        },
      },
      async (request) => envelope(await documents.list(request.principal.workspaceId, request.query)),
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
